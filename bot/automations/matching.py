"""Which declared automations an event runs (`on:` in `.github/bot.yml`, docs/automations.md).

    found = for_event(cfg.automations, facts)           # in the order declared
    kept = [a for a in found if pull_matches(a, pull)]  # a pull_request's labels: and branches:

`facts` is what the intake read of the event (bot/intake/automation_event.py); `pull` is GitHub's
pull request (GET /pulls/N), read only when an automation filters on its labels or base branch.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from bot.intake.automation_event import EventFacts
from bot.workspace.repo_config_model import Automation


def for_event(automations: Sequence[Automation], facts: EventFacts) -> list[Automation]:
    return [automation for automation in automations if _runs_on(automation, facts)]


def _runs_on(automation: Automation, facts: EventFacts) -> bool:
    on = automation.on
    if on.event != facts.event:
        return False
    if on.issues is not None:
        return facts.action in on.issues.types
    if on.issue_comment is not None:
        return facts.action == "created"
    if on.pull_request is not None:
        return facts.action in on.pull_request.types and (
            facts.action != "labeled" or not on.pull_request.labels or facts.label in on.pull_request.labels)
    if on.dependabot_alert is not None or on.code_scanning_alert is not None:
        return facts.action == "created"
    checks = on.check_suite or on.workflow_run
    return checks is not None and facts.conclusion in checks.conclusion


def needs_pull(automation: Automation) -> bool:
    """Whether its filters read the pull request (its labels, its base branch)."""
    on = automation.on.pull_request
    return on is not None and bool(on.labels or on.branches)


def pull_matches(automation: Automation, pull: dict[str, Any] | None) -> bool:
    """A pull_request automation's `labels:` (it carries one) and `branches:` (its base matches one)."""
    on = automation.on.pull_request
    if on is None or not (on.labels or on.branches):
        return True
    if pull is None:
        return False
    labels = {str(label.get("name")) for label in pull.get("labels") or [] if isinstance(label, dict)}
    base = str((pull.get("base") or {}).get("ref") or "")
    return (not on.labels or bool(labels & set(on.labels))) and \
        (not on.branches or any(_pattern(p).fullmatch(base) for p in on.branches))


@lru_cache(maxsize=256)
def _pattern(branch: str) -> re.Pattern[str]:
    """`*` within one `/` part, `**` across parts; every other character as itself."""
    parts = re.split(r"(\*\*|\*)", branch)
    return re.compile("".join(".*" if p == "**" else "[^/]*" if p == "*" else re.escape(p) for p in parts))
