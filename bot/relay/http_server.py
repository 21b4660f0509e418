"""The relay's own HTTP/1.1 server towards the CLI: an asyncio protocol on llhttp (httptools), in place
of uvicorn, as bot/relay/wire.py is on the provider's side.

Why: no ASGI cycle per request (a scope dict, its events, a message dict per write), and a client
that goes away mid-answer ends its call. Here a request is parsed into a `Request`, its handler runs
in one task, and its answer is written through a `Reply` straight onto the connection
(downstream.Joined: the writes of one loop turn leave together).

The sandbox is hostile, so every byte a connection carries is read as an attack:

- llhttp's strict parse: a body both sized and chunked, a duplicate Content-Length, an obs-fold, a bare
  LF, a malformed request line or target, a header name that is not a token, a control byte in a
  value: the connection gets a 400 and is closed, and the request never reaches the handler.
- A request head over `head_cap` bytes gets a 431 and the connection is closed.
- A body over `body_cap` (declared or sent) is refused by the handler (`Request.body` raises
  `RelayBodyTooLarge`), and the connection is closed after the answer: the rest is never read into memory.
- One request at a time per connection: a pipelined one waits, and reading pauses, until the answer
  before it has left. A connection with no request for KEEP_ALIVE_S is closed.
- A client that goes away while its request runs (the connection is reset, or a write to it fails)
  cancels the handler, so its call to the provider, and nothing is logged for it. A client that
  half-closes (ends its stream) is still answered for what it sent whole, then the connection closes.
- `stop`: no new connection; idle connections close; requests in flight get `grace` seconds, then
  are cancelled and answered (503 when nothing was sent, else their body is ended); every task of the
  server has ended when it returns.
"""
from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine

import httptools

from bot.errors import BotError
from bot.relay import downstream

log = logging.getLogger(__name__)
KEEP_ALIVE_S = 5.0  # as uvicorn's: an idle kept connection is closed after this
_STOPPED_BODY = b"this server is stopping: the episode is over\n"
_STATUS_LINE: dict[int, bytes] = {int(status): b"HTTP/1.1 %d %s\r\n" % (status, status.phrase.encode())
                for status in http.HTTPStatus}
_TOKENS = re.compile(rb"(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+\n)*[!#$%&'*+\-.^_`|~0-9A-Za-z]+|")  # names, one a line
_FIELD_VALUE = re.compile(rb"[^\x00-\x08\x0a-\x1f\x7f]*")
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class RelayBodyError(BotError):
    """The request's body cannot be had: `Request.body` raises one of these."""


class RelayBodyTooLarge(RelayBodyError):
    pass


class RelayBodyMalformed(RelayBodyError):
    pass


class RelayClientGone(RelayBodyError):
    pass


class Request:
    """One parsed request: its head at once, its body when `body()` is awaited."""

    __slots__ = ("method", "raw_path", "query", "headers", "keep_alive", "http10", "gone", "_continue", "_parts",
                 "_size", "_complete", "_error", "_waiter", "_connection")

    def __init__(self, connection: _Connection, method: str, raw_path: bytes, query: bytes,
                 headers: list[tuple[bytes, bytes]], http10: bool, keep_alive: bool, expect_continue: bool):
        self.method, self.raw_path, self.query, self.headers = method, raw_path, query, headers
        self.http10 = http10  # its answer cannot be chunked: an unsized one ends when the connection does
        self.keep_alive = keep_alive and not http10
        self.gone = False  # the client went away while its request ran (the handler was cancelled)
        self._continue = expect_continue
        self._parts: list[bytes] = []
        self._size = 0
        self._complete = False
        self._error: RelayBodyError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._connection = connection

    async def body(self) -> bytes:
        """The whole body; raises RelayBodyTooLarge past the cap, RelayBodyMalformed, or
        RelayClientGone if the client left first."""
        while not self._complete and self._error is None:
            if self._continue:
                self._continue = False
                self._connection.out.write(_CONTINUE)
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        if self._error is not None:
            raise self._error
        return self._parts[0] if len(self._parts) == 1 else b"".join(self._parts)

    def _add(self, piece: bytes, cap: int) -> None:
        if self._error is not None:
            return  # past the cap: the rest is dropped, and the connection closed after the answer
        self._size += len(piece)
        if self._size > cap:
            self._fail(RelayBodyTooLarge(f"the request is over {cap >> 20} MiB"))
            return
        self._parts.append(piece)

    def _done(self) -> None:
        self._complete = True
        self._wake()

    def _fail(self, error: RelayBodyError) -> None:
        self._error = self._error or error
        self._parts.clear()
        self.keep_alive = False
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class Reply:
    """The answer to one request: `start` (its head), `send` (a piece of body), `end`."""

    __slots__ = ("started", "complete", "_connection", "_request", "_chunked", "_left", "_bodiless")

    def __init__(self, connection: _Connection, request: Request):
        self._connection, self._request = connection, request
        self.started = self.complete = False
        self._chunked = False
        self._left: int | None = None  # bytes the head's Content-Length still promises
        self._bodiless = request.method == "HEAD"

    def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        """The status line and headers (framing added here: Content-Length kept, else chunked)."""
        if self.started:
            raise RuntimeError("the answer has already started")
        self.started = True
        # one look at all names and one at all values (a tab may be in a value, never a line break)
        if not _TOKENS.fullmatch(b"\n".join([name for name, _ in headers])) \
                or not _FIELD_VALUE.fullmatch(b"\t".join([value for _, value in headers])):
            raise ValueError("a header of the answer is not a valid HTTP field")
        head = [_STATUS_LINE.get(status) or b"HTTP/1.1 %d \r\n" % status]
        for name, value in headers:
            if name.lower() == b"content-length":
                self._left = int(value)
            head.append(b"%s: %s\r\n" % (name, value))
        if self._left is None and not self._bodiless and status not in (204, 304):
            if self._request.http10:  # no chunks in HTTP/1.0: the body ends when the connection does
                self._request.keep_alive = False
            else:
                self._chunked = True
                head.append(b"transfer-encoding: chunked\r\n")
        if not self._request.keep_alive:
            head.append(b"connection: close\r\n")
        head.append(b"\r\n")
        self._connection.out.write(b"".join(head))

    async def send(self, data: bytes) -> None:
        """A piece of the body; waits while the client reads too slowly for the write buffer."""
        self._write(data)
        if self._connection.paused:
            await self._connection.drained()

    def end(self, data: bytes = b"") -> None:
        """The last piece of the body: the answer leaves now, whole (its last bytes are flushed)."""
        self._write(data)
        if self._chunked and not self._bodiless:
            self._connection.out.write(b"0\r\n\r\n")
        self.complete = self._bodiless or self._left in (None, 0)
        self._connection.out.flush()

    def _write(self, data: bytes) -> None:
        if not data or self._bodiless:
            return
        if self._left is not None:
            if len(data) > self._left:  # past what the head promised: the client would misread the stream
                data = data[:self._left]
                self._request.keep_alive = False
            self._left -= len(data)
            self._connection.out.write(data)
        elif self._chunked:
            self._connection.out.write(b"%x\r\n%s\r\n" % (len(data), data))
        else:
            self._connection.out.write(data)  # HTTP/1.0, unsized: until the connection closes

    def stopped(self) -> None:
        """The server stops with this answer unfinished: a 503 when nothing was sent, else its end."""
        self._request.keep_alive = False
        if not self.started:
            self.start(503, [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(_STOPPED_BODY))])
            self.end(_STOPPED_BODY)
        elif not self.complete and self._chunked:
            self.end()

    def failed(self) -> None:
        self._request.keep_alive = False
        if not self.started:
            text = b"the model relay failed on this request"
            self.start(500, [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(text))])
            self.end(text)


Handler = Callable[[Request, Reply], Awaitable[None]]


class _Connection(asyncio.Protocol):
    """One connection from the CLI: its requests parsed as they come, answered one at a time."""

    def __init__(self, server: Server):
        self._server = server
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self.out: downstream.Joined = None  # type: ignore[assignment]  # set once connected
        self.paused = False
        self._drain: asyncio.Future[None] | None = None
        self._waiting: deque[Request] = deque()  # parsed, not yet answered (pipelined)
        self._parsing: Request | None = None  # the request whose body is being read
        self.task: asyncio.Task[None] | None = None  # the handler of the request being answered
        self._running: Request | None = None
        self._stopping = False  # the stop cancelled this task (it answers, then the connection closes)
        self._lost = False
        self._eof = False  # the client half-closed: answer what came whole, then close
        self._broken = False  # the parser refused what came: nothing more is read
        self._head_open, self._head_bytes = True, 0
        self._head_size, self._head_over = 0, False  # the head's parsed bytes: exact whatever the reads
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self.idle_since: float | None = None  # when its last answer left (None: a request is under way)

    # asyncio.Protocol ----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # a stream connection's
        assert self._transport is not None
        self._transport.set_write_buffer_limits(high=self._server.write_buffer)
        self.out = downstream.Joined(self._transport)
        self._server.connections.add(self)
        self.idle_since = time.monotonic()

    def data_received(self, data: bytes) -> None:
        if self._broken or self._lost or self._transport is None or self._transport.is_closing():
            return
        if self._head_open:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._upgraded()
        except httptools.HttpParserError:
            self._refuse(400, b"malformed request")
            return
        if self._head_over or (self._head_open and self._head_bytes > self._server.head_cap):
            self._refuse(431, b"request head too large")
            return
        self._next()

    def eof_received(self) -> bool:
        """The client has sent all it will: what it asked whole is still answered, then the
        connection closes; a request it left unfinished is dropped (or refused, if it runs)."""
        self._eof = True
        unfinished = self._parsing
        if unfinished is not None and not unfinished._complete:
            unfinished._fail(RelayClientGone("the client stopped sending before the request's end"))
            if unfinished is not self._running:
                self._waiting.remove(unfinished)
        return self.task is not None or bool(self._waiting)  # True: open for the answers still owed

    def connection_lost(self, exc: Exception | None) -> None:
        self._gone()
        self._server.connections.discard(self)
        self._resume()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self._resume()

    # llhttp's callbacks ----------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._url, self._headers, self._head_size = b"", [], 0

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._head_size += len(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_size += len(name) + len(value) + 4  # with its ": " and line end
        # llhttp keeps a value's trailing whitespace, which is not part of it (RFC 9110 5.5)
        self._headers.append((name.lower(), value.rstrip(b" \t")))

    def on_headers_complete(self) -> None:
        self._head_open, self._head_bytes = False, 0
        if self._head_size > self._server.head_cap:  # the whole head came within one read
            self._head_over, self._parsing = True, None  # refused once the parser returns
            return
        try:
            url = httptools.parse_url(self._url)
        except httptools.HttpParserInvalidURLError:
            url = None
        parser = self._parser
        headers = self._headers
        request = Request(self, parser.get_method().decode("ascii"), url.path if url else b"",
                          (url.query or b"") if url else b"", headers, parser.get_http_version() == "1.0",
                          parser.should_keep_alive(),
                          any(n == b"expect" and v.lower() == b"100-continue" for n, v in headers))
        if url is None:
            request._fail(RelayBodyMalformed("the request's target is not a URL"))
        else:
            declared = next((v for n, v in headers if n == b"content-length"), b"0")
            if int(declared) > self._server.body_cap:  # llhttp has checked it is digits, and only one
                request._fail(RelayBodyTooLarge(f"the request is over {self._server.body_cap >> 20} MiB"))
        self._parsing = request
        self._waiting.append(request)
        self.idle_since = None

    def on_body(self, body: bytes) -> None:
        if self._parsing is not None:
            self._parsing._add(body, self._server.body_cap)

    def on_message_complete(self) -> None:
        self._head_open, self._head_bytes = True, 0
        if self._parsing is not None:
            self._parsing._done()
            self._parsing = None

    # answering ---------------------------------------------------------------------------------

    def _next(self) -> None:
        """Start the next waiting request's handler if none runs; pause reading while one waits;
        close once a half-closed client has all its answers."""
        if self.task is None and self._waiting and not self._closing():
            request = self._waiting.popleft()
            self._running = request
            self.task = self._server.run(self._answer(request))
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        if self.task is None and not self._waiting:
            if self._eof:
                self.out.close()
                return
            if self.idle_since is None and self._parsing is None:
                self.idle_since = time.monotonic()
        if self._eof:
            return
        if self._waiting:
            transport.pause_reading()  # a pipelined request waits: read no more for now
        else:
            transport.resume_reading()  # the running request's body may still be to come

    async def _answer(self, request: Request) -> None:
        reply = Reply(self, request)
        try:
            await self._server.handler(request, reply)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not (self._stopping or request.gone) or task is None:
                raise
            task.uncancel()  # our own cancellation, taken back: the task ends cleanly
            if self._stopping:
                reply.stopped()
        except Exception:
            log.exception("model relay request failed")
            reply.failed()
        finally:
            self._answered(request, reply)

    def _answered(self, request: Request, reply: Reply) -> None:
        self.task, self._running = None, None
        if self._transport is None or self._transport.is_closing():
            return
        if not reply.complete or not request.keep_alive or not request._complete or self._stopping:
            self.out.close()  # the client cannot read a next answer apart from this one
            return
        self._next()

    def _closing(self) -> bool:
        return self._transport is None or self._transport.is_closing()

    def _refuse(self, status: int, text: bytes) -> None:
        """Answer a request the parser refused (nothing of it reaches the handler) and close; with a
        request still being answered, that answer ends the connection (its handler answers a body the
        parser refused itself)."""
        self._broken = True
        self._waiting.clear()
        running = self._running
        if running is not None:
            running.keep_alive = False
            if not running._complete:
                running._fail(RelayBodyMalformed("the request's framing is malformed"))
            if self._transport is not None:
                self._transport.pause_reading()
            return
        self.out.write(_STATUS_LINE[status] + b"content-type: text/plain\r\ncontent-length: %d\r\n"
                       b"connection: close\r\n\r\n%s" % (len(text), text))
        self.out.close()

    def _upgraded(self) -> None:
        """llhttp stops at an Upgrade or CONNECT: the request is answered as any other (the relay
        upgrades to nothing), then the connection closes; what came after it is not read."""
        self._broken = True  # what follows is not HTTP the relay reads: dropped
        for request in self._waiting:
            request.keep_alive = False
        if self._running is not None:
            self._running.keep_alive = False

    def _gone(self) -> None:
        """The client went away: its waiting requests are dropped, the running one ends."""
        if self._lost:
            return
        self._lost = True
        self._waiting.clear()
        request, task = self._running, self.task
        if request is None or task is None or task.done():
            return
        if not request._complete:
            request._fail(RelayClientGone("the client went away"))
        else:
            request.gone = True
            task.cancel()

    def close_if_idle(self, now: float) -> None:
        if self.idle_since is not None and now - self.idle_since >= KEEP_ALIVE_S and self.task is None \
                and self._transport is not None:
            self._transport.close()

    def _resume(self) -> None:
        self.paused = False
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    async def drained(self) -> None:
        while self.paused and not self._lost:
            self._drain = asyncio.get_running_loop().create_future()
            await self._drain

    # the server's stop -------------------------------------------------------------------------

    def shut(self) -> None:
        """No further request: an idle connection closes now, a busy one after its answer."""
        self._waiting.clear()
        if self._running is not None:
            self._running.keep_alive = False
        elif self._transport is not None:
            self._transport.close()

    def end(self) -> None:
        """The stop's grace is over: the request in flight is cancelled (then answered)."""
        if self.task is not None and not self.task.done():
            self._stopping = True
            self.task.cancel()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.close()


class Server:
    """The listener on a loopback port and its connections."""

    def __init__(self, handler: Handler, *, head_cap: int, body_cap: int, write_buffer: int):
        self.handler, self.head_cap, self.body_cap, self.write_buffer = handler, head_cap, body_cap, write_buffer
        self.connections: set[_Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._listener: asyncio.Server | None = None
        self._sweep: asyncio.TimerHandle | None = None

    async def start(self, host: str = "127.0.0.1") -> int:
        """Listen on `host` (a loopback address) at a port the kernel chooses; that port."""
        loop = asyncio.get_running_loop()
        self._listener = await loop.create_server(lambda: _Connection(self), host, 0)
        self._sweep = loop.call_later(KEEP_ALIVE_S / 2, self._close_idle)
        port: int = self._listener.sockets[0].getsockname()[1]
        return port

    def _close_idle(self) -> None:
        """Every half KEEP_ALIVE_S: close the connections idle that long (one timer, not one per call)."""
        now = time.monotonic()
        for connection in list(self.connections):
            connection.close_if_idle(now)
        self._sweep = asyncio.get_running_loop().call_later(KEEP_ALIVE_S / 2, self._close_idle)

    def run(self, answer: Coroutine[None, None, None]) -> asyncio.Task[None]:
        """`answer` in a task of its own, counted until it ends (the stop waits for it)."""
        task = asyncio.get_running_loop().create_task(answer)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def tasks(self) -> set[asyncio.Task[None]]:
        """The handlers still running (a client that went away may have left one ending)."""
        return set(self._tasks)

    async def stop(self, grace: float) -> None:
        """Stop listening; give requests in flight `grace` seconds, then cancel (and answer) the rest."""
        if self._listener is None:
            return
        self._listener.close()
        if self._sweep is not None:
            self._sweep.cancel()
        for connection in list(self.connections):
            connection.shut()
        running = self.tasks()
        if running:
            await asyncio.wait(running, timeout=grace)
        left = self.tasks()
        for connection in list(self.connections):
            connection.end()
        if left:  # bounded: a handler that ignores its cancellation is left behind, not waited for
            await asyncio.wait(left, timeout=grace)
        for connection in list(self.connections):
            connection.abort()
        await asyncio.sleep(0)  # their connection_lost runs: none is left open
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._listener.wait_closed(), grace)
        self._listener = None
