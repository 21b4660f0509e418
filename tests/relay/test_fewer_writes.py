"""The relay passes a call on in fewer, fuller writes, and never holds a byte for one still to come:
a request leaves for the provider in one write, a read takes what has arrived, and a reply's head
leaves for the CLI with the first piece of its body when that piece has come with it."""
from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from bot.relay import downstream, wire
from tests.fakes.provider import say
from tests.relay.conftest import ANTHROPIC, post


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


class _RecordedWrites:
    """A connection's transport whose writes are recorded on their way out."""

    def __init__(self, transport: asyncio.Transport, writes: list[bytes]):
        self._transport, self._writes = transport, writes

    def write(self, data: bytes) -> None:
        self._writes.append(bytes(data))
        self._transport.write(data)

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


async def _answering_server() -> tuple[asyncio.Server, int]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def test_a_requests_head_and_body_leave_for_the_provider_in_one_write(monkeypatch):
    writes: list[bytes] = []
    made = wire._Connection.connection_made
    monkeypatch.setattr(wire._Connection, "connection_made",
                        lambda self, transport: made(self, _RecordedWrites(transport, writes)))
    server, port = await _answering_server()
    async with server, httpx.AsyncClient(transport=wire.Transport(httpx.Limits())) as client:
        answer = await client.post(f"http://127.0.0.1:{port}/v1/messages", content=b"{}")
    assert answer.status_code == 200 and answer.content == b"ok"
    assert len(writes) == 1 and writes[0].startswith(b"POST /v1/messages HTTP/1.1\r\n") and writes[0].endswith(b"\r\n\r\n{}")


async def test_what_has_arrived_of_an_answer_is_read_in_one_piece():
    connection = wire._Connection(("http", "provider", 80))
    events = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in [b"data: {}\n\n"] * 4000)
    connection.data_received(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + events + b"0\r\n\r\n")
    await connection.head(5)
    assert await connection.next_piece(5) == b"data: {}\n\n" * 4000
    assert await connection.next_piece(5) is None


def test_a_header_that_would_end_the_head_early_is_refused_before_anything_is_written():
    request = httpx.Request("POST", "http://provider/v1/messages", headers={"x-note": "a"}, content=b"{}")
    request.headers["x-note"] = "a\r\nx-injected: 1"
    with pytest.raises(httpx.LocalProtocolError):
        wire.request_head(request)


async def test_an_answer_cut_before_its_end_is_an_error_not_a_short_body():
    connection = wire._Connection(("http", "provider", 80))
    connection.data_received(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf")
    connection.connection_lost(None)
    await connection.head(5)
    assert await connection.next_piece(5) == b"half"
    with pytest.raises(httpx.RemoteProtocolError):
        await connection.next_piece(5)


async def test_a_connection_read_to_its_end_is_kept_for_the_next_call(fake, relay):
    fake.keep_alive = True
    fake.script(say("one"), say("two"))
    async with relay("anthropic") as r:
        first = await post(r, *ANTHROPIC)
        second = await post(r, *ANTHROPIC)
        kept = len(r._transport._all)  # type: ignore[attr-defined]
    assert first.status_code == second.status_code == 200 and kept == 1


async def test_writes_made_in_one_turn_of_the_event_loop_leave_towards_the_cli_in_one_write():
    transport = _Transport()
    joined = downstream.Joined(transport)  # type: ignore[arg-type]
    joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
    joined.write(b"body")
    assert transport.writes == []
    await asyncio.sleep(0)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]


async def test_closing_the_connection_to_the_cli_first_sends_what_was_held():
    transport = _Transport()
    joined = downstream.Joined(transport)  # type: ignore[arg-type]
    joined.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
    joined.close()
    assert transport.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"] and transport.closed


async def test_a_small_reply_reaches_the_cli_in_one_piece_its_head_with_its_body(fake, relay, monkeypatch):
    monkeypatch.setattr(downstream, "HEAD_WAIT_S", 60.0)  # however loaded the machine, the body comes in time
    fake.keep_alive = True
    fake.script(say("hello in one piece"))
    async with relay("anthropic") as r:
        reader, writer = await asyncio.open_connection("127.0.0.1", r.port)
        body = json.dumps(ANTHROPIC[1]).encode()
        writer.write(b"POST %s HTTP/1.1\r\nhost: relay\r\nx-api-key: %s\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\n\r\n%s" % (ANTHROPIC[0].encode(), r.token.encode(), len(body), body))
        first = await reader.read(1 << 20)
        writer.close()
    head, _, rest = first.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    assert head.startswith(b"HTTP/1.1 200") and len(rest) == length and b"hello in one piece" in rest


async def test_a_replys_head_reaches_the_cli_while_the_provider_still_holds_its_body(relay):
    go = asyncio.Event()

    async def provider(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        await go.wait()  # the body only once the client has the head
        event = b'event: ping\ndata: {"type": "ping"}\n\n'
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(provider, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, relay("anthropic", base_url=f"http://127.0.0.1:{port}") as r, \
            httpx.AsyncClient(base_url=r.url, timeout=30) as client:
        async with client.stream("POST", ANTHROPIC[0], json=ANTHROPIC[1], headers={"x-api-key": r.token}) as answer:
            go.set()
            body = await asyncio.wait_for(answer.aread(), 60)
    assert answer.status_code == 200 and body == b'event: ping\ndata: {"type": "ping"}\n\n'


async def test_a_replys_last_bytes_are_on_their_way_to_the_cli_before_the_relay_records_the_call(fake, relay):
    fake.script(say("recorded after it left"))
    seen_when_recorded: list[bytes] = []
    cli: socket.socket | None = None

    def peek(_call: object) -> None:  # what the CLI's socket already holds when the call is recorded
        assert cli is not None
        seen_when_recorded.append(cli.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        recorded.set()

    recorded = asyncio.Event()
    async with relay("anthropic", on_call=peek) as r:
        cli = socket.create_connection(("127.0.0.1", r.port))
        body = json.dumps(ANTHROPIC[1]).encode()
        cli.sendall(b"POST %s HTTP/1.1\r\nhost: relay\r\nx-api-key: %s\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%s" % (ANTHROPIC[0].encode(), r.token.encode(), len(body), body))
        await asyncio.wait_for(recorded.wait(), 60)
        cli.close()
    assert b"recorded after it left" in seen_when_recorded[0]


async def test_a_write_of_a_segment_or_more_leaves_at_once_with_what_was_held_before_it():
    transport = _Transport()
    joined = downstream.Joined(transport)  # type: ignore[arg-type]
    joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
    joined.write(b"x" * downstream.SEGMENT)
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * downstream.SEGMENT]


async def test_a_provider_that_sends_nothing_in_time_is_a_read_timeout_and_its_connection_is_closed():
    connection = wire._Connection(("http", "provider", 80))
    with pytest.raises(httpx.ReadTimeout):
        await connection.head(0.01)
    assert connection.dead


async def test_waiting_for_the_first_piece_of_a_body_that_does_not_come_ends_after_the_wait():
    connection = wire._Connection(("http", "provider", 80))
    connection.data_received(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
    await connection.head(5)
    await asyncio.wait_for(connection.arrived_within(0.01), 5)
    connection.data_received(b"2\r\nok\r\n0\r\n\r\n")
    assert await connection.next_piece(5) == b"ok"


async def test_the_usage_of_a_streamed_reply_is_read_after_its_last_bytes_have_left_for_the_cli(fake, relay,
                                                                                              monkeypatch):
    from bot.relay.usage import UsageTap
    fake.script(say("read behind the stream", pieces=40))
    seen_when_read: list[bytes] = []
    cli: socket.socket | None = None
    read = UsageTap._read_behind

    def peek(tap: UsageTap) -> None:  # what the CLI's socket already holds when the tap reads the stream
        assert cli is not None
        seen_when_read.append(cli.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        read(tap)

    monkeypatch.setattr(UsageTap, "_read_behind", peek)
    recorded = asyncio.Event()
    async with relay("anthropic", on_call=lambda _call: recorded.set()) as r:
        cli = socket.create_connection(("127.0.0.1", r.port))
        body = json.dumps(dict(ANTHROPIC[1], stream=True)).encode()
        cli.sendall(b"POST %s HTTP/1.1\r\nhost: relay\r\nx-api-key: %s\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%s" % (ANTHROPIC[0].encode(), r.token.encode(), len(body), body))
        await asyncio.wait_for(recorded.wait(), 60)
        cli.close()
    assert r.calls[0].usage is not None and r.calls[0].usage.output_tokens > 0
    assert seen_when_read and b"message_stop" in seen_when_read[0]
