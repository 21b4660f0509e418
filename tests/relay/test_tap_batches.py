"""The relay hands the usage tap the reply in joined batches (bot/relay/server.py TAP_BATCH): a reply
longer than one batch is read batch by batch, with events cut at the batch edges, and still counted."""
from __future__ import annotations

import pytest

from bot.relay.server import TAP_BATCH
from tests.fakes.provider import say
from tests.relay.conftest import post
from tests.relay.test_usage import (
    ANTHROPIC_EXPECTED,
    ANTHROPIC_KNOWN,
    CASES,
    EXPECTED,
    KNOWN,
    _headers,
)


@pytest.mark.parametrize("case", ["anthropic streamed", "responses streamed", "gemini streamed"])
async def test_usage_of_a_reply_longer_than_one_tap_batch_is_counted(case, fake, relay):
    provider, path, body = CASES[case]
    anthropic = provider == "anthropic"
    text = "abcdefg " * (TAP_BATCH // 3)  # the SSE reply spans several batches
    fake.script(say(text, usage=ANTHROPIC_KNOWN if anthropic else KNOWN, pieces=3000))
    async with relay(provider) as r:
        answer = await post(r, path, body, headers=_headers(provider, r.token))
    assert answer.status_code == 200 and len(answer.content) > 2 * TAP_BATCH
    assert r.calls[-1].usage == (ANTHROPIC_EXPECTED if anthropic else EXPECTED)

