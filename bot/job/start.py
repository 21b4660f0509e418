"""The one step from a job's spec to the context the pipeline runs, for the service's worker and the
Action alike. They differ only in what they pass: the service a queued job (its id, its tracking
comment, who stopped it), the Action none. The job holds the spec itself: its facts are read from
it, never copied.

    ctx = context_for(spec, thread, surface, settings=settings)
"""
from __future__ import annotations

from bot.config import Settings
from bot.github.client import Thread
from bot.intake.spec import JobSpec
from bot.job.context import Job, Queued
from bot.job.conversations import thread_key
from bot.job.modes import GitHubMode
from bot.job.tracking import Surface

__all__ = ["Queued", "context_for"]


def context_for(spec: JobSpec, thread: Thread, surface: Surface, *, settings: Settings,
                queued: Queued | None = None) -> Job:
    return Job(spec=spec, conversation=queued.conversation if queued else thread_key(spec.repo, spec.number),
               surface=surface, mode=GitHubMode(thread), settings=settings,
               progress_interval_s=settings.number("BOT_PROGRESS_INTERVAL"), queued=queued)
