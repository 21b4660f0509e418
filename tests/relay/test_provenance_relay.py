"""The provenance shows the relay's count: tokens and cost on its first line, model calls enforced."""
from __future__ import annotations

import json

from adapters.base import Tier, Usage
from bot.record import provenance
from bot.relay.budgets import Budget, Caps
from tests.fakes.provider import FakeUsage, say
from tests.relay.conftest import post

BODY = {"model": "claude-opus-4-8", "stream": True, "messages": []}


async def test_the_first_line_shows_the_tokens_and_cost_the_relay_counted(fake, relay, recorder, run_id):
    fake.script(say("ok", usage=FakeUsage(input=100_000, output=10_000, cached=20_000)))
    async with relay("anthropic") as r:
        await post(r, "/v1/messages", BODY)
    line = provenance.build(recorder, run_id, usage=Usage(5, 5)).summary_line()  # the CLI's claim is ignored
    assert "130.0k tokens · $0.76" in line


async def test_model_calls_move_to_the_enforced_row(fake, relay, recorder, run_id):
    async with relay("anthropic", budget=Budget(operator=Caps(turn_tokens=1))) as r:
        await post(r, "/v1/messages", BODY)
        await post(r, "/v1/messages", BODY)
    enforced = provenance.build(recorder, run_id).tiers["enforced"]["what"]
    assert enforced.startswith("model: 2 calls (1 refused)")


def _older_unpriced_call(recorder, run_id: str, model: str) -> None:
    """A call recorded unpriced by a relay from before unpriced models were refused (the relay now
    refuses them: tests/relay/test_unpriced_models.py); such records still read as they did."""
    detail = {"provider": "anthropic", "api": "anthropic", "model": model, "status": 200, "cost_usd": "unpriced",
              "tokens": {"input_tokens": 1000, "output_tokens": 100, "cached_tokens": 0, "cache_write_tokens": 0,
                         "reasoning_tokens": 0, "long_cache_write_tokens": 0}}
    recorder.record(run_id, Tier.ENFORCED, "model_call", tool="anthropic/anthropic", outcome="ok",
                    raw=json.dumps(detail))


def test_a_model_without_a_price_is_named_as_such_on_the_first_line(recorder, run_id):
    _older_unpriced_call(recorder, run_id, "claude-future-9")
    line = provenance.build(recorder, run_id).summary_line()
    assert "1.1k tokens · price unknown for claude-future-9" in line and "$" not in line


def test_an_unpriced_model_name_that_is_not_a_plain_model_id_is_not_repeated(recorder, run_id):
    _older_unpriced_call(recorder, run_id, "@octo/team [click](https://evil.example)")
    line = provenance.build(recorder, run_id).summary_line()
    assert "price unknown for a model with an unlisted name" in line and "evil" not in line and "@" not in line
