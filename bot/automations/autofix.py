"""The autofix: a completed `check_suite` or `workflow_run` whose conclusion an automation names
runs that automation on the pull request the checks belong to, in that pull request's thread,
resuming its session, at most `max_attempts` times since the last push by a person
(bot/automations/attempts.py).

    status = await run(db, job_id, spec, thread, cancel, facts, automations, make_context=..., queue_job=...)

The pull request is the one the payload named (GitHub names only a same-repository one), else the
open pull request whose head is the checked commit (a fork's: GitHub sends its suite with an empty
`pull_requests`, so its job was queued in no pull request's thread: it queues the run again on the
pull request it found, `queue_on_pull`, where `@bot stop` and `@bot pause` find it and a pause holds
it); none, one that is closed, or one whose head moved on since the checks ran: nothing
runs and nothing is said (a newer push's own checks will come; a commit no open pull request has
leaves no thread to speak in; docs/automations.md), and the slot is recorded with why. `may: [push]`
pushes the fix to a same-repository branch (bot/automations/mode.py); a fork's pull request gets the
change as a diff and the reason.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.automations import attempts, caps, pauses, request, runs
from bot.automations.mode import marker, run_as
from bot.db import Database
from bot.github.client import Thread
from bot.intake.automation_event import EventFacts
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import pipeline
from bot.job.context import Job
from bot.job.conversations import thread_key
from bot.workspace.repo_config_model import Automation

# (the spec to run, the marker of its comment, the thread when not the job's) -> the pipeline's context
MakeContext = Callable[[JobSpec, str, Thread | None], Job]
ThreadOf = Callable[[int], Awaitable[Thread]]  # a pull request or issue number of the job's repository
# (the caller's transaction, a delivery id, the thread to queue in, the spec) -> the job queued, or None
# when that delivery id has its job already (bot/service/schedules.py `enqueue`)
QueueJob = Callable[[Database, str, str, JobSpec], int | None]
log = logging.getLogger("bot.automations.autofix")
MAX_PULL_PAGES = 3  # open pull requests searched for a fork's head: 300, newest first


async def run(db: Database, job_id: int, spec: JobSpec, thread: Thread, cancel: asyncio.Event,
              facts: EventFacts, automations: list[Automation], *, make_context: MakeContext,
              queue_job: QueueJob, account_cap: int) -> str:
    pull = await pull_for(thread, spec.number, facts.head)
    why = _not_runnable(db, spec.repo, pull, facts.head)
    if why is not None or pull is None:
        for automation in automations:
            runs.record(db, spec.repo, automation.name, f"head:{facts.head}", runs.SKIPPED, why or "", spec.author)
        log.info("job %s: autofix on %s %s not run: %s", job_id, facts.name, facts.head[:7], why)
        return "done"
    number = int(pull["number"])
    if spec.number != number:  # a fork's, found by its head: its run queues on its pull request
        queue_on_pull(db, job_id, spec, number, facts.head, queue_job)
        return "done"
    on = thread
    statuses = []
    for automation in automations:
        attempt = attempts.claim(db, spec.repo, automation, facts.head, job_id, account=spec.author,
                                 account_cap=account_cap)
        if isinstance(attempt, attempts.Refused):
            log.info("job %s: automation %s on #%d not run: %s", job_id, automation.name, number, attempt.why)
            if attempt.notify:
                await caps.note_once(db, on, spec.repo, automation, attempt.why)
            continue
        text = request.for_check(automation, facts.name, facts.conclusion, facts.head, number)
        each = dataclasses.replace(spec, number=number, is_pr=True, title=str(pull.get("title") or ""),
                                   target={"type": "issue", "id": number},
                                   command=Command(kind="run", agent=automation.agent, request=text))
        ctx = make_context(each, marker(job_id, automation.name), on)
        ctx = run_as(ctx, automation, head_sha=facts.head,
                     on_pushed=_pushed(db, spec.repo, automation.name, attempt.root))
        statuses.append(await pipeline.run(db, ctx, cancel))
    return "failed" if "failed" in statuses else "done"


def queue_on_pull(db: Database, job_id: int, spec: JobSpec, number: int, head: str, queue_job: QueueJob) -> int | None:
    """The checks' job again, on pull request `number` (found by the head commit: a fork's), queued in
    its thread: `@bot stop` and `@bot pause` there find it and it takes turns with the other runs
    there. One per pull request and head, whatever the number of check suites, deliveries or
    retries (its delivery id); its attempt is claimed when it runs (bot/automations/attempts.py).
    The id of the job queued now, or None when it was queued already."""
    each = dataclasses.replace(spec, number=number, is_pr=True, trigger_key=None)
    with db.transaction() as conn:
        queued = queue_job(conn, f"autofix {thread_key(spec.repo, number)} {head}", thread_key(spec.repo, number), each)
    log.info("job %s: the checks of %s belong to #%d: %s", job_id, head[:7], number,
             f"queued there as job {queued}" if queued is not None else "queued there already")
    return queued


async def pull_for(thread: Thread, number: int, head: str) -> dict[str, Any] | None:
    """The pull request the checks of `head` belong to: `number` when the payload named it, else
    the open one whose head is `head`, or None."""
    if number:
        return dict(await thread._authed(lambda: thread.api.getitem(f"{thread.prefix}/pulls/{number}")))
    for page in range(1, MAX_PULL_PAGES + 1):
        found = await _open_pulls(thread, page)
        match = next((p for p in found if (p.get("head") or {}).get("sha") == head), None)
        if match is not None or len(found) < 100:
            return dict(match) if match is not None else None
    return None


async def _open_pulls(thread: Thread, page: int) -> list[dict[str, Any]]:
    url = f"{thread.prefix}/pulls?state=open&sort=updated&direction=desc&per_page=100&page={page}"
    found: list[dict[str, Any]] = await thread._authed(lambda: thread.api.getitem(url))
    return found


def _not_runnable(db: Database, repo: str, pull: dict[str, Any] | None, head: str) -> str | None:
    if pull is None:
        return f"no open pull request of {repo} has the head {head[:7]}"
    number = int(pull["number"])
    if pull.get("state") != "open":
        return f"pull request #{number} is {pull.get('state')}"
    now = str((pull.get("head") or {}).get("sha") or "")
    if now != head:
        return f"the head of #{number} moved to {now[:7]} since the checks of {head[:7]} ran"
    if by := pauses.paused_by(db, repo, number):
        return f"#{number} was paused by @{by}"
    return None


def _pushed(db: Database, repo: str, name: str, root: str) -> Callable[[str], None]:
    return lambda sha: attempts.pushed(db, repo, name, root, sha)
