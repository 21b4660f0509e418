"""The provenance shows the relay's count: tokens and cost on its first line, model calls enforced."""
from __future__ import annotations

from adapters.base import Usage
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


async def test_a_model_without_a_price_is_named_as_such_on_the_first_line(fake, relay, recorder, run_id):
    fake.script(say("ok", usage=FakeUsage(input=1000, output=100)))
    async with relay("anthropic") as r:
        await post(r, "/v1/messages", dict(BODY, model="claude-future-9"))
    line = provenance.build(recorder, run_id).summary_line()
    assert "1.1k tokens · price unknown for claude-future-9" in line and "$" not in line


async def test_an_unpriced_model_name_that_is_not_a_plain_model_id_is_not_repeated(fake, relay, recorder, run_id):
    fake.script(say("ok"))
    async with relay("anthropic") as r:
        await post(r, "/v1/messages", dict(BODY, model="@octo/team [click](https://evil.example)"))
    line = provenance.build(recorder, run_id).summary_line()
    assert "price unknown for a model with an unlisted name" in line and "evil" not in line and "@" not in line
