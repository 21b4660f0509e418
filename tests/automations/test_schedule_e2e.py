"""End to end through `bot serve` with the real Codex CLI against the fake provider and the fake
GitHub: a repository declaring a weekly schedule; `bot automations tick --at` claims the slot, the
worker runs it in the automation's own issue (opened by the bot), and the next slot answers in the
same issue, resuming the session."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.automations.test_triage_e2e import finished, opened
from tests.fakes.provider import say
from tests.review.world import open_world
from tests.spine.service import REPO, ROOT, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
WEEKLY = (b"automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n    agent: codex\n"
          b"    prompt: Say which dependencies are out of date.\n")


@pytest.fixture
def world(tmp_path):
    """The automations' world (tests/automations/conftest.py) with the service's own tick off: the
    test says when the schedules are evaluated, with `bot automations tick --at`."""
    with open_world(tmp_path, BOT_SCHEDULE_INTERVAL="0") as opened_world:
        yield opened_world


def tick(world, at: str) -> str:
    done = subprocess.run([sys.executable, "-m", "bot.cli", "automations", "tick", "--at", at], cwd=ROOT,
                          env=world.service.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def automation_issues(world) -> list[int]:
    return [number for number, issue in world.gh.issues(REPO).items() if issue["title"] == "Automation: deps"]


def answers(world) -> list[str]:
    return [c["body"] for number in automation_issues(world) for c in world.gh.comments(REPO, number)
            if "<!-- bot:run " in (c.get("body") or "")]


def declared(world) -> None:
    """The repository declares the schedule, and the bot has read its `.github/bot.yml` (on an event)."""
    world.gh.add_content(REPO, ".github/bot.yml", WEEKLY)
    world.service.deliver(opened(), event="issues")
    assert [row["status"] for row in finished(world)] == ["done"]
    assert tick(world, "2030-01-07T05:00Z") == "0 slot(s) due"  # first seen before its slot


@scenario
def test_a_scheduled_slot_answers_in_the_automations_issue_and_the_next_slot_resumes_there(world):
    declared(world)
    world.providers["codex"].script(say("Two dependencies are out of date."))
    assert tick(world, "2030-01-07T06:00Z") == "1 slot(s) due"
    first = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert "Two dependencies are out of date." in first[0] and "<details><summary>codex" in first[0]
    asked = world.providers["codex"].main_requests()[0].last_user_text
    assert "Say which dependencies are out of date." in asked
    assert "scheduled automation `deps`" in asked and "2030-01-07T06:00Z (UTC)" in asked
    world.providers["codex"].script(say("Still two out of date."))
    assert tick(world, "2030-01-14T06:00Z") == "1 slot(s) due"
    both = world.gh.wait_for(lambda: answers(world) if len(answers(world)) == 2 else [], timeout=180)
    assert len(automation_issues(world)) == 1 and "Still two out of date." in both[1]
    assert "resumed session" in both[1]

