"""The relay's listener is reached from inside the sandbox, so a request's framing is hostile: a head
past the cap, a body both sized and chunked, or a malformed request line is refused, nothing of it
reaches the provider, and a well-framed call on the next connection is still served."""
from __future__ import annotations

import asyncio
import json

from bot.relay.server import HEAD_CAP
from tests.fakes.provider import say
from tests.relay.conftest import ANTHROPIC, post


async def exchange(port: int, data: bytes) -> bytes:
    """Send raw bytes to the relay and read what it answers until it closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(1 << 16), 30)
    finally:
        writer.close()


def messages_request(token: str, extra_head: bytes = b"", framing: bytes | None = None) -> bytes:
    body = json.dumps(ANTHROPIC[1]).encode()
    framing = framing if framing is not None else b"content-length: %d\r\n" % len(body)
    return (b"POST /v1/messages HTTP/1.1\r\nhost: relay\r\nx-api-key: " + token.encode() + b"\r\n"
            b"content-type: application/json\r\n" + extra_head + framing + b"\r\n" + body)


async def test_a_head_past_the_cap_is_refused_with_431(relay, fake):
    fake.script(say("never"))
    async with relay() as live:
        huge = b"x-padding: " + b"a" * (HEAD_CAP + 1) + b"\r\n"
        answer = await exchange(live.port, messages_request(live.token, extra_head=huge))
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert fake.requests == []


async def test_a_body_both_sized_and_chunked_is_refused_with_400(relay, fake):
    fake.script(say("never"))
    async with relay() as live:
        smuggled = messages_request(live.token, framing=b"content-length: 5\r\ntransfer-encoding: chunked\r\n")
        answer = await exchange(live.port, smuggled)
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert fake.requests == []


async def test_a_malformed_request_line_is_refused_with_400(relay, fake):
    fake.script(say("never"))
    async with relay() as live:
        answer = await exchange(live.port, b"POST /v1/messages HTTP/9.9 junk\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert fake.requests == []


async def test_a_call_after_a_refused_head_is_still_served(relay, fake):
    fake.script(say("still here"))
    async with relay() as live:
        huge = b"x-padding: " + b"a" * (HEAD_CAP + 1) + b"\r\n"
        await exchange(live.port, messages_request(live.token, extra_head=huge))
        answer = await post(live, *ANTHROPIC)
    assert answer.status_code == 200 and "still here" in answer.text
