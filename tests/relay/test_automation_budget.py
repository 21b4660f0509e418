"""An automation's money per UTC day (`max_usd_per_day`, issue 35), enforced at the relay like the
other budgets: its runs' calls are written to the ledger under the automation, summed over its UTC
day, and refused once the day is spent."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.relay.budgets import Budget, Caps, Ledger, Scope, automation_key
from tests.fakes.provider import FakeUsage, say
from tests.relay.conftest import ANTHROPIC, post

TRIAGE = automation_key("Octo/Repo", "triage")
CALL_USD = (1000 * 5 + 200 * 25) / 1e6  # claude-opus-4-8's list price of one call below: $0.01


def _scope(automation: str | None = TRIAGE, conversation: str = "octo/repo#12") -> Scope:
    return Scope(conversation=conversation, requester="42", installation="7", automation=automation)


def test_an_automations_key_is_its_repository_whatever_the_case_and_its_name():
    assert automation_key("Octo/Repo", "triage") == automation_key("octo/repo", "triage") == "octo/repo:triage"
    assert automation_key("octo/repo", "triage") != automation_key("octo/repo", "deps")


async def test_an_automations_calls_are_written_to_the_ledger_under_its_day(fake, relay, recorder):
    ledger = Ledger(recorder.db)
    fake.script(say("ok", usage=FakeUsage(input=1000, output=200)))
    async with relay("anthropic", ledger=ledger, spend_scope=_scope()) as r:
        assert (await post(r, *ANTHROPIC)).status_code == 200
    spent = ledger.spent(Scope(automation=TRIAGE))["automation_day"]
    assert (spent.tokens, spent.usd) == (1200, pytest.approx(CALL_USD))
    assert ledger.spent(Scope(automation=automation_key("octo/repo", "deps")))["automation_day"].usd == 0


def test_only_today_utc_counts_toward_an_automations_day(recorder):
    ledger = Ledger(recorder.db)
    ledger.add("today", _scope(), tokens=10, usd=0.5)
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    assert ledger.spent(_scope(), now=tomorrow)["automation_day"].usd == 0
    assert ledger.spent(_scope())["automation_day"].usd == 0.5


async def test_an_automation_whose_day_is_spent_is_refused_before_the_provider(fake, relay, recorder):
    ledger = Ledger(recorder.db)
    ledger.add("an-earlier-run", _scope(conversation="octo/repo#3"), tokens=900, usd=2.0)  # another thread
    budget = Budget(repo=Caps(automation_day_usd=2.0), prior=ledger.spent(_scope()))
    async with relay("anthropic", budget=budget, ledger=ledger, spend_scope=_scope()) as r:
        refused = await post(r, *ANTHROPIC)
    assert refused.status_code == 400 and fake.requests == []
    assert ("budget reached: this automation's cost today (UTC) is $2.0000 of a $2.0000 cap (automation_day_usd); "
            "raise the automation's max_usd_per_day in the repository's .github/bot.yml") in refused.text


async def test_the_call_that_crosses_an_automations_day_completes_and_the_next_is_refused(fake, relay, recorder):
    ledger = Ledger(recorder.db)
    fake.usage = FakeUsage(input=1000, output=200)
    budget = Budget(repo=Caps(automation_day_usd=0.015), prior=ledger.spent(_scope()))
    async with relay("anthropic", budget=budget, ledger=ledger, spend_scope=_scope()) as r:
        answers = [(await post(r, *ANTHROPIC)).status_code for _ in range(3)]
    assert answers == [200, 200, 400] and len(fake.main_requests()) == 2


async def test_a_run_that_is_no_automations_has_no_automation_day(fake, relay, recorder):
    ledger = Ledger(recorder.db)
    ledger.add("an-automation-run", _scope(), tokens=900, usd=5.0)
    budget = Budget(repo=Caps(automation_day_usd=1.0), prior=ledger.spent(_scope(automation=None)))
    async with relay("anthropic", budget=budget, ledger=ledger, spend_scope=_scope(automation=None)) as r:
        assert (await post(r, *ANTHROPIC)).status_code == 200
