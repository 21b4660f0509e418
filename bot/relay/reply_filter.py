"""Removes from a chat stream what the relay asked for on its own behalf, when the client did not:
asked for `stream_options.include_usage`, the provider adds `"usage":null` as the last key of every
chunk and one more chunk with empty `choices` that carries the usage. Both go; every other byte
passes as the provider sent it.

The stream is cut only at whole SSE events (the unfinished tail waits for the next piece). A raw
newline cannot occur inside a JSON string, so `,"usage":null}` right before a line end is the last
key of a data line's top-level object, never text of the answer.
"""
from __future__ import annotations

import json
import re

_NULL_USAGE = re.compile(rb',\s*"usage"\s*:\s*null\s*\}(?=\r?\n)')
_USAGE_OBJECT = re.compile(rb'"usage"\s*:\s*\{')
_EVENT_END = re.compile(rb"\r?\n\r?\n")


class UsageChunkFilter:
    def __init__(self) -> None:
        self._tail = b""

    def feed(self, chunk: bytes) -> bytes:
        data = self._tail + chunk if self._tail else chunk
        end = _last_event_end(data)
        self._tail = data[end:]
        return _clean(data[:end]) if end else b""

    def close(self) -> bytes:
        """What is left once the provider's stream ended (a last event without its blank line)."""
        rest, self._tail = self._tail, b""
        return _clean(rest + b"\n")[:-1] if rest else b""


def _last_event_end(data: bytes) -> int:
    lf, crlf = data.rfind(b"\n\n"), data.rfind(b"\n\r\n")
    return max(lf + 2 if lf != -1 else 0, crlf + 3 if crlf != -1 else 0)


def _clean(events: bytes) -> bytes:
    events = _NULL_USAGE.sub(b"}", events)
    if not _USAGE_OBJECT.search(events):
        return events
    out, at = [], 0
    for boundary in _EVENT_END.finditer(events):
        event = events[at:boundary.end()]
        if not _usage_only(event):
            out.append(event)
        at = boundary.end()
    out.append(events[at:])
    return b"".join(out)


def _usage_only(event: bytes) -> bool:
    """An event whose data is a chunk with empty `choices` and a usage object."""
    if not _USAGE_OBJECT.search(event):
        return False
    lines = [line[5:].lstrip(b" ") for line in event.replace(b"\r\n", b"\n").split(b"\n") if line.startswith(b"data:")]
    try:
        data = json.loads(b"\n".join(lines)) if lines else None
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("choices") == [] and isinstance(data.get("usage"), dict)
