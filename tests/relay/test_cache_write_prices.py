"""Cache writes are read from each API and priced at the rate of their retention: Anthropic's
five-minute writes at 1.25x input and one-hour writes at 2x; OpenAI's cache writes (reported in
the input token details) at their cache-write price, the 12-hour ones at the longer rate."""
from __future__ import annotations

import pytest

from bot.relay.pricing import builtin_table
from bot.relay.usage import CallUsage
from bot.relay.wire_apis import openai_family
from bot.relay.wire_apis.anthropic import usage as anthropic_usage
from tests.fakes.provider import FakeUsage, say
from tests.relay.conftest import post

MILLION = 1_000_000


def test_anthropic_one_hour_cache_writes_are_read_apart_from_five_minute_ones():
    usage = anthropic_usage({"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 300,
                             "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}})
    assert (usage.cache_write_tokens, usage.long_cache_write_tokens) == (300, 200)


def test_anthropic_one_hour_cache_writes_cost_twice_the_input_price():
    # claude-opus-4-8: $5 input; a 1h write $10, a 5m write $6.25 per million tokens
    usage = CallUsage(cache_write_tokens=MILLION, long_cache_write_tokens=MILLION)
    assert builtin_table().cost("claude-opus-4-8", usage) == pytest.approx(10.0)


def test_anthropic_five_minute_cache_writes_cost_one_and_a_quarter_the_input_price():
    usage = CallUsage(cache_write_tokens=2 * MILLION, long_cache_write_tokens=MILLION)
    assert builtin_table().cost("claude-sonnet-4-6", usage) == pytest.approx(3.75 + 6.0)


def test_every_anthropic_model_prices_its_cache_writes_at_the_published_multiples():
    claude = {name: price for name, price in builtin_table().models.items() if name.startswith("claude-")}
    assert claude and all(p.cache_write == pytest.approx(1.25 * p.input) and p.cache_write_long == pytest.approx(2 * p.input)
                          for p in claude.values()), claude


def test_openai_cache_writes_are_read_from_the_input_details_and_not_counted_as_fresh_input():
    usage = openai_family.usage({"input_tokens": 1000, "output_tokens": 50, "input_tokens_details": {
        "cached_tokens": 300, "cache_write_tokens": 200,
        "cache_write_tokens_details": {"ttl_30m_tokens": 150, "ttl_12h_tokens": 50}}}, "input_tokens", "output_tokens")
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens, usage.long_cache_write_tokens) == (
        500, 300, 200, 50)


def test_a_chat_completion_reports_its_cache_writes_in_the_prompt_details():
    usage = openai_family.usage({"prompt_tokens": 100, "completion_tokens": 5,
                                 "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 40}},
                                "prompt_tokens", "completion_tokens")
    assert (usage.input_tokens, usage.cache_write_tokens) == (60, 40)


def test_openai_cache_writes_cost_their_cache_write_price():
    # gpt-6.2-sol: $2 input, $2.50 a 30-minute cache write, $5 a 12-hour one per million tokens
    usage = CallUsage(cache_write_tokens=2 * MILLION, long_cache_write_tokens=MILLION)
    assert builtin_table().cost("gpt-6.2-sol", usage) == pytest.approx(2.5 + 5.0)


RELAYED = {
    "anthropic streamed": ("anthropic", "/v1/messages", {"model": "claude-opus-4-8", "stream": True, "messages": []},
                           # 1M fresh at $5, 1M 5-minute writes at $6.25, 1M one-hour writes at $10
                           5 + 6.25 + 10),
    "responses streamed": ("openai", "/v1/responses", {"model": "gpt-6.2-sol", "stream": True, "input": "hi"},
                           # 1M fresh at $2, 1M 30-minute writes at $2.50, 1M 12-hour writes at $5
                           2 + 2.5 + 5),
}


@pytest.mark.parametrize("case", list(RELAYED))
async def test_a_relayed_call_is_charged_its_cache_writes_at_their_retention_rates(case, fake, relay):
    provider, path, body, expected = RELAYED[case]
    fake.script(say("ok", usage=FakeUsage(input=MILLION, output=0, cache_write=2 * MILLION, long_cache_write=MILLION)))
    async with relay(provider) as r:
        headers = {"x-api-key": r.token} if provider == "anthropic" else {"authorization": f"Bearer {r.token}"}
        answer = await post(r, path, body, headers=headers)
    assert answer.status_code == 200
    assert r.calls[-1].cost_usd == pytest.approx(expected)
