"""The service's side of the schedules: a claimed slot's job goes into the queue in the claim's own
transaction, and each worker pool evaluates the schedules every BOT_SCHEDULE_INTERVAL seconds.

    due = tick(db, at)                                  # `bot automations tick` and the ticker
    ticker = Ticker(db, 60, on_queued=pool.wake).start()   # started and stopped by the worker pool

Several pools ticking at once run each slot once: the claim decides (bot/automations/runs.py). A
slot claimed late (the service was down, a tick was slow) still runs, once.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable

from bot.automations import schedule, scheduled_job
from bot.db import Database
from bot.intake.spec import JobSpec
from bot.service import store
from bot.service.periodic import Periodic

log = logging.getLogger("bot.service.schedules")


def tick(db: Database, at: dt.datetime) -> list[tuple[str, str, str]]:
    """The slots claimed as of `at`, each with its job queued: [(repo, automation, slot)]."""
    return schedule.tick(db, at, queue)


def queue(conn: Database, spec: JobSpec) -> int:
    """The slot's job, inside the transaction that claims the slot (a failure rolls the claim back)."""
    name, slot = scheduled_job.slot_of(spec)
    job_id = store.enqueue_delivery(conn, delivery_id=scheduled_job.delivery_of(spec.repo, name, slot),
                                    event=scheduled_job.KIND, action=None, kind="episode",
                                    conversation=scheduled_job.queue_key(conn, spec.repo, name), spec=spec.to_dict())
    if job_id is None:  # only if the slot's job were queued without its claim
        raise RuntimeError(f"the job of {spec.repo} {name} {slot} is queued already")
    return job_id


def enqueue(conn: Database, delivery_id: str, conversation: str, spec: JobSpec) -> int | None:
    """A run an automation's event job queues in another thread, inside the caller's transaction: an
    alert's run in its automation's issue, a fork's autofix on its pull request. None when that
    delivery id has its job already."""
    return store.enqueue_delivery(conn, delivery_id=delivery_id, event=spec.event or "", action=spec.action,
                                  kind="episode", conversation=conversation, spec=spec.to_dict())


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Ticker(Periodic):
    """`tick` every `interval_s` seconds (the first at once); `on_queued` when it queued a job. 0: none.
    With `opener`, each tick runs on a thread, on a connection of the ticker's own that `opener`
    makes once: a process's first tick parses every repository's bot.yml (seconds, with thousands
    of automations) and must not hold the event loop that answers webhooks. Without it, the tick
    runs on `db` on the loop (a test's, or a tool's)."""

    def __init__(self, db: Database, interval_s: float, on_queued: Callable[[], None],
                 now: Callable[[], dt.datetime] = utc_now, opener: Callable[[], Database] | None = None):
        super().__init__(interval_s)
        self.db, self.on_queued, self.now, self.opener = db, on_queued, now, opener
        self._own: Database | None = None
        self._in_flight: asyncio.Future[list[tuple[str, str, str]]] | None = None

    async def _tick(self) -> list[tuple[str, str, str]]:
        if self.opener is None:
            return tick(self.db, self.now())
        if self._own is None:
            self._own = await asyncio.to_thread(self.opener)
        self._in_flight = asyncio.ensure_future(asyncio.to_thread(tick, self._own, self.now()))
        return await asyncio.shield(self._in_flight)  # a stop lets the thread's tick end before closing

    async def stop(self) -> None:
        await super().stop()
        if self._in_flight is not None:
            await asyncio.gather(self._in_flight, return_exceptions=True)
        if self._own is not None:
            self._own.close()
            self._own = None

    async def _loop(self) -> None:
        while True:
            try:
                if await self._tick():
                    self.on_queued()
            except Exception:  # a failed tick (a locked database) must not stop the next one
                log.exception("evaluating the schedules failed")
            await asyncio.sleep(self.interval_s)
