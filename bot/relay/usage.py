"""Tokens of one model call, read from each API's own usage fields, streamed or not.

Normalised (`CallUsage`), whatever the API's convention:
  input_tokens        prompt tokens read fresh (billed at the input price)
  cached_tokens       prompt tokens read from the provider's cache (the cached price)
  cache_write_tokens  prompt tokens written to the cache (the cache-write price)
  long_cache_write_tokens  the part of cache_write_tokens written for the longer retention
                      (Anthropic's one hour, OpenAI's 12 hours; the long cache-write price)
  output_tokens       generated tokens, reasoning included (the output price)
  reasoning_tokens    the part of output_tokens the model spent thinking (shown, not billed again)

OpenAI and Gemini count cache reads (and OpenAI cache writes) inside their prompt count; Anthropic
reports both beside it.
Gemini counts thinking beside its candidates; OpenAI inside its completion count.

`UsageTap(api)` is fed the response bytes as they pass (`feed`) and reads them behind the stream:
the pieces of up to BEHIND bytes are read together once that much has passed or the reply ended, so
on an answer of usual size the search runs after its last byte has left for the CLI, not between its
pieces. What it keeps besides is the unfinished tail of the current event and the last event that can
carry usage (Anthropic message_start / message_delta, OpenAI response.completed, the chat usage
chunk, Gemini's last usageMetadata), found with a byte search before any JSON is parsed. A JSON
(not streamed) reply is kept up to a cap and parsed at the end.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

JSON_CAP = 32 << 20  # a reply larger than this is passed on but not read for usage
EVENT_CAP = 16 << 20  # one SSE event larger than this is passed on but not read
BEHIND = 1 << 20  # the bytes of a stream the tap holds before it reads them
IN_PLACE = 64 << 10  # a piece this large is searched where it lies, not joined with others


@dataclass
class CallUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    long_cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.cached_tokens + self.cache_write_tokens + self.output_tokens

    def as_dict(self) -> dict[str, Any]:
        # by hand: dataclasses.asdict copies each field deeply, a tenth of recording a call
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cached_tokens": self.cached_tokens, "cache_write_tokens": self.cache_write_tokens,
                "reasoning_tokens": self.reasoning_tokens, "long_cache_write_tokens": self.long_cache_write_tokens}


def _int(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def anthropic_usage(usage: dict[str, Any]) -> CallUsage:
    """`cache_creation` splits the cache writes by retention (five minutes, one hour)."""
    by_retention = _dict(usage.get("cache_creation"))
    one_hour = _int(by_retention.get("ephemeral_1h_input_tokens"))
    writes = max(_int(usage.get("cache_creation_input_tokens")),
                 _int(by_retention.get("ephemeral_5m_input_tokens")) + one_hour)
    return CallUsage(input_tokens=_int(usage.get("input_tokens")), output_tokens=_int(usage.get("output_tokens")),
                     cached_tokens=_int(usage.get("cache_read_input_tokens")), cache_write_tokens=writes,
                     long_cache_write_tokens=min(one_hour, writes))


def openai_usage(usage: dict[str, Any], prompt: str = "input_tokens", completion: str = "output_tokens") -> CallUsage:
    """Responses (input_tokens/output_tokens) and Chat Completions (prompt_tokens/completion_tokens).
    The prompt count includes the cache reads and writes its details break out."""
    details = _dict(usage.get(f"{prompt}_details"))
    cached, writes = _int(details.get("cached_tokens")), _int(details.get("cache_write_tokens"))
    long_writes = min(writes, _int(_dict(details.get("cache_write_tokens_details")).get("ttl_12h_tokens")))
    return CallUsage(input_tokens=max(0, _int(usage.get(prompt)) - cached - writes), cached_tokens=cached,
                     cache_write_tokens=writes, long_cache_write_tokens=long_writes,
                     output_tokens=_int(usage.get(completion)),
                     reasoning_tokens=_int(_dict(usage.get(f"{completion}_details")).get("reasoning_tokens")))


def gemini_usage(meta: dict[str, Any]) -> CallUsage:
    cached = _int(meta.get("cachedContentTokenCount"))
    thoughts = _int(meta.get("thoughtsTokenCount"))
    prompt = _int(meta.get("promptTokenCount")) + _int(meta.get("toolUsePromptTokenCount"))
    return CallUsage(input_tokens=max(0, prompt - cached), cached_tokens=cached,
                     output_tokens=_int(meta.get("candidatesTokenCount")) + thoughts, reasoning_tokens=thoughts)


# ---------------------------------------------------------------- whole replies

def from_reply(api: str, body: object) -> tuple[CallUsage | None, str | None]:
    """(usage, model) of a parsed JSON reply; Gemini's streamed JSON array counts by its last element."""
    if api == "gemini" and isinstance(body, list):
        body = next((item for item in reversed(body) if isinstance(item, dict) and "usageMetadata" in item), {})
    body = _dict(body)
    model = body.get("model") or body.get("modelVersion")
    model = model if isinstance(model, str) else None
    if api == "anthropic" and isinstance(body.get("usage"), dict):
        return anthropic_usage(body["usage"]), model
    if api == "responses" and isinstance(body.get("usage"), dict):
        return openai_usage(body["usage"]), model
    if api == "chat" and isinstance(body.get("usage"), dict):
        return openai_usage(body["usage"], "prompt_tokens", "completion_tokens"), model
    if api == "gemini" and isinstance(body.get("usageMetadata"), dict):
        return gemini_usage(body["usageMetadata"]), model
    return None, model


# ---------------------------------------------------------------- the tap

# Per API: byte strings of which one must occur in an SSE event for it to be worth parsing
# (OpenAI sends `"usage":null` in every chunk when asked for usage: only an object counts).
_MARKERS = {"anthropic": (b"message_start", b"message_delta"),
            "responses": (b"response.completed", b"response.incomplete", b"response.failed"),
            "chat": (b'"usage":{', b'"usage": {'), "gemini": (b"usageMetadata",)}
# one pass over the bytes finds any of an API's markers (two `find`s would cost two passes)
_MARKER_PATTERNS = {api: re.compile(b"|".join(re.escape(m) for m in markers)) for api, markers in _MARKERS.items()}
_NEVER = re.compile(rb"(?!)")
_KINDS = {"anthropic": ("message_start", "message_delta"),
          "responses": ("response.completed", "response.incomplete", "response.failed")}


class UsageTap:
    """Reads the usage of one reply from its bytes as they pass; see the module docstring."""

    def __init__(self, api: str, content_type: str):
        self.api = api
        self.sse = "text/event-stream" in content_type.lower()
        self._markers = _MARKER_PATTERNS.get(api, _NEVER)
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
        if not isinstance(data, dict):
            return
        if self.api in _KINDS:  # the event's type is inside its data as well as on its event: line
            if data.get("type") in _KINDS[self.api]:
                self._kept["final" if self.api == "responses" else data["type"]] = data
        elif self.api == "chat" and isinstance(data.get("usage"), dict):
            self._kept["usage"] = data
        elif self.api == "gemini" and isinstance(data.get("usageMetadata"), dict):
            self._kept["usage"] = data

    def result(self) -> tuple[CallUsage | None, str | None]:
        """(usage, model) once the reply ended; usage None when the reply carried none."""
        if self.sse:
            self._read_behind()
            return _from_events(self.api, self._kept)
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


def _from_events(api: str, events: dict[str, dict[str, Any]]) -> tuple[CallUsage | None, str | None]:
    if api == "anthropic":
        start = _dict(_dict(events.get("message_start")).get("message"))
        usage = dict(_dict(start.get("usage")))
        usage.update({k: v for k, v in _dict(_dict(events.get("message_delta")).get("usage")).items()
                      if v is not None})  # message_delta's counts are cumulative
        model = start.get("model") if isinstance(start.get("model"), str) else None
        return (anthropic_usage(usage) if usage else None), model
    if api == "responses":
        return from_reply(api, _dict(_dict(events.get("final")).get("response")))
    return from_reply(api, events.get("usage"))
