"""A run's stdout lines are taken at most the pace's lines a window (bot/episode/pace.py): a CLI
printing faster is slowed, every line it printed kept, in order; a stopped run's backlog is read
at full speed. The clock here is the pace's own, moved only by its waits: what is counted is how
many lines each window let through, never how long anything took."""
from __future__ import annotations

import asyncio
import json

from bot.episode.pace import LinePace
from bot.episode.runner import run_episode
from sandbox.tier0 import Tier0Spawner
from tests.adapters.test_runner import ScriptAdapter, _setup


class Clock:
    """A clock that moves only when the pace waits: each line's window is then exact."""

    def __init__(self) -> None:
        self.now = 0.0
        self.windows: list[int] = [0]  # lines taken in each window, the current one last

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.windows.append(0)
        await asyncio.sleep(0)


def counted(pace: LinePace, clock: Clock) -> LinePace:
    take = pace.take

    async def counting() -> None:
        clock.windows[-1] += 1
        await take()

    pace.take = counting  # type: ignore[method-assign]
    return pace


async def test_each_window_lets_through_its_budget_of_lines_and_no_more():
    clock = Clock()
    pace = counted(LinePace(per_second=2000, window_s=0.01, clock=clock, sleep=clock.sleep), clock)
    for _ in range(70):
        await pace.take()
    assert pace.budget == 20
    assert clock.windows == [20, 20, 20, 10] and pace.waits == 3 and clock.now == 0.03


async def test_a_window_that_ended_by_itself_starts_a_fresh_budget():
    clock = Clock()
    pace = LinePace(per_second=2000, window_s=0.01, clock=clock, sleep=clock.sleep)
    for _ in range(19):
        await pace.take()
    clock.now += 0.05  # the CLI went quiet: its next lines open a new window
    for _ in range(19):
        await pace.take()
    assert pace.waits == 0


async def test_a_cli_printing_faster_than_the_pace_is_slowed_and_every_line_kept_in_order(tmp_path):
    clock, lines = Clock(), 1000
    pace = counted(LinePace(per_second=5000, window_s=0.01, clock=clock, sleep=clock.sleep), clock)
    script = ("import sys\nw = sys.stdout.write\n"
              f"for n in range({lines}): w('{{\"text\": \"%d\"}}\\n' % n)")
    seen: list[str] = []
    episode, config = _setup(tmp_path)
    await run_episode(ScriptAdapter(script), episode, Tier0Spawner(), config,
                      on_event=lambda event: seen.append(event.text), pace=pace)
    assert seen == [str(n) for n in range(lines)]
    assert set(clock.windows[:-1]) == {pace.budget} and pace.waits == lines // pace.budget


async def test_a_stopped_run_is_read_to_its_end_without_the_pace(tmp_path):
    pace, cancel = LinePace(per_second=1, window_s=1.0), asyncio.Event()
    printed = "".join(json.dumps({"text": str(n)}) + "\n" for n in range(50))  # one write: all in the pipe
    script = f"import sys, time\nsys.stdout.write({printed!r})\nsys.stdout.flush()\ntime.sleep(60)"
    episode, config = _setup(tmp_path)
    result = await run_episode(ScriptAdapter(script), episode, Tier0Spawner(), config,
                               on_event=lambda event: cancel.set(), cancel=cancel, pace=pace)
    assert result.failure == "cancelled" and pace.lifted
    assert [e.text for e in result.events] == [str(n) for n in range(50)] and pace.waits == 1

