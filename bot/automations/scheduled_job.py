"""The job that runs one slot of a scheduled automation, queued by the tick that claimed the slot
(bot/automations/schedule.py) in the claim's transaction, and run by the worker through
bot/automations/scheduled_run.py. A fired run (bot/automations/fire.py) is the same job with a
`fire:` slot, its caller's text as the command's request (untrusted: fenced when it is asked); a
writer's Run now on the settings page is a fired run with a `now:` slot and no text.

    spec = spec_for(repo, repo_id, installation_id, automation, slot)   # queued by bot/service/schedules.py
    spec = fired_spec_for(repo, repo_id, installation_id, automation, "fire:KEY", text)
    name, slot = slot_of(job.spec)

The spec is an episode's, marked `automatic` of kind `schedule` with the automation and its slot as
the detail. Its issue is not known yet (number 0): the worker finds or opens the automation's issue
first. Its jobs queue under one key per automation, so two slots of one automation run one after
the other, never at once.
"""
from __future__ import annotations

import dataclasses

from bot.intake.grammar import Command
from bot.intake.spec import Automatic, JobSpec
from bot.workspace.repo_config_model import Automation

KIND = "schedule"
FIRED = "fire:"  # the slot of a fired run (bot/automations/fire.py)
RUN_NOW = "now:"  # the slot of a writer's Run now on the settings page: a fired run without a caller's text


def spec_for(repo: str, repo_id: int | None, installation_id: int, automation: Automation, slot: str) -> JobSpec:
    return JobSpec(repo=repo, number=0, author="", repo_id=repo_id, installation_id=installation_id,
                   command=Command(kind="run", agent=automation.agent), title=f"Automation: {automation.name}",
                   target=None, automatic=Automatic(kind=KIND, detail=f"{automation.name} {slot}"))


def fired_spec_for(repo: str, repo_id: int | None, installation_id: int, automation: Automation, slot: str,
                   text: str) -> JobSpec:
    return dataclasses.replace(spec_for(repo, repo_id, installation_id, automation, slot),
                               command=Command(kind="run", agent=automation.agent, request=text))


def is_fired(slot: str) -> bool:
    return slot.startswith((FIRED, RUN_NOW))


def is_run_now(slot: str) -> bool:
    return slot.startswith(RUN_NOW)


def slot_of(spec: JobSpec) -> tuple[str, str]:
    """(the automation's name, the slot) a schedule job runs."""
    name, _, slot = (spec.automatic.detail if spec.automatic else "").partition(" ")
    return name, slot


def queue_key(repo: str, name: str) -> str:
    """The queue's ordering key of an automation's jobs (not a thread: its issue may change)."""
    return f"{repo} automation {name}"
