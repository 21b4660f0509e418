"""A `dependabot_alert` or `code_scanning_alert` created runs each automation declared for it in that
automation's own issue, as a scheduled run does (the alert has no thread of its own, and the issue's
session carries what the automation did for earlier alerts): its slot (`alert:` and the delivery) is
claimed once and held to the caps (bot/automations/caps.py); a paused automation issue runs nothing.

    status = await run(db, job_id, spec, repo_thread, facts, automations, thread_of=..., queue_job=...)

The alert's job runs no agent itself: for each automation it queues that automation's run, a job of
its own in the thread of the automation's issue (bot/automations/scheduled_job.py, an `alert:` slot),
in the transaction that claims the slot, its id on the claim's row. So `@bot stop` in the issue finds
the run, `@bot pause` there holds or ends it, it takes turns with the issue's other runs and
mentions, and a retry of the alert's job (or a redelivery) finds the slot claimed and queues nothing
more; a crash leaves both the claim and the run, or neither. The run (bot/automations/
scheduled_run.py) asks the agent the prompt and the alert's allowlisted fields, fenced
(bot/automations/request.py). With `may: [draft_pull_request]` its change goes to a new branch and a
draft pull request (bot/automations/mode.py).
"""
from __future__ import annotations

import logging

from bot.automations import automation_issue, caps, pauses, scheduled_job
from bot.automations.autofix import QueueJob, ThreadOf
from bot.db import Database
from bot.github.client import Thread
from bot.intake.automation_event import EventFacts
from bot.intake.spec import JobSpec
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.automations.alert_run")


async def run(db: Database, job_id: int, spec: JobSpec, repo_thread: Thread, facts: EventFacts,
              automations: list[Automation], *, thread_of: ThreadOf, queue_job: QueueJob, account_cap: int) -> str:
    for automation in automations:
        admitted = queue(db, job_id, spec, facts, automation, queue_job, account_cap)
        if admitted is not None and admitted.refused:
            thread = await thread_of(await automation_issue.ensure(db, repo_thread.api, spec.repo, automation.name))
            await caps.note_once(db, thread, spec.repo, automation, admitted.refused)
    return "done"


def queue(db: Database, job_id: int, spec: JobSpec, facts: EventFacts, automation: Automation,
          queue_job: QueueJob, account_cap: int) -> caps.Admission | None:
    """The automation's run of the alert, queued in its issue's thread with its slot's claim; None
    when its issue is paused (nothing claimed: the pause counts toward nothing)."""
    if by := pauses.automation_paused_by(db, spec.repo, automation.name):
        log.info("job %s: the issue of automation %s was paused by @%s: %s not run", job_id, automation.name,
                 by, facts.name)
        return None
    slot = scheduled_job.ALERT + (spec.delivery or f"job {job_id}")
    with db.transaction() as conn:
        admitted = caps.admit(conn, spec.repo, automation, slot, None, spec.author, account_cap)
        if admitted.runs:
            each = scheduled_job.alert_spec_for(spec.repo, spec.repo_id, spec.installation_id or 0, automation,
                                                slot, facts)
            queued = queue_job(conn, scheduled_job.delivery_of(spec.repo, automation.name, slot),
                               scheduled_job.queue_key(conn, spec.repo, automation.name), each)
            if queued is None:  # only if the slot's run were queued without its claim: roll the claim back
                raise RuntimeError(f"the run of {spec.repo} {automation.name} {slot} is queued already")
            conn.execute("UPDATE automation_runs SET job_id = ? WHERE repo = ? AND automation = ? AND slot = ?",
                         [queued, spec.repo, automation.name, slot])
    if admitted.runs:
        log.info("job %s: automation %s queued on %s in its issue's thread", job_id, automation.name, facts.name)
    elif not admitted.refused:
        log.info("job %s: automation %s was queued for this alert already", job_id, automation.name)
    else:
        log.info("job %s: automation %s not run on %s: %s", job_id, automation.name, facts.name, admitted.refused)
    return admitted
