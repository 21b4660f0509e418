"""The events of one episode held in memory for the adapter's `finish()`, bounded.

The record (bot/record/recorder.py) stores every event as it arrives; memory keeps only what a
`finish()` reads, whatever the CLI prints:

- the first events (the session's start: its id, the CLI's version, the MCP servers' status);
- the last events (the answer, the last tool exchange, the final error);
- past those, one event per role for events that left the last ones: the latest session id,
  terminal error, DONE, tool call and text; the texts since the last tool call joined in one
  (up to an answer's size: an answer streamed in deltas); the first events carrying data;
  usage folded into one event holding the sum.

A short episode keeps every event as it came; `dropped` counts what memory let go.
"""
from __future__ import annotations

from collections import deque
from dataclasses import replace

from adapters.base import Event, EventKind, Usage

HEAD_EVENTS, TAIL_EVENTS = 1000, 1000
HEAD_BYTES, TAIL_BYTES = 8 << 20, 8 << 20
DATA_EVENTS, DATA_BYTES = 64, 1 << 20
ANSWER_CHARS = 1 << 20
_TOOLS = (EventKind.TOOL_USE, EventKind.TOOL_RESULT)
Numbered = tuple[int, Event]


def _light(seq: int, event: Event) -> Numbered:
    """The event without its raw line: the record holds that."""
    return seq, replace(event, raw=b"") if event.raw else event


def _size(event: Event) -> int:
    return len(event.raw) + len(event.text) + len(event.error or "")


class KeptEvents:
    def __init__(self) -> None:
        self.count = 0
        self._head: list[Numbered] = []
        self._head_bytes = self._tail_bytes = 0
        self._tail: deque[Numbered] = deque()
        self._roles: dict[str, Numbered] = {}
        self._data: list[Numbered] = []
        self._data_bytes = 0
        # the texts since the last tool call but the latest: (seq of the first, texts, its session id)
        self._answer: tuple[int, list[str], str | None] | None = None
        self._answer_chars = 0
        self._last_tool = -1
        self._usage: Numbered | None = None

    def add(self, event: Event) -> None:
        seq, self.count, size = self.count, self.count + 1, _size(event)
        if len(self._head) < HEAD_EVENTS and self._head_bytes + size <= HEAD_BYTES:
            self._head.append((seq, event))
            self._head_bytes += size
        elif event.kind == EventKind.USAGE:
            self._fold_usage(seq, event)
        else:
            self._tail.append((seq, event))
            self._tail_bytes += size
            while len(self._tail) > TAIL_EVENTS or self._tail_bytes > TAIL_BYTES:
                self._evict()

    @property
    def dropped(self) -> int:
        return self.count - len(self.events())

    def events(self) -> list[Event]:
        """What is kept, in the order it came."""
        session = [self._roles["session"]] if "session" in self._roles else []  # the others' copies win
        roles = [numbered for role, numbered in self._roles.items() if role != "session"]
        kept = {seq: event for seq, event in (*self._head, *session, *roles, *self._data, *self._tail)}
        if self._answer is not None:
            seq, texts, session_id = self._answer
            kept[seq] = Event(EventKind.TEXT, text="".join(texts), session_id=session_id)
        if self._usage is not None:
            kept[self._usage[0]] = self._usage[1]
        return [kept[seq] for seq in sorted(kept)]

    def _fold_usage(self, seq: int, event: Event) -> None:
        total = self._usage[1].usage if self._usage else None
        usage = (total or Usage()).add(event.usage or Usage())
        self._usage = (seq, Event(EventKind.USAGE, usage=usage, session_id=event.session_id,
                                  text="usage of the events past the first ones, summed"))

    def _evict(self) -> None:
        seq, event = self._tail.popleft()
        self._tail_bytes -= _size(event)
        if event.session_id:  # a copy that says nothing else: its text may be joined in the answer
            self._roles["session"] = _light(seq, event) if event.kind == EventKind.SESSION else (
                seq, Event(EventKind.PROGRESS, session_id=event.session_id))
        if event.kind in _TOOLS:
            self._roles["tool"], self._last_tool, self._answer = _light(seq, event), seq, None
        elif event.kind == EventKind.TEXT:
            if (previous := self._roles.get("text")) is not None and previous[0] > self._last_tool:
                self._join_answer(previous)
            self._roles["text"] = _light(seq, event)
        elif event.kind == EventKind.DONE or (event.kind == EventKind.ERROR and event.terminal):
            self._roles[event.kind.value] = _light(seq, event)
        if event.data is not None:
            self._keep_data(_light(seq, event))

    def _keep_data(self, numbered: Numbered) -> None:
        size = _size(numbered[1])
        if len(self._data) < DATA_EVENTS and self._data_bytes + size <= DATA_BYTES:
            self._data.append(numbered)
            self._data_bytes += size

    def _join_answer(self, numbered: Numbered) -> None:
        seq, event = numbered
        if self._answer is None:
            self._answer, self._answer_chars = (seq, [], event.session_id), 0
        if self._answer_chars + len(event.text) <= ANSWER_CHARS:
            self._answer[1].append(event.text)
            self._answer_chars += len(event.text)
