"""The CLI's output (its lines, their sizes, how the pipe cuts them into chunks, and when it makes
its calls) is the agent's input: whatever it is, a call waiting on the stdout mark is released
only after every whole line the CLI wrote before the call is delivered, and once the reader has
taken all there is, every call is released, an unfinished last line or not, before the output
ends (bot/bridge/stdout_mark.py, read by the runner's pump, here giving the loop back after each
line as a paced reader does)."""
from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.base import Event, EventKind
from bot.bridge.stdout_mark import StdoutMark
from bot.episode.kept_events import KeptEvents
from bot.episode.pace import LinePace
from bot.episode.runner import _pump, _Reading

lines = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30)
tail = st.binary(max_size=20).map(lambda b: b.replace(b"\n", b""))  # an unfinished last line
cuts = st.lists(st.integers(min_value=0, max_value=2000), max_size=12)  # where the pipe splits it
calls = st.lists(st.integers(min_value=0, max_value=2000), max_size=6)  # bytes written before each call


class OneEventALine:
    def parse(self, line: bytes) -> list[Event]:
        return [Event(EventKind.TEXT, text=line.decode("latin-1"))]


async def replay(output: bytes, cuts: list[int], calls: list[int], yields: list[bool]) -> tuple[list, list[int]]:
    """Feed `output` in chunks, calls arriving as it is written; the record's order, as the
    bridge makes it: a line's index, or ("call", bytes written before it)."""
    stream, mark, record = asyncio.StreamReader(), StdoutMark(), []
    mark.attach(stream)
    each_line = LinePace(per_second=1, window_s=1, clock=lambda: 0.0, sleep=lambda s: asyncio.sleep(0))
    pump = asyncio.create_task(_pump(stream, OneEventALine(), KeptEvents(),  # type: ignore[arg-type]
                                     lambda event: record.append(len(record)), _Reading(each_line, mark)))

    async def call(target: int, written: int) -> None:
        await mark.reached(target, 600)
        record.append(("call", written))

    waiting, at, pauses = [], 0, iter(yields)
    for stop in sorted({min(place, len(output)) for place in (*cuts, *calls, len(output))}):
        if stop > at:
            stream.feed_data(output[at:stop])
            at = stop
        waiting += [asyncio.create_task(call(mark.written(), at)) for c in calls if min(c, len(output)) == at]
        if next(pauses, False):
            await asyncio.sleep(0)
    for _ in range(100 * len(output) + 10):  # the reader takes all there is; the CLI waits on its calls
        if all(task.done() for task in waiting):
            break
        await asyncio.sleep(0)
    assert all(task.done() for task in waiting), "a call still waits, with all the CLI wrote read"
    stream.feed_eof()
    await pump
    await asyncio.gather(*waiting)
    return record, [i + 1 for i, byte in enumerate(output) if byte == 0x0A]  # each whole line's end


@settings(max_examples=300, deadline=None)
@given(lines, tail, cuts, calls, st.lists(st.booleans(), max_size=20))
def test_a_call_is_released_after_every_whole_line_written_before_it(lines, tail, cuts, calls, yields):
    output = b"".join(line + b"\n" for line in lines) + tail
    record, ends = asyncio.run(replay(output, cuts, calls, yields))
    assert sum(1 for entry in record if isinstance(entry, tuple)) == len(calls)
    for place, entry in enumerate(record):
        if isinstance(entry, tuple):
            printed_before = sum(1 for end in ends if end <= entry[1])
            lines_before = sum(1 for e in record[:place] if not isinstance(e, tuple))
            assert lines_before >= printed_before
