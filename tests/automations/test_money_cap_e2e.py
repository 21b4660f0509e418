"""End to end through `bot serve` with the real Codex CLI against the fake provider (issue 35): an
automation whose model cost today reached its `max_usd_per_day` runs no more that day. Its run's
calls were written to the relay's ledger under the automation; the next event's run is refused
before any call, with one short note in the thread; the one after that, silence."""
from __future__ import annotations

import pytest

from bot.relay.budgets import Ledger, Scope, automation_key
from tests.automations.test_caps_e2e import all_finished, notes
from tests.automations.test_triage_e2e import answers, opened
from tests.fakes.provider import FakeUsage, call, say
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
A_CENT_A_DAY = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened, edited, reopened]}\n"
                b"    agent: codex\n    prompt: Say whether the issue is a bug.\n    max_usd_per_day: 0.01\n")


def spent_today(world) -> float:
    return Ledger(world.service.database()).spent(Scope(automation=automation_key(REPO, "triage")))[
        "automation_day"].usd


@scenario
def test_an_automation_over_its_daily_money_cap_leaves_one_note_then_spends_nothing(world):
    world.gh.add_content(REPO, ".github/bot.yml", A_CENT_A_DAY)
    world.providers["codex"].script(say("A bug.", usage=FakeUsage(input=100_000, output=10_000)))
    world.service.deliver(opened(), event="issues")
    world.gh.wait_for(lambda: answers(world), timeout=180)
    all_finished(world, 1)
    spent = spent_today(world)
    assert spent > 0.01
    for action in ("edited", "reopened"):
        data = opened()
        data["action"] = action
        world.service.deliver(data, event="issues")
    all_finished(world, 3)
    assert len(answers(world)) == 1 and len(world.providers["codex"].main_requests()) == 1
    assert spent_today(world) == spent
    found = notes(world)
    assert len(found) == 1 and "did not run here" in found[0] and "`max_usd_per_day: 0.01`" in found[0]
    kinds = [r["kind"] for r in world.service.database().query("SELECT kind FROM automation_runs ORDER BY created_at")]
    assert kinds == ["run", "refused", "note", "refused"]


@scenario
def test_a_run_that_spends_its_automations_day_is_stopped_and_says_why(world):
    world.gh.add_content(REPO, ".github/bot.yml", A_CENT_A_DAY)
    world.providers["codex"].usage = FakeUsage(input=100_000, output=10_000)
    world.providers["codex"].script(call("read_file", {"path": "README.md"}), say("A bug."))
    world.service.deliver(opened(), event="issues")
    found = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert "this automation's cost today (UTC)" in found[0] and "max_usd_per_day" in found[0]
    assert "A bug." not in found[0] and len(world.providers["codex"].main_requests()) == 1
