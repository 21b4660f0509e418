"""The worker's side of an automation candidate (bot/intake/automation_event.py): read
`.github/bot.yml` from the default branch, and run each automation declared for the event once
(bot/automations/runs.py), each with its own tracking comment in the thread and the answer with
provenance, through the one pipeline. A repository that declares none: nothing, silently. A
completed check suite or workflow run goes to the autofix (bot/automations/autofix.py), a created
alert to its automations' own issues (bot/automations/alert_run.py).

    status = await run(db, job_id, spec, thread, cancel, make_context, thread_of=..., queue_job=..., detail=...)

`detail`: the event's facts as the intake wrote them (the candidate's own, or `riding` for the job
of an automatic trigger that took the event first).
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

from bot.automations import alert_run, autofix, caps, matching, pauses, request, schedule
from bot.automations.autofix import MakeContext, QueueJob, ThreadOf
from bot.automations.mode import marker, reviews, run_as
from bot.db import Database
from bot.github.client import Thread
from bot.intake.automation_event import ALERT_EVENTS, CHECK_EVENTS, EventFacts, read_detail
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import gate, pipeline
from bot.job.thread_text import cut
from bot.workspace.repo_config import CONFIG_PATH, ConfigError, RepoConfig, parse
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.automations.event_run")
MAX_COMMENT_CHARS = 8_000


async def run(db: Database, job_id: int, spec: JobSpec, thread: Thread, cancel: asyncio.Event,
              make_context: MakeContext, *, thread_of: ThreadOf, queue_job: QueueJob, account_cap: int,
              detail: str | None = None) -> str:
    """`account_cap`: BOT_AUTOMATION_ACCOUNT_RUNS_PER_HOUR (bot/automations/caps.py). `queue_job`: how an
    alert's runs and a fork's autofix queue in the thread they answer in (bot/service/schedules.py)."""
    facts = read_detail(detail if detail is not None else spec.automatic.detail if spec.automatic else "")
    if facts is None:
        log.warning("job %s: the event's detail is outside the allowlist: no automation runs", job_id)
        return "done"
    found = await _declared(db, job_id, spec, thread, facts)
    if not found:
        return "done"
    if facts.event in ALERT_EVENTS:
        return await alert_run.run(db, job_id, spec, thread, facts, found, thread_of=thread_of, queue_job=queue_job,
                                   account_cap=account_cap)
    if facts.event in CHECK_EVENTS:
        return await autofix.run(db, job_id, spec, thread, cancel, facts, found, make_context=make_context,
                                 queue_job=queue_job, account_cap=account_cap)
    if by := pauses.paused_by(db, spec.repo, spec.number):
        log.info("job %s: %s#%d was paused by @%s: no automation runs on %s", job_id, spec.repo, spec.number,
                 by, facts.name)
        return "done"
    if any(matching.needs_pull(a) for a in found):
        pull = await thread.pull()
        found = [automation for automation in found if matching.pull_matches(automation, pull)]
    title, body = await _event_text(thread, spec, facts)
    statuses = []
    for automation in found:
        with db.transaction() as conn:
            admitted = caps.admit(conn, spec.repo, automation, spec.delivery or f"job {job_id}", job_id, spec.author,
                                  account_cap)
        if admitted.refused:
            log.info("job %s: automation %s not run: %s", job_id, automation.name, admitted.refused)
            await caps.note_once(db, thread, spec.repo, automation, admitted.refused)
            continue
        if not admitted.runs:
            log.info("job %s: automation %s already ran for this event", job_id, automation.name)
            continue
        text = request.compose(automation, facts.name, spec.author, title, body)
        ctx = make_context(_spec_for(spec, automation, text, review=reviews(automation, facts.event)),
                           marker(job_id, automation.name), None)
        ctx = run_as(ctx, automation)
        statuses.append(await pipeline.run(db, ctx, cancel))
    return "failed" if "failed" in statuses else "done"


async def _declared(db: Database, job_id: int, spec: JobSpec, thread: Thread, facts: EventFacts) -> list[Automation]:
    """The automations `.github/bot.yml` of the default branch declares for the event."""
    try:
        written = await gate.default_branch_text(thread)
        cfg = parse(*written) if written is not None else RepoConfig()
    except ConfigError as exc:  # refused on its commit (bot/automations/config_read.py): the last valid one runs
        kept = schedule.last_valid(db, spec.repo)
        log.info("job %s: %s is invalid, the last valid one (%d automations) stays in force: %s", job_id,
                 CONFIG_PATH, len(kept), exc)
        return matching.for_event(kept, facts)
    if written is not None and cfg.automations:  # the schedules read it from here (bot/automations/schedule.py)
        schedule.remember(db, spec.repo, spec.repo_id, spec.installation_id, *written)
    found = matching.for_event(cfg.automations, facts)
    if not found:
        log.info("job %s: no automation of %s runs on %s", job_id, spec.repo, facts.name)
    return found


async def _event_text(thread: Thread, spec: JobSpec, facts: EventFacts) -> tuple[str, str]:
    """The untrusted text the agent gets: the issue's or pull request's title and body, or for a
    comment its thread's title and the comment's body, as GitHub holds them now."""
    issue = await thread.issue()
    title = str(issue.get("title") or "")
    if facts.event != "issue_comment":
        return title, str(issue.get("body") or "")
    comment_id = int((spec.target or {}).get("id") or 0)
    comment: dict[str, Any] = await thread._authed(
        lambda: thread.api.getitem(f"{thread.prefix}/issues/comments/{comment_id}"))
    return title, cut(str(comment.get("body") or ""), MAX_COMMENT_CHARS)


def _spec_for(spec: JobSpec, automation: Automation, text: str, *, review: bool) -> JobSpec:
    """The run's command: the agent asked `text`, or (`may: [review]` on a pull request) the review
    `@bot <agent> review` makes, focused by the declared prompt (the maintainers' words: the review's
    body quotes its focus, so never the event's text, which the agent reads with read_thread)."""
    if review:
        return dataclasses.replace(spec, command=Command(kind="run", agent=automation.agent, review=True,
                                                         agents=(automation.agent,), request=automation.prompt))
    return dataclasses.replace(spec, command=Command(kind="run", agent=automation.agent, request=text))

