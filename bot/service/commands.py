"""The commands the worker runs that act on a thread but are not episodes: `@bot stop`, `@bot pause`
(which also stops what it holds back that is under way there) and `@bot resume`
(bot/automations/pauses.py).

Each passes the one run-time permission check (bot/job/authority.py: GitHub's collaborator
permission against `.github/bot.yml` of the default branch) before it does anything; the
payload's association only got it past the intake. A job kind without a handler here is refused,
never run unchecked, so a command added later cannot skip the check. The thread is told who
really acted: the stopped episode's own comment names the stopper, not its requester.

    await run(db, job, thread, post, window_s, handle)   # the worker: every job but an episode or a reply
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import httpx
from gidgethub import HTTPException

from bot.automations import pauses
from bot.db import Database
from bot.github.client import Thread, transient, with_retries
from bot.intake.grammar import ActingKind
from bot.job import authority, gate, replies
from bot.job.authority import Verdict
from bot.service import queue, reply_cap, store
from bot.workspace.repo_config import ConfigError, RepoConfig

log = logging.getLogger("bot.service.commands")
# (…, the bot's handle for the answer's words) -> the line to post in the thread, or None
Handler = Callable[[Database, queue.Job, Thread, Verdict, str], Awaitable[str | None]]


async def run(db: Database, job: queue.Job, thread: Thread, post: Callable[[str], Awaitable[None]],
              outsider_window_s: float, handle: str) -> None:
    """Check, then act; `post(text)` answers in the thread (once, even when run again), a refusal
    at most once per thread per `outsider_window_s`; `handle`: the mention the bot answers to."""
    spec = job.spec
    try:  # a command acts now: GitHub is asked anew, not the few-minute cache
        verdict = await authority.check(thread, spec.author, await _default_branch_config(thread), fresh=True)
    except (httpx.TransportError, HTTPException) as exc:
        if transient(exc):
            raise  # the worker tries the job again later
        await post(replies.permission_check_failed(spec.author, spec.repo, exc, transient=False))
        return
    handler = next((each for kind, each in HANDLERS.items() if kind == job.kind), None)  # the queue's kind is text
    if handler is None:
        log.error("job %s: no handler for the command %r; refused", job.id, job.kind)
        text: str | None = replies.unknown_command(job.kind)
    elif not verdict.allowed:
        log.info("job %s: @%s (%s) may not %s here", job.id, verdict.login, verdict.permission, job.kind)
        # a reply to someone without permission: at most one per thread per window, like an outsider's
        told = store.write(db, lambda conn: reply_cap.claim(conn, job.conversation, outsider_window_s))
        text = replies.not_allowed_to(verdict.login, job.kind, verdict.levels) if told else None
    else:
        text = await handler(db, job, thread, verdict, handle)
    if text:
        await post(text)


async def _default_branch_config(thread: Thread) -> RepoConfig:
    try:
        return await gate.default_branch_config(thread)
    except ConfigError as exc:  # the defaults (write, maintain, admin) still decide
        log.warning("%s; deciding with the default permissions", exc)
        return RepoConfig()


async def _stop(db: Database, job: queue.Job, thread: Thread, verdict: Verdict, handle: str) -> str | None:
    stopped = queue.request_stop(db, job.conversation, verdict.login)
    await _acknowledge(job, thread)
    if stopped:
        log.info("job %s: @%s stopped job(s) %s", job.id, verdict.login, stopped)
        return None  # each stopped job's own comment says who stopped it
    return replies.nothing_running()


async def _pause(db: Database, job: queue.Job, thread: Thread, verdict: Verdict, handle: str) -> str:
    spec = job.spec
    paused = pauses.pause(db, spec.repo, spec.number, verdict.login)
    # what it holds back, under way; also when it was paused already (this command's retry after a crash)
    ended = queue.stop_running(db, job.conversation, verdict.login, pauses.ends)
    await _acknowledge(job, thread)
    if not paused:
        return replies.already_paused(pauses.paused_by(db, spec.repo, spec.number) or verdict.login, handle)
    log.info("job %s: @%s paused %s#%s%s", job.id, verdict.login, spec.repo, spec.number,
             f", stopping job(s) {ended}" if ended else "")
    return replies.paused(verdict.login, handle, ended=bool(ended))


async def _resume(db: Database, job: queue.Job, thread: Thread, verdict: Verdict, handle: str) -> str:
    spec = job.spec
    resumed = pauses.resume(db, spec.repo, spec.number)
    await _acknowledge(job, thread)
    if not resumed:
        return replies.not_paused()
    log.info("job %s: @%s resumed %s#%s", job.id, verdict.login, spec.repo, spec.number)
    return replies.resumed(verdict.login)


async def _acknowledge(job: queue.Job, thread: Thread) -> None:
    """A 👍 on the command's comment: it was read and done."""
    target = dict(job.spec.target or {})
    await with_retries(lambda: thread.react(target, "+1"))


HANDLERS: dict[ActingKind, Handler] = {"stop": _stop, "pause": _pause, "resume": _resume}


def is_command(kind: str) -> bool:
    """Every job kind but the episode (its pipeline checks) and the plain reply goes through `run`."""
    return kind not in ("episode", "reply")

