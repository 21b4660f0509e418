"""End to end through `bot serve` with the real Codex CLI against the fake provider (issue 35): an
automation whose model cost today reached its `max_usd_per_day` runs no more that day. Its run's
calls were written to the relay's ledger under the automation; the next event's run is refused
before any call, with one short note in the thread; the one after that, silence. A run that spends
the day is stopped by the relay and says why; a scheduled slot claimed when the day is spent is
refused with the note in the automation's issue."""
from __future__ import annotations

import datetime as dt

import pytest

from bot.relay.budgets import Ledger, Scope, automation_key
from tests.automations.test_caps_e2e import all_finished, notes
from tests.automations.test_schedule_e2e import tick
from tests.automations.test_triage_e2e import answers, opened
from tests.fakes.provider import FakeUsage, call, say
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
A_CENT_A_DAY = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened, edited, reopened]}\n"
                b"    agent: codex\n    prompt: Say whether the issue is a bug.\n    max_usd_per_day: 0.01\n")


def today() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")


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


WEEKLY_A_CENT = (b"automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n    agent: codex\n"
                 b"    prompt: Say which dependencies are out of date.\n    max_usd_per_day: 0.01\n")


@scenario
def test_a_scheduled_slot_of_an_automation_whose_day_is_spent_is_refused_with_a_note_in_its_issue(world):
    world.gh.add_content(REPO, ".github/bot.yml", WEEKLY_A_CENT)
    world.service.deliver(opened(), event="issues")  # the bot reads the file (and stores the schedule)
    all_finished(world, 1)
    assert tick(world, "2030-01-07T05:00Z") == "0 slot(s) due"
    Ledger(world.service.database()).add("an-earlier-run", Scope(automation=automation_key(REPO, "deps")), 900, 0.02)
    assert tick(world, "2030-01-07T06:00Z") == "1 slot(s) due"
    all_finished(world, 2)
    issue = next(n for n, i in world.gh.issues(REPO).items() if i["title"] == "Automation: deps")
    said = [c["body"] for c in world.gh.comments(REPO, issue)]
    assert len(said) == 1 and "did not run here" in said[0] and "`max_usd_per_day: 0.01`" in said[0]
    assert world.providers["codex"].requests == []
    rows = world.service.database().query("SELECT slot, kind FROM automation_runs WHERE automation = 'deps' "
                                          "ORDER BY created_at")
    assert [(r["slot"], r["kind"]) for r in rows] == [("2030-01-07T06:00Z", "refused"), (f"note:{issue}:"
                                                                                       f"{today()}", "note")]
