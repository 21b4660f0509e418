"""What one job holds while it runs, made once per job, and the signal between it and its worker.

    run = JobRun.begin(db, ctx)             # pipeline.run makes one per job
    run.recorder.record(...)                # the job's one recorder, holding the job's secrets
    run.secrets.add(token)                  # masked from now on in the record, logs and comments
    await run.tracking.note("...")          # the job's one tracking comment

    signal = JobSignal()                    # the worker's, passed to pipeline.run as `cancel`
    signal.stop(by="alice")                 # `@bot stop`: the job ends, naming who stopped it
    signal.ended_because                    # why the job ended early, for the worker's outcome line

The worker never writes into a running job: it stops it through the signal, and reads back only
what the job put there.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.db import Database
from bot.job.tracking import TrackingComment
from bot.record.recorder import Recorder
from bot.record.secrets import Secrets

if TYPE_CHECKING:
    from bot.job.context import Job


class JobSignal(asyncio.Event):
    """Set when the job must stop; `by` is who asked (their permission was checked), None for the
    service itself (a shutdown, a lost lease)."""

    def __init__(self) -> None:
        super().__init__()
        self.by: str | None = None
        self.ended_because: str | None = None

    def stop(self, by: str | None = None) -> None:
        if not self.is_set():
            self.by = by
        self.set()

    def end_because(self, why: str) -> None:
        """The job ends early for a reason the operator reads in the outcome line ("no credentials")."""
        self.ended_because = why


def stopped_by(cancel: asyncio.Event) -> str | None:
    """Who stopped the job, when its stop came through a `JobSignal` that names one."""
    return cancel.by if isinstance(cancel, JobSignal) else None


def end_because(cancel: asyncio.Event, why: str) -> None:
    if isinstance(cancel, JobSignal):
        cancel.end_because(why)


@dataclass
class JobRun:
    """The job's database, its one set of secrets, its one recorder (which holds them) and its one
    tracking comment: where an earlier attempt's comment is (the queue's), edited in place."""

    db: Database
    secrets: Secrets
    recorder: Recorder
    tracking: TrackingComment

    @classmethod
    def begin(cls, db: Database, ctx: Job, secrets: Secrets | None = None) -> JobRun:
        """`secrets`: the entry point's, when it masks with the job's after the job (`bot run`)."""
        secrets, queued = secrets if secrets is not None else Secrets(), ctx.queued
        secrets.follow(lambda: ctx.token)  # a git error message must not leak it, nor a renewed one
        tracking = TrackingComment(ctx.surface, lambda: secrets, interval_s=ctx.progress_interval_s,
                                   handle=queued.tracking_handle if queued else None,
                                   on_created=queued.on_tracking_created if queued else None)
        return cls(db, secrets, Recorder(db, secrets=secrets), tracking)
