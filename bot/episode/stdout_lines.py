"""A CLI's stdout split into lines in linear time, each line held up to a cap.

    lines = LineSplitter(cap=LINE_CAP)
    for line in lines.feed(chunk):      # whole lines ended by b"\\n"
        handle(line.data, line.cut)     # `cut`: bytes of that line past the cap, not kept
    tail = lines.close()                # the last line when stdout did not end with b"\\n"

A chunk is scanned once and only the bytes of the line being built are copied, so a line of
N bytes costs O(N) however it is chunked, and no more than `cap` bytes of it are ever held: a
CLI printing without a newline cannot grow the service.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

LINE_CAP = 4 << 20  # a stdout line longer than this is kept up to here and its rest counted as cut


@dataclass(frozen=True)
class Line:
    data: bytes
    cut: int = 0  # how many bytes of this line came past the cap and were not kept


class LineSplitter:
    def __init__(self, cap: int = LINE_CAP) -> None:
        self.cap = cap
        self.copied = 0  # bytes copied, into the line being built and out of it: the work done
        self._partial = bytearray()
        self._cut = 0

    def feed(self, chunk: bytes) -> list[Line]:
        return list(self.split(chunk))

    def split(self, chunk: bytes) -> Iterator[Line]:
        """`feed`, one line at a time as they are asked for (consume it whole before the next
        chunk). A 64 KiB chunk of small lines is two thousand `Line`s: made all at once they would
        outlive enough garbage collections to be moved to the oldest generation, and each full
        collection that brings on walks the whole process (tens of ms with the event loop held)."""
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self._keep(chunk, start, end)
            yield self._take()
            start = end + 1
        self._keep(chunk, start, len(chunk))

    def close(self) -> list[Line]:
        """The unfinished last line, if stdout ended without a newline."""
        return [self._take()] if self._partial or self._cut else []

    def _keep(self, chunk: bytes, start: int, end: int) -> None:
        room = max(self.cap - len(self._partial), 0)
        kept = min(end - start, room)
        if kept:
            self._partial += memoryview(chunk)[start:start + kept]
            self.copied += kept
        self._cut += end - start - kept

    def _take(self) -> Line:
        line = Line(bytes(self._partial), self._cut)
        self.copied += len(line.data)
        self._partial.clear()
        self._cut = 0
        return line
