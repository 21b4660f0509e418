"""Which events are automatic triggers, and what each asks for (the intake's side: no GitHub call)."""
from __future__ import annotations

import json

from bot.intake.triggers import automatic
from tests.spine.helpers import FIXTURES


def pull_request(action: str, **fields) -> dict:
    data = json.loads((FIXTURES / "pull_request.opened.json").read_text())
    data.update(action=action, **fields)
    return data


def issue(action: str, **fields) -> dict:
    data = json.loads((FIXTURES / "issues.opened.json").read_text())
    data.update(action=action, **fields)
    return data


def test_review_label_on_a_pull_request_asks_for_a_review_by_the_default_agents():
    trigger, command = automatic("pull_request", pull_request("labeled", label={"name": "bot:review"}), "bot")
    assert command.review and command.agents == () and trigger["automatic"]["kind"] == "label"


def test_agent_label_on_a_pull_request_asks_that_agent_for_a_review():
    _, command = automatic("pull_request", pull_request("labeled", label={"name": "bot:Codex"}), "bot")
    assert command.review and command.agents == ("codex",)


def test_agent_label_on_an_issue_asks_the_agent_to_work_on_it():
    _, command = automatic("issues", issue("labeled", label={"name": "bot:claude"}), "bot")
    assert not command.review and command.agent == "claude" and "labelled `bot:claude`" in command.request


def test_review_label_on_an_issue_is_nothing():
    assert automatic("issues", issue("labeled", label={"name": "bot:review"}), "bot") is None


def test_other_labels_are_nothing():
    assert automatic("pull_request", pull_request("labeled", label={"name": "bug"}), "bot") is None


def test_assignment_to_the_bots_app_account_is_a_trigger():
    found = automatic("issues", issue("assigned", assignee={"login": "bot[bot]"}), "bot")
    assert found is not None and found[0]["automatic"]["kind"] == "assignment"


def test_review_requested_from_the_bot_is_a_review():
    trigger, command = automatic("pull_request", pull_request("review_requested", requested_reviewer={"login": "bot"}), "bot")
    assert command.review and trigger["automatic"]["kind"] == "review_requested"


def test_review_requested_from_someone_else_is_nothing():
    assert automatic("pull_request", pull_request("review_requested", requested_reviewer={"login": "octocat"}), "bot") is None


def test_pull_request_opened_is_a_review_requested_by_its_author_and_names_a_draft():
    data = pull_request("opened")
    data["pull_request"]["draft"] = True
    trigger, command = automatic("pull_request", data, "bot")
    assert command.review and trigger["author"] == "Codertocat" and trigger["automatic"]["draft"] is True


def test_pull_request_opened_with_a_command_in_its_body_is_left_to_the_command():
    data = pull_request("opened")
    data["pull_request"]["body"] = "Refactor.\n\n@bot codex fix the typo"
    assert automatic("pull_request", data, "bot") is None


def test_a_bot_never_triggers():
    data = pull_request("labeled", label={"name": "bot:review"})
    data["sender"] = {"login": "renovate[bot]", "type": "Bot", "id": 3}
    assert automatic("pull_request", data, "bot") is None
