"""The worker's side of an automation candidate (bot/intake/automation_event.py): read
`.github/bot.yml` from the default branch, and run each automation declared for the event once
(bot/automations/runs.py), each with its own tracking comment in the thread and the answer with
provenance, through the one pipeline. A repository that declares none: nothing, silently.

    status = await run(db, job, thread, cancel, context=make_context)
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable

from bot.automations import matching, request, runs, schedule
from bot.automations.mode import AutomationMode
from bot.db import Database
from bot.intake import gate
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import pipeline
from bot.job.context import JobContext
from bot.workspace.repo_config import CONFIG_PATH, ConfigError, RepoConfig, parse
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.automations.event_run")
# (the spec to run, the marker of its comment) -> the pipeline's context (the worker's `_context`)
MakeContext = Callable[[JobSpec, str], JobContext]


async def run(db: Database, job_id: int, spec: JobSpec, thread: object, cancel: asyncio.Event,
              make_context: MakeContext) -> str:
    detail = spec.automatic.detail if spec.automatic else ""
    try:
        written = await gate.default_branch_text(thread)
        cfg = parse(*written) if written is not None else RepoConfig()
    except ConfigError as exc:
        log.info("job %s: %s is invalid, no automation runs: %s", job_id, CONFIG_PATH, exc)
        return "done"
    if written is not None and cfg.automations:  # the schedules read it from here (bot/automations/schedule.py)
        schedule.remember(db, spec.repo, spec.repo_id, spec.installation_id, *written)
    found = matching.for_event(cfg.automations, detail)
    if not found:
        log.info("job %s: no automation of %s runs on %s", job_id, spec.repo, detail)
        return "done"
    issue = await thread.issue()  # type: ignore[attr-defined]
    statuses = []
    for automation in found:
        if not runs.claim(db, spec.repo, automation.name, spec.delivery or f"job {job_id}", job_id):
            log.info("job %s: automation %s already ran for this event", job_id, automation.name)
            continue
        text = request.compose(automation, detail, spec.author, str(issue.get("title") or ""),
                               str(issue.get("body") or ""))
        ctx = make_context(_spec_for(spec, automation, text), marker(job_id, automation.name))
        ctx.mode = AutomationMode(automation=automation)
        statuses.append(await pipeline.run(db, ctx, cancel))
    return "failed" if "failed" in statuses else "done"


def _spec_for(spec: JobSpec, automation: Automation, text: str) -> JobSpec:
    return dataclasses.replace(spec, command=Command(kind="run", agent=automation.agent, request=text))


def marker(job_id: int, name: str) -> str:
    """Hidden in each automation's comment, so a retry edits it instead of posting a second."""
    return f"<!-- bot:job {job_id} automation {name} -->"
