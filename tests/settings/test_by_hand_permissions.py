"""The README's by-hand App steps ask for the permissions the manifest flow asks for, no fewer."""
from __future__ import annotations

import re
from pathlib import Path

from bot.settings.manifest import EVENTS, PERMISSIONS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
NAMES = {"issues": "Issues", "pull_requests": "Pull requests", "contents": "Contents", "metadata": "Metadata",
         "checks": "Checks", "actions": "Actions", "members": "Members",
         "vulnerability_alerts": "Dependabot alerts", "security_events": "Code scanning alerts"}  # GitHub's form's words
LEVELS = {"write": "read & write", "read": "read"}


def _by_hand_steps() -> str:
    return README.split("**By hand**", 1)[1].split("5. Create the App", 1)[0]


def test_every_permission_of_the_manifest_is_in_the_by_hand_steps_at_its_level():
    steps = re.sub(r"\s+", " ", _by_hand_steps())
    missing = [f"{NAMES[name]} {LEVELS[level]}" for name, level in PERMISSIONS.items()
               if f"*{NAMES[name]}* {LEVELS[level]}" not in steps]
    assert missing == []


EVENT_NAMES = {"issue_comment": "Issue comment", "pull_request_review_comment": "Pull request review comment",
               "pull_request_review": "Pull request review", "issues": "Issues", "pull_request": "Pull request",
               "check_suite": "Check suite", "workflow_run": "Workflow run", "dependabot_alert": "Dependabot alert",
               "code_scanning_alert": "Code scanning alert", "push": "Push"}  # GitHub's form's words


def test_every_event_of_the_manifest_is_subscribed_to_in_the_by_hand_steps():
    steps = re.sub(r"\s+", " ", _by_hand_steps())
    assert [name for name in EVENTS if f"*{EVENT_NAMES[name]}*" not in steps] == []
