"""Workers: claim jobs from the queue, keep their leases alive, run them, honour `@bot stop`.

A job is an episode (its pipeline checks the requester's permission), a plain reply (help,
status, a notice), or a command that acts (`@bot stop`, `@bot pause`, bot/service/commands.py:
checked first). An automation's run or a push-triggered review in a paused thread ends silently
before it starts (bot/automations/pauses.py).

Up to BOT_WORKERS jobs run at once (different conversations; the queue serializes each one).
On shutdown: stop claiming, give running jobs `grace_s`, then cancel the rest and leave them
leased, so the next start reclaims them once the lease expires and edits the same comment.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import httpx

from bot import logs, metrics, retry
from bot.automations import config_read, event_run, pauses, scheduled_job, scheduled_run
from bot.config import Settings
from bot.db import Database, connect
from bot.errors import BotError
from bot.github.client import Thread, TokenCache, bot_logins, installation_thread, transient, with_retries
from bot.intake import automation_event, config_event
from bot.intake.spec import JobSpec
from bot.job import gate, pipeline
from bot.job.context import Job
from bot.job.conversations import thread_key
from bot.job.run import JobSignal
from bot.job.start import Queued, context_for
from bot.job.tracking import GitHubSurface, TrackingComment
from bot.record.recorder import Recorder
from bot.service import commands, queue, schedules, store, wakeup
from bot.service.reply_texts import reply_text

log = logging.getLogger("bot.service.worker")
MAX_ATTEMPTS = 3
POLL_S = 0.5


class NotYet(BotError):
    """GitHub could not be reached before anything of the job was done: run it again later."""


class WorkerPool:
    def __init__(self, db: Database, settings: Settings, size: int | None = None):
        self.db, self.settings, self.size = db, settings, size or settings.workers
        self.lease_s = settings.number("BOT_LEASE_SECONDS")
        self.owner = wakeup.owner_id()
        self.tokens = TokenCache.of(settings)
        self.running: dict[int, asyncio.Task[None]] = {}
        self.surfaces: dict[int, GitHubSurface] = {}  # of the running episodes, muted if taken over
        self.signals: dict[int, JobSignal] = {}  # of the running jobs: their stop, and why they ended early
        self.started_at: dict[int, float] = {}  # monotonic, per running job: its outcome line's time taken
        self._wake = asyncio.Event()
        self._stopping = False
        self._loop_task: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None
        self.last_claim_at: float | None = None  # monotonic; /readyz: the workers are claiming
        self.poll_s = wakeup.poll_seconds(db)  # slow on PostgreSQL: LISTEN/NOTIFY wakes the pool
        self._wakeup = wakeup.Wakeup(self)
        # the schedules are evaluated where jobs run: every pool ticks, the claim runs each slot once
        self.ticker = schedules.Ticker(db, settings.number("BOT_SCHEDULE_INTERVAL"), self.wake,
                                       opener=lambda: connect(settings=settings, migrate=False))

    def wake(self) -> None:
        """A job was queued: look now instead of at the next poll."""
        self._wake.set()

    async def start(self) -> None:
        self._client = httpx.AsyncClient(timeout=30)
        self._loop_task = asyncio.create_task(self._claim_loop())
        self._wakeup.start()
        self.ticker.start()

    async def stop(self, grace_s: float = 20.0) -> None:
        self._stopping = True
        self._wake.set()
        await self.ticker.stop()
        if self._loop_task:
            await self._loop_task
        if self.running:
            log.info("waiting up to %.0f s for %d running job(s)", grace_s, len(self.running))
            _, pending = await asyncio.wait(list(self.running.values()), timeout=grace_s)
            for task in pending:  # left leased: the next start picks them up
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._client:
            await self._client.aclose()
        await self._wakeup.stop()

    async def _claim_loop(self) -> None:
        while not self._stopping:
            self._wake.clear()  # before claiming, so a job queued meanwhile is not missed
            self.last_claim_at = time.monotonic()
            job = None
            if len(self.running) < self.size:
                try:
                    job = queue.claim(self.db, self.owner, self.lease_s, busy=tuple(self.running))
                except Exception:  # a locked or broken database must not end the claim loop
                    log.exception("claiming a job failed; retrying")
            if job is None:
                try:
                    await asyncio.wait_for(self._wake.wait(), self.poll_s)
                except TimeoutError:
                    pass
                continue
            task = asyncio.create_task(self._handle(job))
            self.running[job.id] = task
            task.add_done_callback(self._when_done(job.id))

    def _when_done(self, job_id: int) -> Callable[[asyncio.Task[None]], None]:
        return lambda _task: self._done(job_id)

    def _done(self, job_id: int) -> None:
        self.running.pop(job_id, None)
        self.surfaces.pop(job_id, None)
        self.signals.pop(job_id, None)
        self.started_at.pop(job_id, None)
        self._wake.set()

    async def _handle(self, job: queue.Job) -> None:
        self.started_at[job.id] = time.monotonic()
        cancel = self.signals[job.id] = JobSignal()
        if job.cancel_requested:  # `@bot stop` arrived while it was queued
            cancel.stop(job.stopped_by)
        with logs.job_context(job.id, job.conversation):
            await self._handle_in_context(job, cancel)

    async def _handle_in_context(self, job: queue.Job, cancel: JobSignal) -> None:
        heartbeat = asyncio.create_task(self._heartbeat(job, cancel))
        try:
            status = await self._run(job, cancel)
            self._finish(job, status)
        except asyncio.CancelledError:
            log.info("job %s interrupted by shutdown; left leased", job.id)
            raise
        except NotYet as exc:
            if job.attempts >= MAX_ATTEMPTS:
                log.error("job %s given up after its last attempt (%d of %d): GitHub unreachable (%s)",
                          job.id, job.attempts, MAX_ATTEMPTS, exc.__cause__)
                metrics.JOBS_GIVEN_UP.labels(job.kind).inc()
                self._finish(job, "failed", error=f"GitHub unreachable: {exc.__cause__}")
            else:  # left leased: claimed again when the lease runs out, as after a crash
                log.warning("job %s: GitHub unreachable (%s); trying again later", job.id, exc.__cause__)
        except Exception as exc:
            log.exception("job %s failed outside the pipeline", job.id)
            self._finish(job, "failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            heartbeat.cancel()

    def _finish(self, job: queue.Job, status: str, error: str | None = None) -> None:
        if queue.finish(self.db, job.id, status, error=error, owner=self.owner):
            metrics.JOBS_FINISHED.labels(job.kind, status).inc()
            self._log_outcome(job, status, error)

    def _log_outcome(self, job: queue.Job, status: str, error: str | None) -> None:
        """One line per finished job: what came of it, in which thread, and how long it took."""
        signal = self.signals.get(job.id)
        if signal is not None and signal.ended_because:
            outcome = f"ended with {signal.ended_because}"
        elif status == "cancelled":
            outcome = f"stopped by @{job.stopped_by}" if job.stopped_by else "stopped"
        else:
            outcome = "answered" if status == "done" else "failed"
        taken = time.monotonic() - self.started_at.get(job.id, time.monotonic())
        thread = f"{job.spec.repo}#{job.spec.number}"
        level = logging.INFO if status != "failed" else logging.WARNING
        log.log(level, "job %s for %s %s in %.1f s%s", job.id, thread, outcome, taken, f": {error}" if error else "")

    async def _heartbeat(self, job: queue.Job, cancel: JobSignal) -> None:
        """Renew the lease and watch for a stop request."""
        ticks = 0
        while True:
            await asyncio.sleep(POLL_S)
            ticks += 1
            try:
                ticks = self._beat(job, cancel, ticks)
            except Exception:  # keep beating: a transient database error must not drop the lease
                log.exception("heartbeat of job %s failed", job.id)

    def _beat(self, job: queue.Job, cancel: JobSignal, ticks: int) -> int:
        if ticks * POLL_S >= self.lease_s / 4:
            ticks = 0
            if not queue.renew(self.db, job.id, self.owner, self.lease_s):
                log.warning("lost the lease of job %s to another worker; stopping it here", job.id)
                self._abandon(job.id)
                return ticks
        row = store.get_job(self.db, job.id)
        if row and row["cancel_requested"] and not cancel.is_set():
            log.info("job %s: stop requested by @%s", job.id, row.get("stopped_by"))
            job.stopped_by = row.get("stopped_by")
            cancel.stop(job.stopped_by)
        return ticks

    def _abandon(self, job_id: int) -> None:
        """The job is another worker's now: stop it here without a word in its thread (no false
        "stopped"), and leave its row to the new owner."""
        surface = self.surfaces.get(job_id)
        if surface is not None:
            surface.mute()
        task = self.running.get(job_id)
        if task is not None:
            task.cancel()

    async def _run(self, job: queue.Job, cancel: asyncio.Event) -> str:
        spec = job.spec
        if job.attempts > 1:
            Recorder(self.db).end_interrupted(str(job.id))  # the earlier attempt's run: its worker died
            await let_earlier_writes_land(job, self.settings.number("BOT_POST_SETTLE_SECONDS"))
        try:
            assert self._client is not None, "the pool is started before it runs jobs"
            if spec.installation_id is None:  # the intake queues none such: a row from elsewhere
                raise ValueError("the job names no installation to act as")
            thread = await installation_thread(self._client, self.tokens, spec.installation_id,
                                               spec.repo, spec.number, bot_logins(self.settings))
            if job.kind == "reply":  # safe to repeat: its comment is found by its marker
                await self._reply(job, thread)
                return "done"
            if commands.is_command(job.kind):  # checked before it acts; safe to repeat too
                await commands.run(self.db, job, thread, lambda text: self._post_once(job, thread, text),
                                   self.settings.number("BOT_OUTSIDER_REPLY_WINDOW"), self.settings.handle)
                return "done"
            if spec.automatic and spec.automatic.kind == config_event.KIND:  # .github/bot.yml read, stored or refused
                return await config_read.run(self.db, job.id, spec, thread)
        except Exception as exc:
            if transient(exc):
                raise NotYet(type(exc).__name__) from exc
            raise
        if job.attempts > MAX_ATTEMPTS:
            log.error("job %s given up after its last attempt: the service stopped %d times while running it",
                      job.id, MAX_ATTEMPTS)
            metrics.JOBS_GIVEN_UP.labels(job.kind).inc()
            ctx = self._context(job, thread)
            await TrackingComment(ctx.surface, lambda: [], handle=job.tracking_comment_id).finish(
                f"❌ Gave up after {MAX_ATTEMPTS} attempts: the service stopped while running this request.")
            return "failed"
        if spec.automatic and (held := pauses.holds(self.db, spec)):  # `@bot pause`: before any slot is claimed
            log.info("job %s: %s", job.id, held)  # silent in the thread: nobody asked
            return "done"
        if spec.automatic and spec.automatic.kind == scheduled_job.KIND:  # in the automation's own issue
            return await self._scheduled(job, thread, cancel)
        if spec.automatic and spec.automatic.kind == automation_event.KIND:  # read, matched and run there
            return await self._automations(job, thread, cancel)
        if spec.automatic and (why := await gate.refused(thread, spec.automatic, spec.author)):
            log.info("job %s: automatic trigger not run: %s", job.id, why)  # silent: nobody asked
            status = "done"
        else:
            status = await pipeline.run(self.db, self._context(job, thread), cancel)
        riding = automation_event.riding(spec.event, spec.action, spec.automatic.detail) if spec.automatic else None
        if riding is not None and status != "cancelled":  # the event's automations, after the trigger it made
            automated = await self._automations(job, thread, cancel, riding)
            status = automated if status == "done" else status
        return status

    async def _automations(self, job: queue.Job, thread: Thread, cancel: asyncio.Event,
                           detail: str | None = None) -> str:
        """An event's automations (bot/automations/event_run.py), each in the event's thread or, for an
        autofix, in its pull request's (`on`), whose key is the session's."""
        async def thread_of(number: int) -> Thread:
            assert self._client is not None, "the pool is started before it runs jobs"
            return await installation_thread(self._client, self.tokens, job.spec.installation_id or 0, job.spec.repo,
                                             number, bot_logins(self.settings))

        def make(each: JobSpec, marker: str, on: Thread | None) -> Job:
            return self._context(job, on or thread, each, marker,
                                 conversation=thread_key(each.repo, each.number) if on is not None else None)
        return await event_run.run(self.db, job.id, job.spec, thread, cancel, make, thread_of=thread_of, detail=detail,
                                   queue_job=schedules.enqueue,
                                   account_cap=int(self.settings.number("BOT_AUTOMATION_ACCOUNT_RUNS_PER_HOUR")))

    async def _scheduled(self, job: queue.Job, thread: Thread, cancel: asyncio.Event) -> str:
        """A scheduled automation's slot, in its issue's thread (whose key is the session's)."""
        installation_id = job.spec.installation_id or 0

        async def issue_thread(number: int) -> Thread:
            assert self._client is not None, "the pool is started before it runs jobs"
            return await installation_thread(self._client, self.tokens, installation_id, job.spec.repo, number,
                                             bot_logins(self.settings))

        try:
            return await scheduled_run.run(self.db, job.spec, thread, cancel, issue_thread=issue_thread,
                                           make_context=lambda each, on: self._context(
                                               job, on, each, conversation=thread_key(each.repo, each.number)))
        except Exception as exc:  # opening its issue failed: the queue runs it again later
            if transient(exc):
                raise NotYet(type(exc).__name__) from exc
            raise

    def _context(self, job: queue.Job, thread: Thread, spec: JobSpec | None = None,
                 marker: str | None = None, conversation: str | None = None) -> Job:
        """`spec` and `marker`: one automation's run of the job (bot/automations/event_run.py), with
        its own comment: the job's tracking comment id is not remembered for it. `conversation`: the
        thread that keys the session when it is not the queue's (a scheduled run's issue)."""
        def remember(comment_id: int) -> None:
            store.update_job(self.db, job.id, tracking_comment_id=comment_id)

        spec = spec or job.spec
        surface = GitHubSurface(thread, spec.review_thread, marker or job_marker(job.id),
                                look_first=job.attempts > 1)
        self.surfaces[job.id] = surface
        queued = Queued(job.id, conversation or job.conversation,
                        tracking_handle=None if marker else job.tracking_comment_id,
                        on_tracking_created=None if marker else remember)
        return context_for(spec, thread, surface, queued=queued, settings=self.settings)

    async def _reply(self, job: queue.Job, thread: Thread) -> None:
        spec = job.spec
        if spec.reply == "stop":  # queued by an intake from before stops were checked
            await with_retries(lambda: thread.react(dict(spec.target or {}), "+1"))
            if spec.stopped_job:
                return  # the stopped job's own tracking comment says so
        text = reply_text(self.db, spec, spec.reply or "help", job.conversation, self.settings)
        await self._post_once(job, thread, text)

    async def _post_once(self, job: queue.Job, thread: Thread, text: str) -> None:
        """The job's one comment in the thread, never twice (after a crash it is looked up first)."""
        review_thread = job.spec.review_thread
        if job.tracking_comment_id:  # posted before a crash: never twice
            return
        marker = job_marker(job.id)
        comment_id = await thread.create_comment(f"{text}\n{marker}", review_thread=review_thread,
                                                 marker=marker, look_first=job.attempts > 1)
        store.update_job(self.db, job.id, tracking_comment_id=comment_id)


async def let_earlier_writes_land(job: queue.Job, settle: float) -> None:
    """A job taken over from a worker that died (or never reached GitHub) may have a write of that
    worker still in flight: GitHub finishes a request whose client is gone. A comment POST landing
    after this attempt looked for its marker is a second answer (the kill -9 double answer of issue
    16); a progress edit landing after this attempt's final edit turns the answer back into
    "working". The earlier worker sent nothing after its lease ran out, and the lease had run out
    when this worker claimed the job; so once BOT_POST_SETTLE_SECONDS (longer than GitHub lets a
    request run) have passed since the claim, every earlier write has landed or never will."""
    log.info("job %s: attempt %d; waiting %.0f s for an earlier attempt's writes to land", job.id, job.attempts,
             settle)
    await retry.sleep(settle)  # the one place waits go through (tests replace it)


def job_marker(job_id: int) -> str:
    """Hidden in every comment of a job, so a retry finds what an earlier attempt posted."""
    return f"<!-- bot:job {job_id} -->"
