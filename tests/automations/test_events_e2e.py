"""End to end through `bot serve` with the real Codex CLI against the fake provider and the fake
GitHub: a comment without a mention, and a pull request opened, each run the automation declared
for it and get its answer in their thread; the bot's own comment runs nothing."""
from __future__ import annotations

import pytest

from tests.automations import payloads
from tests.automations.test_triage_e2e import finished
from tests.fakes.provider import say
from tests.review.world import PR
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
CHAT = (b"automations:\n  - name: chat\n    on:\n      issue_comment: {}\n    agent: codex\n"
        b"    prompt: Say whether the comment adds a reproduction.\n")
OPENED = (b"automations:\n  - name: describe\n    on:\n      pull_request: {types: [opened], branches: [main]}\n"
          b"    agent: codex\n    prompt: Say what the pull request changes.\n")


def answers(world, number: int) -> list[str]:
    return [c["body"] for c in world.gh.comments(REPO, number) if "<!-- bot:run " in (c.get("body") or "")]


@scenario
def test_a_comment_without_a_mention_gets_the_answer_of_the_automation_declared_for_comments(world):
    world.gh.add_content(REPO, ".github/bot.yml", CHAT)
    world.gh.add_comment(REPO, 1, "It also fails on Windows: run `make` twice.", user="Codertocat", comment_id=5001)
    world.providers["codex"].script(say("Yes: the comment gives the steps to reproduce."))
    data = payloads.comment("It also fails on Windows: run `make` twice.")
    assert world.service.deliver(data, event="issue_comment").json()["queued"] is True
    found = world.gh.wait_for(lambda: answers(world, 1), timeout=180)
    assert len(found) == 1 and "Yes: the comment gives the steps to reproduce." in found[0]
    asked = world.providers["codex"].main_requests()[0].last_user_text
    assert "Say whether the comment adds a reproduction." in asked and "issue_comment.created" in asked
    assert "```text\nSpelling error in the README file\n\nIt also fails on Windows: run `make` twice.\n```" in asked


@scenario
def test_a_pull_request_opened_into_a_declared_branch_gets_the_automations_answer(world):
    world.gh.add_content(REPO, ".github/bot.yml", OPENED)
    world.providers["codex"].script(say("It changes app.py."))
    assert world.service.deliver(payloads.pull_request(), event="pull_request").json()["queued"] is True
    found = world.gh.wait_for(lambda: answers(world, PR), timeout=180)
    assert len(found) == 1 and "It changes app.py." in found[0]
    assert [row["status"] for row in finished(world)] == ["done"]


def test_the_bots_own_comment_runs_no_automation(world):
    world.gh.add_content(REPO, ".github/bot.yml", CHAT)
    reply = world.service.deliver(payloads.comment(user="bot[bot]", user_type="Bot"), event="issue_comment")
    assert reply.json()["queued"] is False
    assert world.service.database().query("SELECT id FROM jobs") == []
