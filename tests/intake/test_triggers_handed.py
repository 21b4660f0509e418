"""The automatic triggers (bot/intake/triggers.py) know the bot by the handle they are handed, not
by the process environment's BOT_HANDLE."""
from __future__ import annotations

import json

from bot.intake.triggers import automatic
from tests.spine.helpers import FIXTURES


def _event(name: str, action: str, **fields: object) -> dict:
    data = json.loads((FIXTURES / f"{name}.opened.json").read_text())
    data.update(action=action, **fields)
    return data


def test_an_assignment_to_the_handed_handle_is_a_trigger():
    found = automatic("issues", _event("issues", "assigned", assignee={"login": "helper"}), "helper")
    assert found is not None and found[0]["automatic"]["kind"] == "assignment"


def test_an_assignment_to_the_environments_handle_is_not_one_for_another_handle():
    assert automatic("issues", _event("issues", "assigned", assignee={"login": "bot"}), "helper") is None


def test_a_pull_request_whose_body_addresses_the_handed_handle_is_left_to_the_command():
    data = _event("pull_request", "opened")
    data["pull_request"]["body"] = "Refactor.\n\n@helper codex fix the typo"
    assert automatic("pull_request", data, "helper") is None
