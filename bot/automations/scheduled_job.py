"""The job that runs one slot of a scheduled automation, queued by the tick that claimed the slot
(bot/automations/schedule.py) in the claim's transaction, and run by the worker through
bot/automations/scheduled_run.py. A fired run (bot/automations/fire.py) is the same job with a
`fire:` slot, its caller's text as the command's request (untrusted: fenced when it is asked); a
writer's Run now on the settings page is a fired run with a `now:` slot and no text. An alert's run
(bot/automations/alert_run.py) is the same job with an `alert:` slot, the alert's allowlisted
fields as the command's request (read through the allowlist again when it runs: `alert_facts`).

    spec = spec_for(repo, repo_id, installation_id, automation, slot)   # queued by bot/service/schedules.py
    spec = fired_spec_for(repo, repo_id, installation_id, automation, "fire:KEY", text)
    spec = alert_spec_for(repo, repo_id, installation_id, automation, "alert:DELIVERY", facts)
    name, slot = slot_of(job.spec)

The spec is an episode's, marked `automatic` of kind `schedule` with the automation and its slot as
the detail. Its issue is not known yet (number 0): the worker finds or opens the automation's issue
first. Its jobs queue in the thread of the automation's issue (`queue_key`), as a mention there
does: two slots of one automation, or a slot and a mention in its issue, run one after the other,
never at once, and `@bot stop` in the issue finds them. Before the first run opened the issue they
queue under the automation's own key; opening it (or replacing a closed one) moves them into its
thread (bot/automations/automation_issue.py). Each job's delivery id names its automation
(`delivery_of`), which is how they are found to be moved.
"""
from __future__ import annotations

import dataclasses

from bot.db import Database
from bot.intake.automation_event import EventFacts, read_detail
from bot.intake.grammar import Command
from bot.intake.spec import Automatic, JobSpec
from bot.job.conversations import thread_key
from bot.workspace.repo_config_model import Automation

KIND = "schedule"
FIRED = "fire:"  # the slot of a fired run (bot/automations/fire.py)
RUN_NOW = "now:"  # the slot of a writer's Run now on the settings page: a fired run without a caller's text
ALERT = "alert:"  # the slot of an alert's run: `alert:` and the alert's delivery id


def spec_for(repo: str, repo_id: int | None, installation_id: int, automation: Automation, slot: str) -> JobSpec:
    return JobSpec(repo=repo, number=0, author="", repo_id=repo_id, installation_id=installation_id,
                   command=Command(kind="run", agent=automation.agent), title=f"Automation: {automation.name}",
                   target=None, automatic=Automatic(kind=KIND, detail=f"{automation.name} {slot}"))


def fired_spec_for(repo: str, repo_id: int | None, installation_id: int, automation: Automation, slot: str,
                   text: str) -> JobSpec:
    return dataclasses.replace(spec_for(repo, repo_id, installation_id, automation, slot),
                               command=Command(kind="run", agent=automation.agent, request=text))


def alert_spec_for(repo: str, repo_id: int | None, installation_id: int, automation: Automation, slot: str,
                   facts: EventFacts) -> JobSpec:
    return dataclasses.replace(spec_for(repo, repo_id, installation_id, automation, slot), event=KIND,
                               command=Command(kind="run", agent=automation.agent, request=facts.detail()))


def alert_facts(spec: JobSpec) -> EventFacts | None:
    """The alert an alert's run is for, read through the allowlist again, or None (not an alert's)."""
    facts = read_detail(spec.command.request or "")
    return facts if facts is not None and facts.alert else None


def is_alert(slot: str) -> bool:
    return slot.startswith(ALERT)


def is_fired(slot: str) -> bool:
    return slot.startswith((FIRED, RUN_NOW))


def is_run_now(slot: str) -> bool:
    return slot.startswith(RUN_NOW)


def slot_of(spec: JobSpec) -> tuple[str, str]:
    """(the automation's name, the slot) a schedule job runs."""
    name, _, slot = (spec.automatic.detail if spec.automatic else "").partition(" ")
    return name, slot


def queue_key(db: Database, repo: str, name: str) -> str:
    """Where a new job of the automation queues: its issue's thread once the bot opened one, else
    the automation's own key."""
    rows = db.query("SELECT number FROM automation_issues WHERE repo = ? AND automation = ?", [repo, name])
    return thread_key(repo, int(rows[0]["number"])) if rows else own_key(repo, name)


def own_key(repo: str, name: str) -> str:
    """The queue key of an automation's jobs while it has no issue (no thread has a space in its key)."""
    return f"{repo} automation {name}"


def delivery_of(repo: str, name: str, slot: str) -> str:
    """The delivery id of a slot's job: one job per slot, and the automation's jobs found by it."""
    return f"{delivery_prefix(repo, name)}{slot}"


def delivery_prefix(repo: str, name: str) -> str:
    return f"schedule {repo} {name} "
