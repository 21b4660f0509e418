"""An in-process uvicorn server on a loopback port: the per-episode servers of the bot (the MCP
bridge, the model relay) start, report their port and stop the same way."""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import uvicorn

STOP_GRACE_S = 3.0


class _QuietServer(uvicorn.Server):
    """uvicorn in-process: it must not take over the host process's signal handlers."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class LoopbackServer:
    def __init__(self, config: uvicorn.Config, what: str):
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
        """Let open requests finish for a moment, then close whatever is left."""
        if self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), STOP_GRACE_S)
        if not self._task.done():
            self._server.force_exit = True
            await self._task
