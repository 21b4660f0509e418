"""Tokens of one model call (`CallUsage`, bot/relay/call_usage.py), read from a reply as each wire
API's record says (its `usage`: bot/relay/wire_apis/), streamed or not.

`UsageTap(api)` is fed the response bytes as they pass (`feed`) and reads them behind the stream:
the pieces of up to BEHIND bytes are read together once that much has passed or the reply ended, so
on an answer of usual size the search runs after its last byte has left for the CLI, not between its
pieces. What it keeps besides is the unfinished tail of the current event and, per slot the record
names, the last event that can carry usage, found with a byte search for the record's markers before
any JSON is parsed. A JSON (not streamed) reply is kept up to a cap and parsed at the end. An API
whose record declares no usage reading has none read (its calls are charged their maximum).
"""
from __future__ import annotations

import json
import re
from typing import Any

from bot.relay import wire_api
from bot.relay.call_usage import CallUsage

__all__ = ["BEHIND", "EVENT_CAP", "IN_PLACE", "JSON_CAP", "CallUsage", "UsageTap", "from_reply"]

JSON_CAP = 32 << 20  # a reply larger than this is passed on but not read for usage
EVENT_CAP = 16 << 20  # one SSE event larger than this is passed on but not read
BEHIND = 1 << 20  # the bytes of a stream the tap holds before it reads them
IN_PLACE = 64 << 10  # a piece this large is searched where it lies, not joined with others
_NEVER = re.compile(rb"(?!)")


def from_reply(api: str, body: object) -> tuple[CallUsage | None, str | None]:
    """(usage, model) of a parsed JSON reply, as the API's record reads it."""
    reading = wire_api.get(api).usage
    return reading.reply(body) if reading is not None else (None, None)


class UsageTap:
    """Reads the usage of one reply from its bytes as they pass; see the module docstring."""

    def __init__(self, api: str, content_type: str):
        self.api = api
        self.sse = "text/event-stream" in content_type.lower()
        self._reading = wire_api.get(api).usage
        self._markers = self._reading.pattern if self._reading is not None else _NEVER
        self._tail = b""
        self._behind: list[bytes] = []  # passed, not read yet
        self._behind_bytes = 0
        self._body = bytearray()
        self._overflow = False
        self._kept: dict[str, dict[str, Any]] = {}  # kind -> the last event of that kind that carries usage

    def feed(self, chunk: bytes) -> None:
        if not self.sse:
            if len(self._body) + len(chunk) <= JSON_CAP:
                self._body += chunk
            else:
                self._overflow = True
            return
        self._behind.append(chunk)
        self._behind_bytes += len(chunk)
        if self._behind_bytes >= BEHIND:
            self._read_behind()

    def _read_behind(self) -> None:
        """Read what has passed: a large piece where it lies (copying 256 KiB costs as much as the
        search), small ones joined first."""
        pieces, self._behind, self._behind_bytes = self._behind, [], 0
        small: list[bytes] = []
        for piece in pieces:
            if len(piece) < IN_PLACE:
                small.append(piece)
                continue
            if small:
                self._read(b"".join(small))
                small = []
            self._read(piece)
        if small:
            self._read(small[0] if len(small) == 1 else b"".join(small))

    def _read(self, piece: bytes) -> None:
        """The events `piece` completes: the one begun in the tail (joined with the piece's start up
        to its first blank line), then those wholly inside it, searched in place; its unfinished end
        is the new tail."""
        crlf = b"\r" in piece or b"\r" in self._tail  # one memchr; only CRLF streams need the slow searches
        first = _event_end(piece, crlf, first=True)
        if first == -1:  # no blank line in the piece, but one may span the tail and the piece
            data = self._tail + piece
            if _event_end(data, crlf, first=True) == -1:
                self._tail = data if len(data) <= EVENT_CAP else b""
                return
            self._tail, piece = b"", data
            first = _event_end(piece, crlf, first=True)
        if self._tail:
            joined = self._tail + piece[:first]
            self._consider_all(joined, 0, len(joined), crlf)
        else:
            self._consider_all(piece, 0, first, crlf)
        last = _event_end(piece, crlf, first=False)
        self._consider_all(piece, first, last, crlf)
        self._tail = piece[last:] if len(piece) - last <= EVENT_CAP else b""

    def _consider_all(self, data: bytes, start: int, stop: int, crlf: bool) -> None:
        if stop > start:
            for event in _events_around(data, self._markers, crlf, start, stop):
                self._consider(event)

    def _consider(self, event: bytes) -> None:
        lines = [line[5:].lstrip(b" ") for line in event.replace(b"\r\n", b"\n").split(b"\n")
                 if line.startswith(b"data:")]
        try:
            data = json.loads(b"\n".join(lines)) if lines else None
        except ValueError:
            return
        if not isinstance(data, dict) or self._reading is None:
            return
        slot = self._reading.keep(data)
        if slot is not None:
            self._kept[slot] = data

    def result(self) -> tuple[CallUsage | None, str | None]:
        """(usage, model) once the reply ended; usage None when the reply carried none."""
        if self.sse:
            self._read_behind()
            return self._reading.events(self._kept) if self._reading is not None else (None, None)
        if self._overflow or not self._body:
            return None, None
        try:
            return from_reply(self.api, json.loads(bytes(self._body)))
        except ValueError:
            return None, None


def _event_end(data: bytes, crlf: bool, *, first: bool) -> int:
    """Where the first (or last) blank line of `data` ends, -1 when it has none."""
    find = data.find if first else data.rfind
    ends = [at + 2 for at in (find(b"\n\n"),) if at != -1]
    if crlf:
        ends += [at + 4 for at in (find(b"\r\n\r\n"),) if at != -1]
    if not ends:
        return -1
    return min(ends) if first else max(ends)


def _events_around(data: bytes, markers: re.Pattern[bytes], crlf: bool, start: int, stop: int) -> list[bytes]:
    """The whole SSE events of data[start:stop] (which ends at an event's end) that contain a marker,
    found by byte search where the bytes lie: the events in between (thousands of text deltas in a
    long answer) are never split, copied or looked at. `crlf`: the bytes hold a carriage return, so
    events may also end in CRLF CRLF."""
    spans = []
    at = markers.search(data, start, stop)
    while at is not None:
        begin = max(data.rfind(b"\n\n", start, at.start()),
                    data.rfind(b"\r\n\r\n", start, at.start()) if crlf else -1)
        begin = start if begin == -1 else begin
        ends = [e for e in (data.find(b"\n\n", at.end(), stop),
                            data.find(b"\r\n\r\n", at.end(), stop) if crlf else -1) if e != -1]
        end = min(ends) if ends else stop
        spans.append((begin, end))
        at = markers.search(data, end, stop)
    return [data[begin:end].strip(b"\r\n") for begin, end in spans]

