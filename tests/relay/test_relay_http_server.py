"""The relay's own HTTP/1.1 server (bot/relay/http_server.py) towards the sandbox's CLI: the framing
llhttp refuses stays refused, a kept connection carries call after call (pipelined ones in order), a
body over the cap is refused without being read, a client that goes away mid-stream ends the call to
the provider, and one that half-closes still gets the answer to what it sent whole."""
from __future__ import annotations

import asyncio
import json
import logging

import h11

from bot.relay import http_server
from bot.relay.server import REQUEST_CAP
from tests.fakes.provider import say
from tests.relay.conftest import ANTHROPIC, model_calls
from tests.relay.test_hostile_framing import exchange, messages_request


def responses(data: bytes) -> list[tuple[int, bytes]]:
    """The answers in what the relay sent (status, body), read by h11 as a client would: it raises
    on a malformed one, and on one cut short."""
    if not data:
        return []  # closed without a word: what a request left unfinished gets
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="GET", target="/", headers=[("host", "relay")]))
    client.send(h11.EndOfMessage())
    client.receive_data(data)
    client.receive_data(b"")
    found: list[tuple[int, bytes]] = []
    status, body = 0, b""
    while True:
        event = client.next_event()
        if isinstance(event, h11.Response):
            status, body = event.status_code, b""
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            found.append((status, body))
            if client.their_state is h11.MUST_CLOSE or not client.trailing_data[0]:
                assert not client.trailing_data[0], "bytes after an answer that closes the connection"
                return found
            client.start_next_cycle()
            client.send(h11.Request(method="GET", target="/", headers=[("host", "relay")]))
            client.send(h11.EndOfMessage())
        elif event is h11.NEED_DATA:
            raise AssertionError(f"an answer was cut short: {data[-200:]!r}")
        elif isinstance(event, h11.ConnectionClosed):
            return found


async def test_a_duplicate_content_length_is_refused_with_400(relay, fake):
    fake.script(say("never"))
    async with relay() as live:
        body = json.dumps(ANTHROPIC[1]).encode()
        answer = await exchange(live.port, messages_request(live.token, framing=b"content-length: %d\r\n"
                                                            b"content-length: %d\r\n" % (len(body), len(body))))
    assert answer.startswith(b"HTTP/1.1 400 ") and fake.requests == []


async def test_a_folded_header_line_is_refused_with_400(relay, fake):
    fake.script(say("never"))
    async with relay() as live:
        answer = await exchange(live.port, messages_request(live.token, extra_head=b"x-a: b\r\n folded\r\n"))
    assert answer.startswith(b"HTTP/1.1 400 ") and fake.requests == []


async def test_a_head_ended_by_bare_line_feeds_is_refused_with_400(relay, fake):
    fake.script(say("never"))
    async with relay() as live:
        request = messages_request(live.token).replace(b"\r\n", b"\n", 2)
        answer = await exchange(live.port, request)
    assert answer.startswith(b"HTTP/1.1 400 ") and fake.requests == []


async def test_a_declared_body_over_the_cap_is_refused_with_413_before_it_is_sent(relay, fake, recorder, run_id):
    fake.script(say("never"))
    async with relay() as live:
        answer = await exchange(live.port, messages_request(live.token, framing=b"content-length: %d\r\n"
                                                            % (REQUEST_CAP + 1)))
    assert answer.startswith(b"HTTP/1.1 413 ") and b"connection: close" in answer.lower()
    assert fake.requests == [] and model_calls(recorder, run_id)[0]["outcome"] == "refused:too_large"


async def test_a_kept_connection_answers_pipelined_calls_in_order(relay, fake):
    fake.script(say("first"), say("second"))
    async with relay() as live:
        reader, writer = await asyncio.open_connection("127.0.0.1", live.port)
        writer.write(messages_request(live.token) * 2)
        writer.write_eof()
        data = await asyncio.wait_for(reader.read(), 30)
        writer.close()
    answers = responses(data)
    assert [status for status, _ in answers] == [200, 200]
    assert b"first" in answers[0][1] and b"second" in answers[1][1]


async def test_a_client_that_half_closes_gets_the_answer_to_what_it_sent(relay, fake):
    fake.script(say("still answered"))
    async with relay() as live:
        reader, writer = await asyncio.open_connection("127.0.0.1", live.port)
        writer.write(messages_request(live.token))
        writer.write_eof()
        data = await asyncio.wait_for(reader.read(), 30)
        writer.close()
    [(status, body)] = responses(data)
    assert status == 200 and b"still answered" in body


async def test_a_client_that_goes_away_mid_stream_ends_the_call_to_the_provider(relay, recorder, run_id, caplog):
    provider_saw_the_end = asyncio.Event()

    async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        event = b'event: ping\ndata: {"type": "ping"}\n\n'
        try:
            while not reader.at_eof():
                writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                await writer.drain()
                await asyncio.sleep(0.01)
        except ConnectionError:
            pass
        provider_saw_the_end.set()

    server = await asyncio.start_server(endless, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    caplog.set_level(logging.WARNING)
    async with server, relay("anthropic", base_url=base) as live:
        reader, writer = await asyncio.open_connection("127.0.0.1", live.port)
        writer.write(messages_request(live.token))
        await reader.readuntil(b"ping")
        writer.transport.abort()  # the CLI is killed: its socket is reset
        await asyncio.wait_for(provider_saw_the_end.wait(), 30)
    [call] = model_calls(recorder, run_id)
    assert call["outcome"] == "interrupted" and "the client went away" in " ".join(call["detail"]["notes"])
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_the_stop_leaves_no_task_of_the_server_running(relay, fake):
    fake.script(say("one"))
    async with relay() as live:
        reader, writer = await asyncio.open_connection("127.0.0.1", live.port)
        writer.write(messages_request(live.token))
        await reader.readuntil(b"one")
        server = live._server
    assert server is not None and server.tasks() == set() and server.connections == set()
    writer.close()


async def test_an_idle_kept_connection_is_closed(relay, fake, monkeypatch):
    monkeypatch.setattr(http_server, "KEEP_ALIVE_S", 0.05)
    async with relay() as live:
        reader, writer = await asyncio.open_connection("127.0.0.1", live.port)
        closed = await asyncio.wait_for(reader.read(), 30)
        writer.close()
    assert closed == b""


async def test_an_http_1_0_client_gets_a_stream_unchunked_ended_by_the_close(relay):
    event = b'event: ping\ndata: {"type": "ping"}\n\n'

    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                     b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(chunked, "127.0.0.1", 0)
    async with server, relay("anthropic", base_url=f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}") as live:
        request = messages_request(live.token).replace(b"HTTP/1.1", b"HTTP/1.0", 1)
        answer = await exchange(live.port, request)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and b"transfer-encoding" not in head.lower()
    assert b"connection: close" in head.lower() and body == event


async def test_a_client_reading_slowly_gets_the_whole_answer_after_the_relay_waited_for_it(relay):
    body = b'{"type": "message", "content": "' + b"x" * (12 << 20) + b'"}'

    async def large(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body))
        writer.write(body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(large, "127.0.0.1", 0)
    async with server, relay("anthropic", base_url=f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}") as live:
        reader, writer = await asyncio.open_connection("127.0.0.1", live.port, limit=1 << 16)
        writer.transport.pause_reading()  # the CLI reads nothing for now
        writer.write(messages_request(live.token))
        await asyncio.wait_for(_paused(live), 30)  # the relay waits for the CLI to read
        writer.transport.resume_reading()
        head = await reader.readuntil(b"\r\n\r\n")
        received = await asyncio.wait_for(reader.readexactly(len(body)), 60)
        writer.close()
    assert head.startswith(b"HTTP/1.1 200 ") and received == body


async def _paused(live) -> None:
    assert live._server is not None
    while not any(connection.paused for connection in live._server.connections):
        await asyncio.sleep(0.01)


async def test_a_head_over_the_cap_that_arrives_in_one_read_is_refused_with_431():
    """The cap counts the head's parsed bytes, not only those of reads that end inside it: a head a
    little over the cap, well within one read, is refused and never reaches the handler."""
    reached = []

    async def handler(request: http_server.Request, reply: http_server.Reply) -> None:
        reached.append(request)
        reply.start(200, [(b"content-length", b"0")])
        reply.end()

    server = http_server.Server(handler, head_cap=1024, body_cap=1 << 20, write_buffer=1 << 16)
    port = await server.start()
    try:
        head = b"GET /v1/models HTTP/1.1\r\nhost: relay\r\nx-padding: " + b"a" * 1100 + b"\r\n\r\n"
        answer = await exchange(port, head)
        fits = await exchange(port, b"GET /v1/models HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\r\n")
    finally:
        await server.stop(1.0)
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert fits.startswith(b"HTTP/1.1 200 ") and len(reached) == 1
