"""The relay's connections to the provider: an httpx transport on asyncio's own sockets, whose answers
are parsed by llhttp (httptools).

httpcore costs the relay more than anything else in a call: each 64 KiB read of a streamed answer
crosses anyio's stream, h11's receive buffer and its chunk reader, in Python. Here the provider's
bytes go from asyncio's read (up to 256 KiB at once) straight into llhttp, and a reader of the body
takes, in one piece, everything that has arrived since it last read: nothing waits for bytes still to
come. A request's head and body leave in one write, so the provider wakes once.

The relay writes its request head itself (`head`, from the upstream's `Origin` read once) and sends
it with `Transport.exchange`; an httpx client (the ChatGPT login's refreshes) goes through
`handle_async_request`, which writes its head the same way. A read waits on one future and one
timer (`_Signal`), not on a task of its own; a free pool slot and a write the buffer takes need no
wait at all.

The provider's reply is not the sandbox's input, but it is parsed strictly all the same: a head over
HEAD_CAP, a malformed one, or a body cut before its end raises httpx's own errors, which the relay
already maps (a cut stream, a provider unreachable). A request head is built only from names and
values that are HTTP tokens and field values, and a target without spaces or controls.
"""
from __future__ import annotations

import asyncio
import re
import ssl
import time
import typing
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import httptools
import httpx

READ_BYTES = 256 << 10  # what asyncio's transport reads from the socket at once
BUFFERED = 4 << 20  # unread bytes of an answer past which the provider is read no further for now
HEAD_CAP = 256 << 10  # an answer's status line and headers
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FIELD_VALUE = re.compile(rb"[^\x00-\x08\x0a-\x1f\x7f]*")
_TARGET = re.compile(rb"[\x21-\x7e]+")
_DEFAULT_PORT = {"http": 80, "https": 443}
_BODY_METHODS = (b"POST", b"PUT", b"PATCH")  # sized even when empty, as httpx sizes them


@dataclass(frozen=True)
class Origin:
    """Where requests go: the connection's key, the Host header and the path every target starts with
    (a gateway's `/v1`), read once from the provider's root URL."""

    key: tuple[str, str, int]
    netloc: bytes
    base_path: bytes

    @classmethod
    def of(cls, root: str) -> Origin:
        url = httpx.URL(root)
        return cls(_key(url), url.netloc, url.raw_path.rstrip(b"/"))


def head(method: bytes, origin: Origin, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
    """A request's head as it goes on the wire, Host and Content-Length first as httpx puts them;
    refused (httpx.LocalProtocolError) when a name, a value or the target would change its framing."""
    sized = [(b"content-length", b"%d" % len(body))] if body or method in _BODY_METHODS else []
    return _head(method, origin.base_path + target, [(b"host", origin.netloc), *sized, *headers])


def request_head(request: httpx.Request) -> bytes:
    """An httpx request's head (the ChatGPT login's calls), checked as `head` checks the relay's."""
    return _head(request.method.encode("ascii"), request.url.raw_path, request.headers.raw)


def _head(method: bytes, target: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
    if not _TARGET.fullmatch(target):
        raise httpx.LocalProtocolError("the request target holds spaces or control bytes")
    lines = [method + b" " + target + b" HTTP/1.1"]
    for name, value in headers:
        if not _TOKEN.fullmatch(name) or not _FIELD_VALUE.fullmatch(value):
            raise httpx.LocalProtocolError(f"header {name[:40]!r} is not a valid HTTP field")
        lines.append(name + b": " + value)
    return b"\r\n".join(lines) + b"\r\n\r\n"


class _Signal:
    """Wakes the one task that reads a connection. `asyncio.wait_for` around an Event would wrap each
    wait in a task of its own (three per call); here a wait is one future and one timer."""

    def __init__(self) -> None:
        self._waiter: asyncio.Future[bool] | None = None

    def set(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(True)

    async def wait(self, timeout: float | None) -> bool:
        """Until the next `set` (True) or `timeout` seconds (False)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        self._waiter = waiter
        timer = loop.call_later(timeout, _expire, waiter) if timeout is not None else None
        try:
            return await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)


class _Connection(asyncio.Protocol):
    """One kept connection to the provider: one request at a time, its answer parsed as it arrives."""

    def __init__(self, key: tuple[str, str, int]):
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.idle_since = time.monotonic()
        self.dead = False  # closed, cut, or left with an answer half read: never reused
        self._parser = httptools.HttpResponseParser(self)
        self._changed = _Signal()
        self._writable = asyncio.Event()
        self._writable.set()
        self._error: httpx.TransportError | None = None
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self._head_bytes = 0
        self._head_done = False
        self._pieces: list[bytes] = []
        self._unread = 0
        self.complete = False
        self._until_close = True  # neither sized nor chunked: the body ends when the connection does

    # asyncio.Protocol -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = typing.cast(asyncio.Transport, transport)  # a stream connection's

    def data_received(self, data: bytes) -> None:
        if not self._head_done:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"the provider's answer is not valid HTTP: {exc}"))
            return
        if not self._head_done and self._head_bytes > HEAD_CAP:
            self._fail(httpx.RemoteProtocolError("the provider's answer head is over the cap"))

    def eof_received(self) -> bool:
        self._ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended(exc)

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    # llhttp callbacks ------------------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))
        if name.lower() in (b"content-length", b"transfer-encoding"):
            self._until_close = False

    def on_headers_complete(self) -> None:
        self.status = self._parser.get_status_code()
        if 100 <= self.status < 200:  # an interim answer (100 Continue): the real one follows
            self.headers, self._head_bytes, self._until_close = [], 0, True
            return
        self._head_done = True
        self._changed.set()

    def on_body(self, body: bytes) -> None:
        self._pieces.append(body)
        self._unread += len(body)
        if self._unread > BUFFERED and self.transport is not None:
            self.transport.pause_reading()
        self._changed.set()

    def on_message_complete(self) -> None:
        if self._head_done:
            self.complete = True
            self.dead = self.dead or not self._parser.should_keep_alive()
            self._changed.set()

    # the relay's side ----------------------------------------------------------------------------

    def _ended(self, exc: Exception | None = None) -> None:
        self.dead = True
        if self._head_done and self._until_close and not self.complete:
            self.complete = True  # its body was everything until the end
        elif not self.complete:
            error = httpx.ReadError(str(exc)) if exc else httpx.RemoteProtocolError(
                "the provider closed the connection before its answer was complete")
            self._error = self._error or error
        self._changed.set()

    def _fail(self, error: httpx.TransportError) -> None:
        self._error = self._error or error
        self.close()
        self._changed.set()

    def close(self) -> None:
        self.dead = True
        if self.transport is not None:
            self.transport.close()

    async def send(self, data: bytes, timeout: float | None) -> None:
        if self.dead or self.transport is None or self.transport.is_closing():
            raise httpx.WriteError("the connection to the provider is closed")
        self._reset()
        self.transport.write(data)
        if self._writable.is_set():
            return
        try:
            await asyncio.wait_for(self._writable.wait(), timeout)
        except TimeoutError:
            raise httpx.WriteTimeout("the provider did not take the request in time") from None

    async def head(self, timeout: float | None) -> None:
        while not self._head_done:
            await self._wait(timeout)

    async def arrived_within(self, wait_s: float) -> None:
        """Until some of the body has arrived (or all of it, or an error), for at most wait_s."""
        if not self._pieces and not self.complete and self._error is None:
            await self._changed.wait(wait_s)

    async def next_piece(self, timeout: float | None) -> bytes | None:
        """All of the body that has arrived since the last read, or None once it is complete."""
        while not self._pieces:
            if self.complete:
                return None
            await self._wait(timeout)
        piece = self._pieces[0] if len(self._pieces) == 1 else b"".join(self._pieces)
        self._pieces.clear()
        self._unread = 0
        if self.transport is not None and not self.dead:
            self.transport.resume_reading()
        return piece

    async def _wait(self, timeout: float | None) -> None:
        if self._error is not None:
            raise self._error
        if not await self._changed.wait(timeout):
            self.close()
            raise httpx.ReadTimeout("the provider sent nothing in time")
        if self._error is not None and not self._pieces:
            raise self._error


class Body(httpx.AsyncByteStream):
    """An answer's body, piece by piece; closed, its connection goes back to the pool if it can."""

    def __init__(self, connection: _Connection, pool: Transport, timeout: float | None):
        self._connection, self._pool, self._timeout = connection, pool, timeout
        self._released = False

    async def arrived_within(self, wait_s: float) -> None:
        """Until some of the body has come, for at most wait_s (then its head can leave with it)."""
        await self._connection.arrived_within(wait_s)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (piece := await self._connection.next_piece(self._timeout)) is not None:
            yield piece

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            self._pool.release(self._connection)


class Transport(httpx.AsyncBaseTransport):
    """A pool of kept connections to the provider, as httpx's limits set it."""

    def __init__(self, limits: httpx.Limits, ssl_context: ssl.SSLContext | None = None):
        self._ssl = ssl_context or httpx.create_ssl_context()
        self._limits = limits
        self._slots: asyncio.Semaphore | None = None
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._all: set[_Connection] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeout: dict[str, float | None] = request.extensions.get("timeout", {})
        sent = request_head(request)
        body = await request.aread()
        return await self.exchange(_key(request.url), sent + body, timeout)

    async def exchange(self, key: tuple[str, str, int], request: bytes,
                       timeout: Mapping[str, float | None]) -> httpx.Response:
        """Send a whole request (its head from `head`) on a kept connection to `key`, or a new one,
        and return its answer once the head has come (the body streams)."""
        await self._take_slot(timeout.get("pool"))
        connection: _Connection | None = None
        try:
            connection = self._idle_for(key) or await self._connect(key, timeout.get("connect"))
            await connection.send(request, timeout.get("write"))
            await connection.head(timeout.get("read"))
        except BaseException:
            if connection is not None:
                connection.close()
                self._all.discard(connection)
            self._free_slot()
            raise
        return httpx.Response(connection.status, headers=connection.headers,
                              stream=Body(connection, self, timeout.get("read")),
                              extensions={"http_version": b"HTTP/1.1"})

    def release(self, connection: _Connection) -> None:
        """The answer is done with: keep its connection if it was read whole and may be kept."""
        self._free_slot()
        idle = self._idle.setdefault(connection.key, [])
        kept = self._limits.max_keepalive_connections
        if connection.dead or not connection.complete or (kept is not None and len(idle) >= kept):
            connection.close()
            self._all.discard(connection)
            return
        connection.idle_since = time.monotonic()
        idle.append(connection)

    async def aclose(self) -> None:
        for connection in list(self._all):
            connection.close()
        self._all.clear()
        self._idle.clear()

    def _idle_for(self, key: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(key, [])
        expiry = self._limits.keepalive_expiry
        while idle:
            connection = idle.pop()
            fresh = expiry is None or time.monotonic() - connection.idle_since < expiry
            if fresh and not connection.dead and connection.transport is not None \
                    and not connection.transport.is_closing():
                return connection
            connection.close()
            self._all.discard(connection)
        return None

    async def _connect(self, key: tuple[str, str, int], timeout: float | None) -> _Connection:
        scheme, host, port = key
        tls = self._ssl if scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            _, connection = await asyncio.wait_for(loop.create_connection(
                lambda: _Connection(key), host, port, ssl=tls, server_hostname=host if tls else None), timeout)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} in time") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc)) from exc
        self._all.add(connection)
        return connection

    async def _take_slot(self, timeout: float | None) -> None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._limits.max_connections or 1 << 16)
        if not self._slots.locked():  # a free slot is taken at once: no task for a wait
            await self._slots.acquire()
            return
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout)
        except TimeoutError:
            raise httpx.PoolTimeout("every connection to the provider is busy") from None

    def _free_slot(self) -> None:
        if self._slots is not None:
            self._slots.release()


def _key(url: httpx.URL) -> tuple[str, str, int]:
    if url.scheme not in _DEFAULT_PORT:
        raise httpx.UnsupportedProtocol(f"the relay speaks http and https, not {url.scheme!r}")
    return url.scheme, url.host, url.port or _DEFAULT_PORT[url.scheme]
