"""An in-process uvicorn server on a loopback port: the per-episode servers of the bot (the MCP
bridge, the model relay) start, report their port and stop the same way.

A stop is an ordinary end of the episode (`@bot stop`, Ctrl-C in `bot run`, a finished run), not a
crash: requests still open once the grace has passed are ended here (cancelled, and answered 503
when nothing was sent yet), before uvicorn's own shutdown would cancel them and log each as an
"Exception in ASGI application" traceback.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import uvicorn

STOP_GRACE_S = 3.0
DEFAULT_REQUEST_GRACE_S = 1.0
_STOPPED_BODY = b"this server is stopping: the episode is over\n"


class _QuietServer(uvicorn.Server):
    """uvicorn in-process: it must not take over the host process's signal handlers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class _Reply:
    """The `send` of one request, remembering how far its answer got."""

    def __init__(self, send: Any):
        self._send, self.started, self.complete = send, False, False

    async def send(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        await self._send(message)

    async def end(self) -> None:
        """Finish the answer of a request the stop ended: a 503 when nothing was sent, else the end
        of the body (the client, usually gone by now, sees a short answer, not a broken one)."""
        if not self.started:
            await self._send({"type": "http.response.start", "status": 503,
                              "headers": [(b"content-type", b"text/plain"), (b"connection", b"close")]})
            await self._send({"type": "http.response.body", "body": _STOPPED_BODY})
        elif not self.complete:
            await self._send({"type": "http.response.body", "body": b""})


class _Endable:
    """The served ASGI app, with every open HTTP request known so that the stop can end them."""

    def __init__(self, app: Any):
        self.app = app
        self.open: set[asyncio.Task] = set()
        self._ended: set[asyncio.Task] = set()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        task = asyncio.current_task()
        if scope["type"] != "http" or task is None:
            await self.app(scope, receive, send)
            return
        reply = _Reply(send)
        self.open.add(task)
        try:
            await self.app(scope, receive, reply.send)
        except asyncio.CancelledError:
            if task not in self._ended:
                raise
            task.uncancel()  # our own cancellation, taken back: the task goes on to answer
            await reply.end()
        finally:
            self.open.discard(task)
            self._ended.discard(task)

    async def end_open(self, grace: float) -> None:
        """Give open requests `grace` seconds, then end those still open."""
        if self.open:
            await asyncio.wait(set(self.open), timeout=grace)
        left = set(self.open)
        for task in left:
            self._ended.add(task)
            task.cancel()
        if left:  # bounded: an app that ignores the cancellation is left to uvicorn's shutdown
            await asyncio.wait(left, timeout=grace)


class LoopbackServer:
    def __init__(self, config: uvicorn.Config, what: str):
        self._app = _Endable(config.app)
        config.app = self._app
        self._grace = config.timeout_graceful_shutdown or DEFAULT_REQUEST_GRACE_S
        self._server = _QuietServer(config)
        self._what = what
        self._task: asyncio.Task | None = None

    async def start(self) -> int:
        """Serve in the background; the port the kernel chose once it listens."""
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError(f"the {self._what} did not start")
            await asyncio.sleep(0.005)
        return self._server.servers[0].sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Let open requests finish for a moment, end those left, then close the server."""
        if self._task is None:
            return
        await self._app.end_open(self._grace)
        self._server.should_exit = True
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), STOP_GRACE_S)
        if not self._task.done():
            self._server.force_exit = True
            await self._task
