"""Budgets cannot be evaded or overrun: usage is obtained on the parsed request, a reply without
usage is charged its maximum, and admission holds each call's maximum until it is answered."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from bot.relay.budgets import Budget, Caps
from bot.relay.reservation import DEFAULT_MAX_OUTPUT
from tests.fakes.provider import FakeUsage, say
from tests.relay.conftest import ANTHROPIC, post

KNOWN = FakeUsage(input=1200, output=340)


async def test_a_chat_stream_whose_stream_key_is_escaped_still_gets_usage_and_is_charged(fake, relay):
    fake.script(say("ok", usage=KNOWN))
    raw = b'{"model": "gpt-5.5", "str\\u0065am": true, "messages": [{"role": "user", "content": "hi"}]}'
    async with relay("openai") as r, httpx.AsyncClient() as client:
        await client.post(r.url + "/v1/chat/completions", content=raw,
                          headers={"authorization": f"Bearer {r.token}", "content-type": "application/json"})
    assert fake.main_requests()[0].body["stream_options"] == {"include_usage": True}
    assert r.calls[-1].usage.output_tokens == 340 and r.budget.turn.tokens == 1540


def _no_usage_provider(body: bytes, content_type: bytes = b"application/json"):
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
                     % (content_type, len(body), body))
        await writer.drain()
        writer.close()
    return serve


async def _base(server: asyncio.Server) -> str:
    return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_a_reply_without_usage_is_charged_the_requests_max_tokens(relay):
    reply = b'{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}'
    server = await asyncio.start_server(_no_usage_provider(reply), "127.0.0.1", 0)
    async with server, relay("anthropic", base_url=await _base(server)) as r:
        answer = await post(r, *ANTHROPIC)
    [call] = r.calls
    assert answer.status_code == 200
    assert call.usage.output_tokens == ANTHROPIC[1]["max_tokens"]
    assert call.cost_usd == r.prices.cost("claude-opus-4-8", call.usage) and call.cost_usd > 0
    assert r.budget.turn.tokens == call.usage.total_tokens and "charged its maximum" in " ".join(call.notes)


async def test_a_reply_without_usage_to_a_request_naming_no_max_is_charged_the_declared_default(relay):
    reply = b'event: response.created\ndata: {"type":"response.created","response":{}}\n\n'
    server = await asyncio.start_server(_no_usage_provider(reply, b"text/event-stream"), "127.0.0.1", 0)
    async with server, relay("openai", base_url=await _base(server)) as r:
        await post(r, "/v1/responses", {"model": "gpt-5.5", "stream": True, "input": "hi"},
                   headers={"authorization": f"Bearer {r.token}"})
    assert r.calls[-1].usage.output_tokens == DEFAULT_MAX_OUTPUT


async def test_a_chat_call_asking_for_several_answers_holds_the_output_limit_of_each(relay):
    reply = b'{"id":"c","object":"chat.completion","model":"gpt-5.5","choices":[]}'
    server = await asyncio.start_server(_no_usage_provider(reply), "127.0.0.1", 0)
    async with server, relay("openai", base_url=await _base(server)) as r:
        await post(r, "/v1/chat/completions", {"model": "gpt-5.5", "max_tokens": 50, "n": 4, "messages": []},
                   headers={"authorization": f"Bearer {r.token}"})
    assert r.calls[-1].usage.output_tokens == 200


async def test_a_stream_the_provider_cut_short_is_charged_its_maximum(relay):
    """The provider cuts the stream once the client has its first event (usage of the input only)."""
    start = (b'event: message_start\ndata: {"type":"message_start","message":{"model":"claude-opus-4-8",'
             b'"usage":{"input_tokens":5,"output_tokens":1}}}\n\n')
    client_has_it = asyncio.Event()

    async def cutting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                     b"%x\r\n%s\r\n" % (len(start), start))
        await writer.drain()
        await client_has_it.wait()
        writer.close()

    server = await asyncio.start_server(cutting, "127.0.0.1", 0)
    async with server, relay("anthropic", base_url=await _base(server)) as r, httpx.AsyncClient() as client:
        async with client.stream("POST", r.url + "/v1/messages", json=ANTHROPIC[1],
                                 headers={"x-api-key": r.token}) as answer:
            chunks = answer.aiter_raw()
            await chunks.__anext__()
            client_has_it.set()
            try:
                async for _ in chunks:
                    pass
            except httpx.HTTPError:
                pass  # the client sees the answer end early
    assert r.calls[-1].charged_max and r.calls[-1].usage.output_tokens == ANTHROPIC[1]["max_tokens"]


class _HoldingProvider:
    """Answers every call with known usage, but only once released; counts the calls it saw."""

    def __init__(self, on_seen):
        self.seen = 0
        self.release = asyncio.Event()
        self._on_seen = on_seen

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        await reader.readexactly(length)
        self.seen += 1
        self._on_seen()
        await self.release.wait()
        body = json.dumps({"id": "m", "type": "message", "model": "claude-opus-4-8", "content": [],
                           "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                     b"connection: close\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()


async def _twelve_at_once(relay) -> tuple[int, list[int], object]:
    """Twelve calls at once against a cap one call's real usage fits but its hold does not; the
    provider answers once every call was either seen by it or answered by the relay."""
    settled = asyncio.Event()
    done: list[int] = []
    holding = _HoldingProvider(lambda: count())

    def count() -> None:
        if holding.seen + len(done) == 12:
            settled.set()

    server = await asyncio.start_server(holding.serve, "127.0.0.1", 0)
    budget = Budget(operator=Caps(turn_tokens=100))  # one call (15 tokens) fits; its hold (its maximum) does not
    async with server, relay("anthropic", base_url=await _base(server), budget=budget) as r:
        async def one() -> int:
            answer = await post(r, *ANTHROPIC)
            if answer.status_code != 200:
                done.append(answer.status_code)
                count()
            return answer.status_code
        calls = [asyncio.create_task(one()) for _ in range(12)]
        await asyncio.wait_for(settled.wait(), 30)
        holding.release.set()
        statuses = await asyncio.gather(*calls)
    return holding.seen, statuses, r


async def test_twelve_concurrent_calls_against_a_cap_that_fits_one_cross_it_by_at_most_one_call(relay):
    seen, statuses, r = await _twelve_at_once(relay)
    assert seen == 1 and statuses.count(200) == 1
    assert r.budget.turn.tokens == 15 and r.budget.held_tokens == 0  # settled to the real usage


async def test_a_call_refused_only_for_the_holds_of_calls_in_flight_is_told_to_retry_without_a_stop(relay):
    _, statuses, r = await _twelve_at_once(relay)
    assert sorted(set(statuses)) == [200, 429] and r.stopped is None


@pytest.mark.parametrize("cap", [Caps(turn_tokens=10_000), Caps(turn_usd=1.0)])
async def test_calls_one_after_another_are_charged_their_real_usage_not_their_hold(cap, fake, relay):
    fake.usage = FakeUsage(input=10, output=5)
    async with relay("anthropic", budget=Budget(operator=cap)) as r:
        answers = [await post(r, *ANTHROPIC) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert (r.budget.turn.tokens, r.budget.held_tokens) == (45, 0)
