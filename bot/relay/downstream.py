"""The relay's side towards the CLI: fewer, fuller writes, with nothing held longer than a moment.

uvicorn writes a response's head and each body piece with a socket write of its own, and the relay
sent the head as soon as the provider's head came, so a reply whose body had already arrived reached
the CLI in two writes and woke it twice. Here:

- `Joined` wraps the connection's transport: the writes made in one turn of the event loop leave in
  one socket write at the end of that turn (never later: nothing waits for bytes still to come).
- `Pieces` gives the relay the reply's first piece when it comes within HEAD_WAIT_S, so the head and
  that piece are written in the same turn; a provider slower than that gets its head passed on then,
  and the first piece when it comes.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

HEAD_WAIT_S = 0.01  # the longest the head waits for the first piece of the body


class Joined:
    """A transport whose writes of one event-loop turn go out as one."""

    def __init__(self, transport: asyncio.Transport):
        self._transport = transport
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._held:
            asyncio.get_running_loop().call_soon(self.flush)
        self._held.append(bytes(data))

    def flush(self) -> None:
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._held))

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:  # the rest of the transport's interface, unchanged
        return getattr(self._transport, name)


class Pieces:
    """The reply body's pieces as they arrive, its first one fetched ahead (`first_within`)."""

    def __init__(self, raw: AsyncIterator[bytes]):
        self._raw = raw
        self._ahead: asyncio.Future[bytes] | None = None

    async def first_within(self, wait_s: float) -> None:
        """Wait up to wait_s for the first piece (kept for the first `__anext__`)."""
        self._ahead = asyncio.ensure_future(self._raw.__anext__())
        await asyncio.wait({self._ahead}, timeout=wait_s)

    async def aclose(self) -> None:
        """Stop a first read nobody took, and let it end before the reply is closed under it."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return
        if not ahead.done():
            ahead.cancel()
            await asyncio.wait({ahead})
        if not ahead.cancelled():
            ahead.exception()  # seen, so never reported as an error nobody retrieved

    def __aiter__(self) -> Pieces:
        return self

    async def __anext__(self) -> bytes:
        if self._ahead is not None:
            ahead, self._ahead = self._ahead, None
            return await ahead
        return await self._raw.__anext__()
