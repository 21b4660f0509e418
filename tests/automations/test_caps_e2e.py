"""End to end through `bot serve` with the real Codex CLI: an automation over its daily cap runs no
more that day; the first run refused leaves one short note in the thread, the next ones none."""
from __future__ import annotations

import time

import pytest

from tests.automations.test_triage_e2e import answers, opened
from tests.fakes.provider import say
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
ONCE_A_DAY = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened, edited, reopened]}\n"
              b"    agent: codex\n    prompt: Say whether the issue is a bug.\n    max_runs_per_day: 1\n")


def all_finished(world, count: int, timeout: float = 180) -> None:
    db = world.service.database()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(db.query("SELECT id FROM jobs WHERE status NOT IN ('queued', 'running')")) >= count:
            return
        time.sleep(0.1)
    raise AssertionError(f"{count} jobs did not finish")


def notes(world) -> list[str]:
    return [c["body"] for c in world.gh.comments(REPO, 1) if "bot:automation-note" in (c.get("body") or "")]


@scenario
def test_an_automation_over_its_daily_cap_leaves_one_note_then_silence(world):
    world.gh.add_content(REPO, ".github/bot.yml", ONCE_A_DAY)
    world.providers["codex"].script(say("A bug."))
    world.service.deliver(opened(), event="issues")
    world.gh.wait_for(lambda: answers(world), timeout=180)
    for action in ("edited", "reopened"):
        data = opened()
        data["action"] = action
        world.service.deliver(data, event="issues")
    all_finished(world, 3)
    assert len(answers(world)) == 1 and len(world.providers["codex"].main_requests()) == 1
    found = notes(world)
    assert len(found) == 1 and "did not run here" in found[0] and "max_runs_per_day: 1" in found[0]
    kinds = [r["kind"] for r in world.service.database().query("SELECT kind FROM automation_runs ORDER BY created_at")]
    assert kinds == ["run", "refused", "note", "refused"]
