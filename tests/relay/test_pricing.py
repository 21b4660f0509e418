"""Calls are priced at list price from a dated table the operator can extend; unknown models are unpriced."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import bot.relay as relay_package
from bot.config import Settings
from bot.relay import wire_api
from bot.relay.pricing import Price, PriceTable, PriceTableError, builtin_table, load_table
from bot.relay.server import ModelRelay, Upstream
from bot.relay.usage import CallUsage
from tests.entry_settings import current
from tests.fakes.provider import FakeUsage, say
from tests.relay.conftest import REAL_KEY, model_calls, post

USAGE = CallUsage(input_tokens=1_000_000, output_tokens=100_000, cached_tokens=2_000_000)


def test_the_builtin_table_is_dated_and_every_model_has_input_and_output_prices():
    table = builtin_table()
    assert table.version == json.loads((Path(relay_package.__file__).parent / "prices.json").read_text())["date"]
    assert all(price.input >= 0 and price.output >= 0 for price in table.models.values())


def test_a_listed_model_costs_its_list_price():
    # claude-opus-4-8: $5 input, $25 output, $0.50 cache read per million tokens
    assert builtin_table().cost("claude-opus-4-8", USAGE) == pytest.approx(5 + 2.5 + 1.0)


def test_a_dated_model_name_is_priced_as_its_model_through_an_api_whose_record_says_so():
    for api in ("anthropic", "responses", "chat"):
        assert builtin_table().cost("claude-sonnet-4-5-20250929", USAGE, wire_api.get(api)) \
            == builtin_table().cost("claude-sonnet-4-5", USAGE)


def test_a_gemini_resource_name_is_priced_as_its_model_through_the_gemini_record_only():
    gemini = wire_api.get("gemini")
    assert builtin_table().price("models/gemini-2.5-flash", gemini) == builtin_table().price("gemini-2.5-flash")
    assert builtin_table().price("models/gemini-2.5-flash", wire_api.get("chat")) is None


def test_a_record_that_says_nothing_of_prices_looks_a_model_up_by_its_exact_name_only():
    """The fact left out fails closed: a name the table does not list is unpriced (the call is refused)."""
    silent = dataclasses.replace(wire_api.get("anthropic"), price_names=wire_api.exact)
    table = builtin_table()
    assert table.price("claude-sonnet-4-5", silent) is not None
    assert table.price("claude-sonnet-4-5-20250929", silent) is None
    assert table.price("claude-sonnet-4-5-20250929") is None  # and so without an API


def test_a_listed_model_is_priced_as_itself_through_every_api():
    """A record's names never shadow the table: the model's own entry comes first."""
    table = builtin_table()
    for record in wire_api.records():
        for model, price in table.models.items():
            assert table.price(model, record) is price, (record.name, model)


def test_a_listed_snapshot_keeps_its_own_price():
    table = builtin_table()
    dated = PriceTable(table.models | {"claude-sonnet-4-5-20250929": Price(1.0, 1.0)}, table.aliases, "test")
    assert dated.price("claude-sonnet-4-5-20250929", wire_api.get("anthropic")) == Price(1.0, 1.0)


def test_an_alias_is_followed_from_each_name_an_api_looks_up():
    assert builtin_table().price("claude-opus-4-20250514", wire_api.get("anthropic")) \
        == builtin_table().price("claude-opus-4-0")


def test_an_unknown_model_is_unpriced():
    assert builtin_table().cost("gemini-9-ultra", USAGE) is None


async def test_an_unpriced_call_is_refused_and_charges_nothing(fake, relay, recorder, run_id):
    """It was counted in tokens and marked unpriced, which let it pass every money cap
    (tests/relay/test_unpriced_models.py has the rest)."""
    fake.script(say("ok", usage=FakeUsage(input=70, output=30)))
    async with relay("anthropic") as r:
        await post(r, "/v1/messages", {"model": "claude-future-9", "messages": []})
    assert [c["outcome"] for c in model_calls(recorder, run_id)] == ["refused:unpriced"]
    assert (r.budget.turn.tokens, r.budget.turn.unpriced_calls, fake.main_requests()) == (0, 0, [])


def test_the_operator_file_adds_and_replaces_models(tmp_path, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"date": "2026-12-01", "models": {
        "gateway/fast": {"input": 1, "output": 2}, "claude-opus-4-8": {"input": 4, "output": 20}}}))
    monkeypatch.setenv("BOT_RELAY_PRICES", str(prices))
    table = load_table(current())
    assert table.cost("gateway/fast", CallUsage(input_tokens=1_000_000)) == 1
    assert table.price("claude-opus-4-8").input == 4
    assert table.version.endswith("+ 2026-12-01")


def test_an_unreadable_operator_file_names_the_variable(tmp_path, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"m": {"input": "cheap"}}}))
    monkeypatch.setenv("BOT_RELAY_PRICES", str(prices))
    with pytest.raises(PriceTableError, match="BOT_RELAY_PRICES"):
        load_table(current())


def _operator_file(tmp_path: Path) -> Path:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"date": "2026-12-01", "models": {"gateway/fast": {"input": 1, "output": 2}}}))
    return prices


def test_the_operators_price_file_is_the_one_in_the_settings_handed_down(tmp_path, monkeypatch):
    monkeypatch.delenv("BOT_RELAY_PRICES", raising=False)
    table = load_table(Settings({"BOT_RELAY_PRICES": str(_operator_file(tmp_path))}))
    assert table.price("gateway/fast") is not None


def test_a_relay_given_no_price_table_prices_at_the_built_in_list_prices(tmp_path, recorder, run_id, monkeypatch):
    monkeypatch.setenv("BOT_RELAY_PRICES", str(_operator_file(tmp_path)))
    relay = ModelRelay(Upstream("anthropic", REAL_KEY), recorder, run_id)
    assert relay.prices.price("gateway/fast") is None and relay.prices.version == builtin_table().version
