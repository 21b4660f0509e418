"""End to end through `bot serve` with the real CLIs against the fake provider and the fake GitHub:
a new issue on a repository declaring a triage automation gets the agent's answer in the thread;
a repository without automations, or an issue the bot itself opened, gets nothing at all."""
from __future__ import annotations

import time

import pytest

from tests.fakes.provider import say
from tests.spine.helpers import payload
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
TRIAGE = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened]}\n    agent: codex\n"
          b"    prompt: Say whether the issue is a bug, a feature or a question.\n")


def opened(body: str = "The README says Helo instead of Hello.", sender: dict | None = None) -> dict:
    data = payload("issues.opened")
    data["installation"] = {"id": 1}
    data["issue"]["body"] = body
    if sender is not None:
        data["sender"] = sender
    return data


def answers(world) -> list[str]:
    return [c["body"] for c in world.gh.comments(REPO, 1) if "<!-- bot:run " in (c.get("body") or "")]


def finished(world, timeout: float = 60) -> list[dict]:
    db = world.service.database()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = db.query("SELECT status FROM jobs WHERE status NOT IN ('queued', 'running')")
        if rows:
            return rows
        time.sleep(0.1)
    raise AssertionError("the job did not finish")


@scenario
def test_a_new_issue_on_a_repository_declaring_triage_gets_the_agents_answer(world):
    world.gh.add_content(REPO, ".github/bot.yml", TRIAGE)
    world.providers["codex"].script(say("This is a bug: a typo in the README."))
    assert world.service.deliver(opened(), event="issues").json()["queued"] is True
    found = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert len(found) == 1 and "This is a bug: a typo in the README." in found[0]
    asked = world.providers["codex"].main_requests()[0].last_user_text
    assert "Say whether the issue is a bug, a feature or a question." in asked
    assert "untrusted input" in asked and "```text\nSpelling error in the README file" in asked


def test_a_repository_without_automations_gets_nothing(world):
    world.service.deliver(opened(), event="issues")
    assert [row["status"] for row in finished(world)] == ["done"]
    assert world.gh.comments(REPO, 1) == [] and world.gh.reactions == []
    assert world.providers["codex"].requests == [] and world.providers["claude"].requests == []


def test_an_issue_the_bot_opened_does_not_trigger_an_automation(world):
    world.gh.add_content(REPO, ".github/bot.yml", TRIAGE)
    reply = world.service.deliver(opened(sender={"login": "bot[bot]", "type": "Bot", "id": 99}), event="issues")
    assert reply.json()["queued"] is False
    assert world.service.database().query("SELECT id FROM jobs") == []
