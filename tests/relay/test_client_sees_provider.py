"""A client cannot tell the relay from the provider: what the relay asked for on its own behalf
(a chat stream's usage) is removed from what the client receives, byte for byte otherwise, and the
billing headers come from the operator, never from the sandbox."""
from __future__ import annotations

import itertools

import httpx
import openai
import pytest

from bot.relay.server import ModelRelay, Upstream
from tests.fakes import provider as fake_provider
from tests.fakes.provider import FakeUsage, say
from tests.relay.conftest import REAL_KEY, header

CHAT = {"model": "gpt-5.5", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


async def _raw(url: str, key: str, body: dict, monkeypatch) -> bytes:
    monkeypatch.setattr(fake_provider, "_ids", itertools.count(7))  # the same reply id both ways
    async with httpx.AsyncClient() as client:
        answer = await client.post(url + "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {key}"})
    return answer.content


async def test_a_chat_stream_that_did_not_ask_for_usage_reaches_the_client_as_the_provider_sent_it(
        fake, relay, monkeypatch):
    fake.script(say("one two three", pieces=3), say("one two three", pieces=3))
    direct = await _raw(fake.url, REAL_KEY, CHAT, monkeypatch)
    async with relay("openai") as r:
        relayed = await _raw(r.url, r.token, CHAT, monkeypatch)
    assert relayed == direct and b'"usage"' not in relayed
    assert r.calls[-1].usage is not None  # asked upstream all the same, and counted


async def test_a_chat_stream_that_asked_for_usage_gets_it_byte_for_byte(fake, relay, monkeypatch):
    body = dict(CHAT, stream_options={"include_usage": True})
    fake.script(say("ok", usage=FakeUsage(input=3, output=2)), say("ok", usage=FakeUsage(input=3, output=2)))
    direct = await _raw(fake.url, REAL_KEY, body, monkeypatch)
    async with relay("openai") as r:
        relayed = await _raw(r.url, r.token, body, monkeypatch)
    assert relayed == direct and b'"completion_tokens": 2' in relayed


async def _sdk_chunks(base_url: str, key: str) -> list[dict]:
    async with openai.AsyncOpenAI(base_url=base_url + "/v1", api_key=key, max_retries=0) as client:
        stream = await client.chat.completions.create(model="gpt-5.5", messages=[{"role": "user", "content": "hi"}],
                                                      stream=True)
        return [chunk.model_dump(exclude={"id"}) async for chunk in stream]


async def test_the_openai_sdk_reads_choices_on_every_relayed_chunk_as_on_a_direct_call(fake, relay):
    fake.script(say("alpha beta", pieces=2), say("alpha beta", pieces=2))
    direct = await _sdk_chunks(fake.url, REAL_KEY)
    async with relay("openai") as r:
        relayed = await _sdk_chunks(r.url, r.token)
    assert relayed == direct and all(chunk["choices"] for chunk in relayed)


async def test_openai_billing_headers_come_from_the_operator_never_from_the_sandbox(fake, recorder, run_id):
    fake.script(say("ok"))
    upstream = Upstream("openai", REAL_KEY, base_url=fake.url, billing=(("OpenAI-Organization", "org-operator"),))
    async with ModelRelay(upstream, recorder, run_id) as r, httpx.AsyncClient() as client:
        await client.post(r.url + "/v1/chat/completions", json=dict(CHAT, stream=False), headers={
            "authorization": f"Bearer {r.token}", "openai-organization": "org-sandbox", "openai-project": "proj-x"})
    seen = fake.main_requests()[0]
    assert (header(seen, "openai-organization"), header(seen, "openai-project")) == ("org-operator", None)


async def test_the_openai_sdk_reads_a_refusal_of_the_relay_as_an_openai_error(fake, relay):
    mcp = {"type": "mcp", "server_label": "x", "server_url": "https://attacker.example/mcp", "require_approval": "never"}
    async with relay("openai") as r, openai.AsyncOpenAI(base_url=r.url + "/v1", api_key=r.token, max_retries=0) as client:
        with pytest.raises(openai.BadRequestError) as refused:
            await client.responses.create(model="gpt-5.5", input="hi", tools=[mcp])
    assert "web access is off" in refused.value.message and refused.value.type == "invalid_request_error"
    assert fake.requests == []


async def test_an_operator_header_that_would_break_the_requests_framing_is_refused_and_never_sent(fake, recorder,
                                                                                                   run_id):
    fake.script(say("never"))
    upstream = Upstream("openai", REAL_KEY, base_url=fake.url,
                        billing=(("OpenAI-Organization", "org-a\r\nx-smuggled: 1"),))
    async with ModelRelay(upstream, recorder, run_id) as r, \
            openai.AsyncOpenAI(base_url=r.url + "/v1", api_key=r.token, max_retries=0) as client:
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(**dict(CHAT, stream=False))
    assert "cannot pass this request on" in refused.value.message
    assert fake.requests == [] and r.calls[0].outcome == "refused:request"
