"""The relay's side towards the CLI: fewer, fuller writes, with nothing held longer than a moment.

uvicorn writes a response's head and each body piece with a socket write of its own, and the relay
sent the head as soon as the provider's head came, so a reply whose body had already arrived reached
the CLI in two writes and woke it twice. Here:

- `Joined` wraps the connection's transport: the writes made in one turn of the event loop leave in
  one socket write at the end of that turn (never later: nothing waits for bytes still to come). A
  write of SEGMENT bytes or more leaves at once, with what was held before it: the relay reads such
  a piece for its usage only after its bytes are on their way, while the CLI reads them.
- The relay waits up to HEAD_WAIT_S for the reply's first piece (bot/relay/wire.py `arrived_within`),
  so the head and that piece are written in the same turn; a provider slower than that gets its
  head passed on then, and the first piece when it comes.
"""
from __future__ import annotations

import asyncio
from typing import Any

HEAD_WAIT_S = 0.01  # the longest the head waits for the first piece of the body
SEGMENT = 16 << 10  # a write this large is worth a socket write of its own at once


class Joined:
    """A transport whose writes of one event-loop turn go out as one."""

    def __init__(self, transport: asyncio.Transport):
        self._transport = transport
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if len(data) >= SEGMENT:
            self._held.append(data)
            self.flush()
            return
        if not self._held:
            asyncio.get_running_loop().call_soon(self.flush)
        self._held.append(bytes(data))

    def flush(self) -> None:
        if self._held:
            data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
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
