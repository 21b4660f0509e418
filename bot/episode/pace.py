"""A run's stdout lines taken at most PACE_LINES_S a second, in windows of WINDOW_S: each line is
parsed, recorded and shown on the event loop, and a CLI printing small lines without end would
otherwise take the loop from every other thread's webhook for as long as it prints.

    pace = LinePace()
    for line in lines:
        handle(line)
        await pace.take()          # sleeps out the window once its lines are spent
    pace.lifted = True             # a stopped run's backlog is drained at full speed

A CLI above the pace is slowed, never cut: its reader waits, the stream's buffer and the pipe fill
and the CLI's writes block. Nothing it printed is dropped or reordered.

The figure: a model streams at most a few hundred tokens a second, and a CLI prints at most a line
per streamed delta (Claude's stream-json with partial messages); the CLIs' recorded transcripts
print at most ten JSON lines a turn. 2,000 a second is several such streams at once with room to
spare: no real CLI is slowed, and a CLI printing more is printing for its own sake.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

PACE_LINES_S = 2000
WINDOW_S = 0.01


class LinePace:
    def __init__(self, per_second: float = PACE_LINES_S, window_s: float = WINDOW_S, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        self.budget = max(1, round(per_second * window_s))  # lines a window
        self.window_s = window_s
        self.lifted = False
        self.waits = 0  # windows whose lines were spent before they ended
        self._clock, self._sleep = clock, sleep
        self._ends = float("-inf")
        self._left = 0

    async def take(self) -> None:
        """One line taken; when it spends the window's lines, wait for the window's end."""
        if self.lifted:
            return
        now = self._clock()
        if now >= self._ends:
            self._ends, self._left = now + self.window_s, self.budget
        self._left -= 1
        if self._left <= 0:
            self.waits += 1
            await self._sleep(self._ends - now)
