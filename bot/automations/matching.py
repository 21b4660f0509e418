"""Which declared automations an event runs (`on:` in `.github/bot.yml`, docs/automations.md).

    found = for_event(cfg.automations, "issues.opened")    # in the order declared
"""
from __future__ import annotations

from collections.abc import Sequence

from bot.workspace.repo_config_model import Automation


def for_event(automations: Sequence[Automation], detail: str) -> list[Automation]:
    """`detail`: `<event>.<action>` as the intake marked the candidate."""
    event, _, action = detail.partition(".")
    return [automation for automation in automations if _runs_on(automation, event, action)]


def _runs_on(automation: Automation, event: str, action: str) -> bool:
    on = automation.on
    if on.event != event:
        return False
    if event == "issues" and on.issues is not None:
        return action in on.issues.types
    return False  # the other events are declared, not yet run (docs/automations.md)
