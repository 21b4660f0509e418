"""The worker's side of a scheduled automation's job (queued by the tick that claimed its slot,
bot/automations/scheduled_job.py): find or open the automation's issue, then run the declared
prompt through the one pipeline in that issue's thread, with the automation's `may:` as the
authority. The thread keys the session, so each run resumes the previous one's. A fired slot
(bot/automations/fire.py) runs the same way, once the default branch's `.github/bot.yml`, read
again now, still declares `fire` for the automation; its caller's text reaches the agent fenced. An
alert's run (bot/automations/alert_run.py) too, while the automation as last stored still runs on
its alert's event; the alert's allowlisted fields reach the agent fenced.

    status = await run(db, spec, repo_thread, cancel, issue_thread=..., make_context=...)
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable

from bot.automations import automation_issue, caps, matching, request, runs, schedule, scheduled_job
from bot.automations.mode import run_as
from bot.db import Database
from bot.github.client import Thread
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import gate, pipeline
from bot.job.context import Job
from bot.workspace.repo_config import ConfigError, parse
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.automations.scheduled_run")
IssueThread = Callable[[int], Awaitable[Thread]]  # an issue number of the job's repository -> its thread
MakeContext = Callable[[JobSpec, Thread], Job]  # the worker's context of the run in that thread


async def run(db: Database, spec: JobSpec, repo_thread: Thread, cancel: asyncio.Event, *,
              issue_thread: IssueThread, make_context: MakeContext) -> str:
    """`repo_thread`: the job's own (it names no issue yet), to find or open the issue with."""
    name, slot = scheduled_job.slot_of(spec)
    fired = scheduled_job.is_fired(slot)
    automation = await _fired(db, spec, repo_thread, name) if fired else schedule.declared(db, spec.repo, name)
    if automation is None or not _still_runs(automation, slot, spec):
        log.info("automation %s of %s is no longer %s: slot %s not run", name, spec.repo, _how(slot), slot)
        if fired or scheduled_job.is_alert(slot):
            runs.outcome(db, spec.repo, name, slot, f"`{name}` no longer declares {_what(slot)} on the default branch")
        return "done"
    number = await automation_issue.ensure(db, repo_thread.api, spec.repo, name)
    thread = await issue_thread(number)
    if (why := caps.over_money(db, spec.repo, automation)) is not None:  # spent since its slot was claimed
        log.info("automation %s of %s: slot %s not run: %s", name, spec.repo, slot, why)
        runs.outcome(db, spec.repo, name, slot, why, kind=runs.REFUSED)
        await caps.note_once(db, thread, spec.repo, automation, why)
        return "done"
    asked = _asked(automation, slot, spec)
    each = dataclasses.replace(spec, number=number, author=_bot_login(thread), title=automation_issue.title(name),
                               command=Command(kind="run", agent=automation.agent, request=asked))
    ctx = make_context(each, thread)
    ctx = run_as(ctx, automation)
    return await pipeline.run(db, ctx, cancel)


def _asked(automation: Automation, slot: str, spec: JobSpec) -> str:
    if scheduled_job.is_run_now(slot):
        return request.for_run_now(automation)
    if scheduled_job.is_fired(slot):
        return request.for_fire(automation, spec.command.request or "")
    if scheduled_job.is_alert(slot) and (facts := scheduled_job.alert_facts(spec)) is not None:
        return request.for_alert(automation, facts.event, facts.alert)
    return request.for_slot(automation, slot)


def _still_runs(automation: Automation, slot: str, spec: JobSpec) -> bool:
    """A fired slot needs `fire` declared, a Run now a schedule or `fire`, an alert's slot its alert's
    event (and the alert's fields within the allowlist), a scheduled slot a schedule."""
    if scheduled_job.is_run_now(slot):
        return automation.on.fire is not None or bool(automation.on.schedule)
    if scheduled_job.is_alert(slot):
        facts = scheduled_job.alert_facts(spec)
        return facts is not None and bool(matching.for_event([automation], facts))
    return bool(automation.on.fire if scheduled_job.is_fired(slot) else automation.on.schedule)


def _how(slot: str) -> str:
    if scheduled_job.is_alert(slot):
        return "run on its alert"
    return "fired" if scheduled_job.is_fired(slot) else "scheduled"


def _what(slot: str) -> str:
    if scheduled_job.is_run_now(slot):
        return "a schedule or fire"
    return "its alert's event" if scheduled_job.is_alert(slot) else "fire"


async def _fired(db: Database, spec: JobSpec, repo_thread: Thread, name: str) -> Automation | None:
    """The automation as the default branch declares it now (and stored so, for the next request)."""
    try:
        written = await gate.default_branch_text(repo_thread)
        found = parse(*written).automations if written is not None else ()
    except ConfigError as exc:
        log.info("automation %s of %s not fired: %s", name, spec.repo, exc)
        return None
    if written is not None:
        schedule.remember(db, spec.repo, spec.repo_id, spec.installation_id, *written)
    return next((automation for automation in found if automation.name == name), None)


def _bot_login(thread: Thread) -> str:
    """Who a scheduled run is for: no person asked, so the bot's own account (no one is mentioned)."""
    return min(thread.own_logins)
