"""A `dependabot_alert` or `code_scanning_alert` created runs each automation declared for it in that
automation's own issue, as a scheduled run does (the alert has no thread of its own, and the issue's
session carries what the automation did for earlier alerts): its slot is the delivery, claimed once
and held to the caps (bot/automations/caps.py); a paused automation issue runs nothing.

    status = await run(db, job_id, spec, repo_thread, cancel, facts, automations, make_context=..., thread_of=...)

The agent is asked the prompt and the alert's allowlisted fields, fenced (bot/automations/request.py).
With `may: [draft_pull_request]` its change goes to a new branch and a draft pull request
(bot/automations/mode.py).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging

from bot.automations import automation_issue, caps, pauses, request
from bot.automations.autofix import MakeContext, ThreadOf
from bot.automations.mode import AutomationMode, marker, run_as
from bot.db import Database
from bot.github.client import Thread
from bot.intake.automation_event import EventFacts
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import pipeline
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.automations.alert_run")


async def run(db: Database, job_id: int, spec: JobSpec, repo_thread: Thread, cancel: asyncio.Event,
              facts: EventFacts, automations: list[Automation], *, make_context: MakeContext,
              thread_of: ThreadOf, account_cap: int) -> str:
    statuses = []
    for automation in automations:
        if by := pauses.automation_paused_by(db, spec.repo, automation.name):
            log.info("job %s: the issue of automation %s was paused by @%s: %s not run", job_id, automation.name,
                     by, facts.name)
            continue
        with db.transaction() as conn:
            admitted = caps.admit(conn, spec.repo, automation, spec.delivery or f"job {job_id}", job_id, spec.author,
                                  account_cap)
        if not admitted.runs:
            log.info("job %s: automation %s not run on %s: %s", job_id, automation.name, facts.name,
                     admitted.refused or "it ran for this delivery already")
        if admitted.refused:
            thread = await thread_of(await automation_issue.ensure(db, repo_thread.api, spec.repo, automation.name))
            await caps.note_once(db, thread, spec.repo, automation, admitted.refused)
        if not admitted.runs:
            continue
        number = await automation_issue.ensure(db, repo_thread.api, spec.repo, automation.name)
        thread = await thread_of(number)
        text = request.for_alert(automation, facts.event, facts.alert)
        each = dataclasses.replace(spec, number=number, is_pr=False, author=min(thread.own_logins), target=None,
                                   title=automation_issue.title(automation.name),
                                   command=Command(kind="run", agent=automation.agent, request=text))
        ctx = make_context(each, marker(job_id, automation.name), thread)
        ctx = run_as(ctx, AutomationMode(automation=automation))
        statuses.append(await pipeline.run(db, ctx, cancel))
    return "failed" if "failed" in statuses else "done"
