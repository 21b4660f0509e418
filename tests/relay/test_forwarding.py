"""The relay forwards the CLI's model calls with the real key; the CLI holds only the episode token."""
from __future__ import annotations

import asyncio
import re

import httpx

from tests.fakes.provider import say
from tests.relay.conftest import ANTHROPIC, REAL_KEY, header, model_calls, post


async def test_provider_sees_the_real_key_while_the_client_holds_only_the_episode_token(fake, relay):
    fake.script(say("hello from the provider"))
    async with relay("anthropic") as r:
        answer = await post(r, *ANTHROPIC, headers={"x-api-key": r.token})
    seen = fake.main_requests()[0]
    assert answer.status_code == 200 and "hello from the provider" in answer.text
    assert header(seen, "x-api-key") == REAL_KEY
    assert r.token not in " ".join(seen.headers.values()) + seen.path and r.token != REAL_KEY


async def test_a_bearer_token_is_swapped_for_the_real_openai_key(fake, relay):
    fake.script(say("ok"))
    async with relay("openai") as r:
        await post(r, "/v1/responses", {"model": "gpt-5.5", "stream": True, "input": []},
                   headers={"Authorization": f"Bearer {r.token}"})
    assert header(fake.main_requests()[0], "authorization") == f"Bearer {REAL_KEY}"


async def test_a_gemini_key_in_the_query_is_moved_to_the_provider_header(fake, relay):
    fake.script(say("ok"))
    async with relay("google") as r:
        answer = await post(r, f"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key={r.token}",
                            {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, headers={})
    request = fake.main_requests()[0]
    assert answer.status_code == 200
    assert (header(request, "x-goog-api-key"), request.path) == \
        (REAL_KEY, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")


async def test_a_wrong_token_is_refused_and_never_forwarded(fake, relay, recorder, run_id):
    async with relay("anthropic") as r:
        answer = await post(r, *ANTHROPIC, headers={"x-api-key": "sk-guessed"})
    assert answer.status_code == 401 and answer.json()["type"] == "error"
    assert fake.requests == []
    assert [c["outcome"] for c in model_calls(recorder, run_id)] == ["refused:unauthorized"]


async def test_a_second_key_header_with_another_value_is_refused(fake, relay):
    async with relay("anthropic") as r:
        answer = await post(r, *ANTHROPIC, headers={"x-api-key": r.token, "authorization": "Bearer other"})
    assert answer.status_code == 401 and fake.requests == []


async def test_a_path_outside_the_model_api_is_refused_and_recorded(fake, relay, recorder, run_id):
    async with relay("anthropic") as r:
        answer = await post(r, "/v1/files", {"purpose": "x"})
    assert answer.status_code == 404 and fake.requests == []
    recorded = model_calls(recorder, run_id)
    assert (recorded[0]["outcome"], recorded[0]["detail"]["notes"]) == ("refused:path", ["POST /v1/files"])


async def test_another_providers_api_is_refused(fake, relay):
    async with relay("anthropic") as r:
        answer = await post(r, "/v1/responses", {"model": "gpt-5.5", "input": []})
    assert answer.status_code == 404 and fake.requests == []


async def test_claude_preflight_head_is_answered_by_the_relay(fake, relay):
    async with relay("anthropic") as r, httpx.AsyncClient() as client:
        answer = await client.head(r.url + "/")
    assert answer.status_code == 200 and fake.requests == []


async def test_a_stream_reaches_the_client_before_the_provider_finishes(relay):
    """The relay passes each event on as it arrives: the client reads the first one while the
    provider still holds the rest back."""
    release = asyncio.Event()

    async def slow_provider(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        first = b'event: ping\ndata: {"type":"ping"}\n\n'
        writer.write(b"%x\r\n%s\r\n" % (len(first), first))
        await writer.drain()
        await release.wait()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(slow_provider, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server, relay("anthropic", base_url=base) as r, httpx.AsyncClient() as client:
        async with client.stream("POST", r.url + "/v1/messages", json=ANTHROPIC[1],
                                 headers={"x-api-key": r.token}) as answer:
            chunks = answer.aiter_bytes()
            first = await asyncio.wait_for(chunks.__anext__(), 10)
            release.set()
            rest = b"".join([chunk async for chunk in chunks])
    assert first.startswith(b"event: ping") and rest == b""


async def test_neither_the_key_nor_the_episode_token_reaches_the_record(fake, relay, recorder, run_id):
    fake.script(say(f"echoing {REAL_KEY}"))
    async with relay("anthropic") as r:
        await post(r, *ANTHROPIC)
        await post(r, "/v1/files?key=" + r.token, {}, headers={"x-api-key": r.token})
        token = r.token
    stored = " ".join(str(value) for row in recorder.db.query("select * from run_events") for value in row.values())
    assert model_calls(recorder, run_id) and REAL_KEY not in stored and token not in stored


async def test_after_a_stop_every_call_is_refused_without_reaching_the_provider(fake, relay):
    async with relay("anthropic") as r:
        r.stop("stopped by @alice")
        refused = await post(r, *ANTHROPIC)
    assert refused.status_code == 400 and "stopped by @alice" in refused.json()["error"]["message"]
    assert fake.requests == []


async def test_a_sized_reply_keeps_its_content_length(fake, relay):
    """A reply the provider sized is passed on as it is: the relay's server does not re-chunk it."""
    fake.script(say("sized"))
    async with relay() as r:
        answer = await post(r, *ANTHROPIC)
    assert answer.headers.get("content-length") == str(len(answer.content))
    assert "transfer-encoding" not in answer.headers


async def test_a_provider_that_cuts_a_sized_reply_short_is_recorded_as_cut(relay, recorder, run_id):
    async def short_provider(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"id\":")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(short_provider, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server, relay("anthropic", base_url=base) as r:
        try:
            await post(r, *ANTHROPIC)
        except httpx.HTTPError:
            pass  # the client sees the answer end early
    assert model_calls(recorder, run_id)[-1]["outcome"].startswith("error:cut")


async def test_a_cookie_the_provider_sets_is_never_sent_back_upstream(relay):
    """The relay's upstream client keeps no cookie jar: a provider's Set-Cookie reaches neither
    the CLI nor the provider's next call (no state the bot did not choose to send)."""
    seen: list[bytes] = []

    async def cookie_provider(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                break
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
            await reader.readexactly(length)
            seen.append(head)
            body = b'{"id":"msg_1","type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}'
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nset-cookie: session=tracked; Path=/\r\n"
                         b"content-length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(cookie_provider, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server, relay("anthropic", base_url=base) as r, httpx.AsyncClient() as client:
        first = await client.post(r.url + "/v1/messages", json=ANTHROPIC[1], headers={"x-api-key": r.token})
        await client.post(r.url + "/v1/messages", json=ANTHROPIC[1], headers={"x-api-key": r.token})
    assert "set-cookie" not in first.headers
    assert len(seen) == 2 and b"session=tracked" not in seen[1].lower()
