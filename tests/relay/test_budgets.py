"""Budgets are enforced at the relay; a repository can lower the operator's caps, never raise them."""
from __future__ import annotations

import pytest

from bot.config import Settings
from bot.relay.budgets import Budget, Caps, Ledger, Scope, effective_caps, operator_caps
from tests.entry_settings import current
from tests.fakes.provider import FakeUsage, say
from tests.relay.conftest import ANTHROPIC, model_calls, post


def test_a_repository_cannot_raise_an_operator_cap():
    assert effective_caps(Caps(turn_tokens=1000), Caps(turn_tokens=5000)).turn_tokens == 1000


def test_a_repository_can_lower_an_operator_cap():
    assert effective_caps(Caps(turn_usd=2.0), Caps(turn_usd=0.5)).turn_usd == 0.5


def test_a_repository_can_cap_what_the_operator_left_open():
    assert effective_caps(Caps(), Caps(thread_tokens=10)).thread_tokens == 10


def test_a_negative_cap_is_refused():
    with pytest.raises(ValueError, match="turn_tokens"):
        Caps(turn_tokens=-1)


def test_operator_caps_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("BOT_BUDGET_TURN_TOKENS", "5000")
    monkeypatch.setenv("BOT_BUDGET_REQUESTER_DAY_USD", "2.5")
    assert operator_caps(current()) == Caps(turn_tokens=5000, requester_day_usd=2.5)


def test_operator_caps_are_the_ones_in_the_settings_handed_down(monkeypatch):
    monkeypatch.setenv("BOT_BUDGET_TURN_TOKENS", "5000")
    assert operator_caps(Settings({"BOT_BUDGET_TURN_TOKENS": "10"})) == Caps(turn_tokens=10)


async def test_a_token_budget_stops_a_client_that_keeps_calling(fake, relay, recorder, run_id):
    stops: list[str] = []
    fake.usage = FakeUsage(input=10, output=5)  # 15 tokens a call
    async with relay("anthropic", budget=Budget(operator=Caps(turn_tokens=40)), on_stop=stops.append) as r:
        answers = [await post(r, *ANTHROPIC) for _ in range(5)]
    assert [a.status_code for a in answers] == [200, 200, 200, 400, 400]
    assert len(fake.main_requests()) == 3
    assert answers[3].json()["error"]["type"] == "invalid_request_error"
    assert "budget reached" in answers[3].json()["error"]["message"]
    assert stops == ["budget reached: this turn's tokens is 45 tokens of a 40 tokens cap (turn_tokens); "
                     "the operator can raise BOT_BUDGET_TURN_TOKENS"]
    assert [c["outcome"] for c in model_calls(recorder, run_id)][3:] == ["refused:budget", "refused:stopped"]


async def test_a_cap_the_repository_set_says_where_to_raise_it(fake, relay):
    budget = Budget(operator=Caps(turn_tokens=1000), repo=Caps(turn_tokens=10))
    async with relay("anthropic", budget=budget) as r:
        await post(r, *ANTHROPIC)
        refused = await post(r, *ANTHROPIC)
    assert "raise budgets.turn_tokens in the repository's .github/bot.yml up to the operator's 1000" in \
        refused.json()["error"]["message"]


async def test_a_thread_over_its_budget_in_an_earlier_turn_is_refused_at_once(fake, relay, recorder):
    ledger, scope = Ledger(recorder.db), Scope(conversation="octo/repo#12", requester="42", installation="7")
    ledger.add("an-earlier-run", scope, tokens=900, usd=None)
    budget = Budget(operator=Caps(thread_tokens=900), prior=ledger.spent(scope))
    async with relay("anthropic", budget=budget, ledger=ledger, spend_scope=scope) as r:
        refused = await post(r, *ANTHROPIC)
    assert refused.status_code == 400 and "this thread's tokens is 900 tokens" in refused.text
    assert fake.requests == []


async def test_spend_is_written_to_the_ledger_per_requester_and_installation(fake, relay, recorder):
    ledger, scope = Ledger(recorder.db), Scope(conversation="octo/repo#12", requester="42", installation="7")
    fake.script(say("ok", usage=FakeUsage(input=100, output=20)))
    async with relay("anthropic", ledger=ledger, spend_scope=scope) as r:
        await post(r, *ANTHROPIC)
    spent = ledger.spent(Scope(requester="42", installation="7"))
    assert (spent["requester_day"].tokens, spent["installation_month"].tokens) == (120, 120)
    assert spent["requester_day"].usd == pytest.approx((100 * 5 + 20 * 25) / 1e6)
