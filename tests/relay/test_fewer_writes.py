"""The relay passes a call on in fewer, fuller writes, and never holds a byte for one still to come:
a request leaves for the provider in one write, a read takes what has arrived, and a reply's head
leaves for the CLI with the first piece of its body when that piece has come with it."""
from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import httpcore
import httpx

from bot.relay import downstream, wire
from tests.fakes.provider import say
from tests.relay.conftest import ANTHROPIC


class _Recording(httpcore.AsyncNetworkStream):
    """A connection that records what is done with it, in order."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.events.append(("write", buffer))

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.events.append(("read", max_bytes))
        return b""

    async def aclose(self) -> None:
        self.events.append(("close",))

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.AsyncNetworkStream:
        self.events.append(("tls",))
        return _Recording()


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


async def test_a_requests_head_and_body_leave_for_the_provider_in_one_write():
    inner = _Recording()
    stream = wire.HeldWrites(inner)
    await stream.write(b"POST /v1/messages HTTP/1.1\r\ncontent-length: 2\r\n\r\n")
    await stream.write(b"{}")
    await stream.read(64 << 10)
    assert inner.events[0] == ("write", b"POST /v1/messages HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}")


async def test_a_read_from_the_provider_takes_up_to_what_the_socket_holds_not_64_kib():
    inner = _Recording()
    await wire.HeldWrites(inner).read(64 << 10)
    assert inner.events == [("read", wire.READ_BYTES)] and wire.READ_BYTES > 64 << 10


async def test_what_was_written_before_tls_starts_leaves_before_the_handshake():
    inner = _Recording()
    stream = wire.HeldWrites(inner)
    await stream.write(b"CONNECT api.example:443 HTTP/1.1\r\n\r\n")
    await stream.start_tls(None)
    assert inner.events == [("write", b"CONNECT api.example:443 HTTP/1.1\r\n\r\n"), ("tls",)]


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


async def test_closing_a_reply_whose_first_piece_never_came_ends_the_read_before_it_returns():
    ended: list[str] = []

    async def never() -> AsyncIterator[bytes]:
        try:
            await asyncio.Event().wait()
            yield b"never"
        finally:
            ended.append("read ended")

    pieces = downstream.Pieces(never())
    await pieces.first_within(0.0)
    await pieces.aclose()
    assert ended == ["read ended"]
