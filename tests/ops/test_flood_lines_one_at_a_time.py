"""A CLI printing small lines without end hands the pump chunks of two thousand lines: they are
split one at a time as the pump asks for them (bot/episode/stdout_lines.py:LineSplitter.split), so a
chunk's lines are never all alive at once, long enough to be moved to the garbage collector's
oldest generation and bring on full collections that hold the event loop (bench noisy)."""
from __future__ import annotations

from bot.episode.stdout_lines import LineSplitter

LINE = b'{"type":"turn.progress","n":1}'


def test_a_chunk_of_small_lines_is_split_only_as_far_as_it_is_read():
    lines = LineSplitter()
    split = lines.split(b"\n".join([LINE] * 2048) + b"\n")
    first = next(split)
    assert first.data == LINE and lines.copied == 2 * len(LINE)  # into the line being built, and out


def test_a_chunk_split_whole_gives_the_same_lines_as_feed():
    chunk = b"\n".join([LINE] * 5) + b"\npartial"
    assert list(LineSplitter().split(chunk)) == LineSplitter().feed(chunk)
