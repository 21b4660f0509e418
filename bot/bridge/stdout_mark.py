"""How far the CLI's stdout has been read, so that a bridged call is recorded after every line the
CLI printed before it, even while its reader lags behind (a paced reader, bot/episode/pace.py).

    mark = StdoutMark()
    mark.attach(proc.stdout)            # the runner, once the CLI runs
    mark.took(len(chunk))               # the reader took a chunk out of the stream
    mark.advance(position)              # every whole line before `position` is delivered (recorded)
    mark.end()                          # the reader is done: EOF, stopped, failed
    target = mark.written()             # the bridge, as a call arrives: all the CLI has written
    unread = await mark.reached(target, within_s)   # 0, or the bytes still unread when the wait ended

A call's target is what the reader has taken, plus what waits in the stream's buffer, plus what
waits in the pipe (FIONREAD): every byte the CLI wrote before it made the call. The wait is
bounded: a reader that cannot catch up (a record writer stuck, a backlog of empty lines) costs
the call `within_s` at most, and the bridge records how far behind it was.
"""
from __future__ import annotations

import array
import asyncio
import contextlib
import fcntl
import termios
from collections.abc import Callable

CATCH_UP_S = 30.0  # the longest a bridged call waits for the reader; a CLI's tool timeout is longer


class StdoutMark:
    def __init__(self) -> None:
        self.read = 0  # bytes the reader took out of the stream
        self.done = 0  # every whole line before this byte is delivered
        self.ended = False
        self._stream: asyncio.StreamReader | None = None
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._least = 0  # the smallest target waited for (when there are waiters)

    def attach(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    def took(self, size: int) -> None:
        self.read += size

    def advance(self, position: int) -> None:
        """Called per line by the reader: kept cheap when no call waits."""
        if position > self.done:
            self.done = position
            if self._waiters and position >= self._least:
                self._release(lambda target: target <= position)

    def end(self) -> None:
        self.ended = True
        self._release(lambda target: True)

    def written(self) -> int:
        """Bytes the CLI has written to stdout so far: read, buffered, or still in the pipe."""
        if self._stream is None:
            return self.done
        return self.read + _unread(self._stream)

    async def reached(self, target: int, within_s: float = CATCH_UP_S) -> int:
        """Wait until every whole line before `target` is delivered, the reader has ended, or
        `within_s` passed; the bytes before `target` still unread (0 when caught up)."""
        if self.ended or self.done >= target:
            return 0
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((target, waiter))
        self._least = min(t for t, _ in self._waiters)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(within_s):
                    await waiter
        finally:
            self._forget(waiter)
        return 0 if self.ended else max(target - self.done, 0)

    def _release(self, due: Callable[[int], bool]) -> None:
        for target, waiter in self._waiters:
            if due(target) and not waiter.done():
                waiter.set_result(None)
        self._waiters = [(t, w) for t, w in self._waiters if not w.done()]
        self._least = min((t for t, _ in self._waiters), default=0)

    def _forget(self, waiter: asyncio.Future[None]) -> None:
        self._waiters = [(t, w) for t, w in self._waiters if w is not waiter]
        self._least = min((t for t, _ in self._waiters), default=0)


def _unread(stream: asyncio.StreamReader) -> int:
    """Bytes in `stream`'s buffer and in the pipe under it. asyncio names neither: its buffer and
    transport are read by their private names (tests/bridge/test_stdout_mark.py holds them to a
    real pipe, so a Python that renames them fails there, not silently here)."""
    buffered = len(getattr(stream, "_buffer", b""))
    transport = getattr(stream, "_transport", None)
    pipe = transport.get_extra_info("pipe") if transport is not None else None
    if pipe is None:
        return buffered
    try:
        fd = pipe.fileno()  # a closed pipe (the reader saw EOF) raises: nothing waits in it
        size = array.array("i", [0])
        fcntl.ioctl(fd, termios.FIONREAD, size, True)
    except (ValueError, OSError):
        return buffered
    return buffered + size[0]
