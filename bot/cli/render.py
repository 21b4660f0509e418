"""`bot run` on a terminal: the job's steps as they happen, the answer once, a short provenance.

    term = Terminal(live=Terminal.wants_live(plain))    # a status line redrawn in place on a TTY
    ctx = Job(..., surface=term, mode=LocalMode(repo, on_answer=term.answer))
    ... pipeline.run(...) ...
    term.close(status)                                  # the answer and the summary, or --json

Progress (one line per step, one per tool call once its outcome is known, and on a TTY a live
status line with the elapsed time) goes to stderr; the answer and its provenance go to stdout, so
`bot run "…" > answer.md` keeps only the answer. Everything shown that an agent or a repository
wrote is stripped of control characters first: a terminal obeys escape sequences, and an agent's
text must not be able to move the cursor, retitle the window or hide lines.
"""
from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, TextIO

from adapters.base import Event, EventKind
from bot.record.provenance import Provenance
from bot.record.tool_line import call_line, one_line, safe, tool_detail, tool_name

__all__ = ["Terminal", "one_line", "safe", "summary", "tool_detail", "tool_name"]
NAME_WIDTH = 12

TICK_S = 0.2
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
CLEAR_LINE = "\r\x1b[2K"
_BOLD_NAME = re.compile(r"\*\*([A-Za-z0-9_.-]+)\*\*")


def plain(text: str) -> str:
    """One of the bot's own Markdown lines, for a terminal: no backticks, no bold marks."""
    return safe(text).replace("**", "").replace("`", "")


def checkbox(line: str) -> str:
    """A Markdown task-list line as a terminal shows it: `- [x] a` → `✓ a`, `- [ ] b` → `○ b`."""
    for box, mark in (("- [x] ", "✓ "), ("- [X] ", "✓ "), ("- [ ] ", "○ ")):
        if line.startswith(box):
            return mark + line[len(box):]
    return line


@dataclass
class ToolCall:
    name: str
    detail: str
    ok: bool | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.name, "detail": self.detail, "ok": self.ok, "error": self.error}


@dataclass
class Outcome:
    """What the run produced, as `--json` prints it."""

    status: str = "failed"
    agent: str | None = None
    answer: str = ""
    steps: list[str] = field(default_factory=list)
    tools: list[ToolCall] = field(default_factory=list)
    provenance: Provenance | None = None


class Terminal:
    """The job's surface and watcher for `bot run` (bot.job.tracking.Surface and Watcher)."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *, live: bool = False,
                 as_json: bool = False):
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.live, self.as_json = live, as_json
        self.result = Outcome()
        self.last_body = ""
        self._open: deque[ToolCall] = deque()
        self._latest = ""
        self._started = time.monotonic()
        self._status_shown = False
        self._shown_steps: set[str] = set()

    @staticmethod
    def wants_live(plain_asked: bool, out: TextIO | None = None, err: TextIO | None = None) -> bool:
        """A status line redrawn in place only where a person watches: stdout and stderr a TTY."""
        out, err = out or sys.stdout, err or sys.stderr
        return not plain_asked and out.isatty() and err.isatty()

    # Surface: the comment text is kept only for the end (a refusal has no other form) ---------

    async def post(self, body: str) -> int:
        self.last_body = body
        return 1

    async def edit(self, handle: int | None, body: str) -> None:
        self.last_body = body

    # Watcher --------------------------------------------------------------------------------

    def headline(self, text: str) -> None:
        found = _BOLD_NAME.search(text)
        self.result.agent = found.group(1) if found else self.result.agent

    def noted(self, text: str) -> None:
        """A step line; an agent's progress report (a Markdown checklist, sent again whole as it
        advances) shows only its lines not shown before, a ticked box as ✓."""
        for line in filter(None, (checkbox(one_line(raw, 200)) for raw in plain(text).splitlines())):
            if line in self._shown_steps:
                continue
            self._shown_steps.add(line)
            self.result.steps.append(line)
            self._print(f"· {line}")

    def event(self, event: Event) -> None:
        if event.kind == EventKind.TOOL_USE:
            call = ToolCall(tool_name(event.tool), tool_detail(event.text))
            self.result.tools.append(call)
            self._open.append(call)
            self._latest = f"{call.name} {call.detail}".strip()
        elif event.kind == EventKind.TOOL_RESULT and self._open:
            call = self._open.popleft()
            call.ok, call.error = event.error is None, one_line(event.error, 100) if event.error else None
            self._print_tool(call)
        elif event.kind == EventKind.SESSION and event.session_id:
            self.noted(f"session {event.session_id[:13]}")
        elif event.kind in (EventKind.TEXT, EventKind.THINKING) and event.text.strip():
            self._latest = one_line(event.text, 60)
        elif event.kind == EventKind.ERROR and event.error:
            self._print(f"! {one_line(event.error, 200)}")

    def answer(self, text: str, prov: Provenance) -> None:
        self.result.answer, self.result.provenance = safe(text).strip(), prov
        self.result.agent = prov.agent

    # the live status line -----------------------------------------------------------------------

    async def tick(self) -> None:
        """Redraw the status line until cancelled (only when live)."""
        frame = 0
        while self.live:
            self._draw(SPINNER[frame % len(SPINNER)])
            frame += 1
            await asyncio.sleep(TICK_S)

    def _draw(self, spin: str) -> None:
        elapsed = int(time.monotonic() - self._started)
        what = f" · {self._latest}" if self._latest else ""
        line = f"{spin} {self.result.agent or 'agent'} is working · {elapsed} s{what}"
        self.err.write(CLEAR_LINE + line[:self._width()])
        self.err.flush()
        self._status_shown = True

    def _width(self) -> int:
        try:
            return max(shutil.get_terminal_size().columns - 1, 20)
        except (OSError, ValueError):
            return 79

    def _print(self, line: str) -> None:
        if self._status_shown:
            self.err.write(CLEAR_LINE)
            self._status_shown = False
        self.err.write(line + "\n")
        self.err.flush()

    def _print_tool(self, call: ToolCall) -> None:
        mark = "✓" if call.ok else "✗"
        self._print(f"{mark} {call_line(call.name, call.detail, call.error, NAME_WIDTH)}")

    # the end -----------------------------------------------------------------------------------

    def abandon(self) -> None:
        """Stop the status line and leave the screen clean (the run was interrupted)."""
        self.live = False
        if self._status_shown:
            self.err.write(CLEAR_LINE)
            self.err.flush()
            self._status_shown = False

    def close(self, status: str) -> None:
        """Stop the status line and show the outcome: the answer and its summary, or --json."""
        self.live = False
        for call in self._open:  # a call whose result never came
            self._print(f"… {call_line(call.name, call.detail, name_width=NAME_WIDTH)} (no result)")
        if self._status_shown:
            self.err.write(CLEAR_LINE)
            self._status_shown = False
        self.result.status = status
        if not self.result.answer:
            self.result.answer = plain(self.last_body).strip()
        if self.as_json:
            self.out.write(json.dumps(as_json(self.result, time.monotonic() - self._started), indent=2) + "\n")
        else:
            self.out.write(self.result.answer + "\n")
            if self.result.provenance is not None:
                self.out.write("\n" + summary(self.result.provenance) + "\n")
        self.out.flush()


def as_json(result: Outcome, elapsed_s: float) -> dict[str, Any]:
    return {"status": result.status, "agent": result.agent, "answer": result.answer,
            "elapsed_s": round(elapsed_s, 3), "steps": result.steps,
            "tools": [call.as_dict() for call in result.tools],
            "provenance": result.provenance.as_dict() if result.provenance else None}


def summary(prov: Provenance) -> str:
    """The provenance as a few aligned lines (the comment's table, for a terminal)."""
    rows = [("agent", " · ".join(filter(None, [f"{prov.agent} {prov.version or ''}".strip(), prov.session,
                                                    prov.status if prov.status not in (None, "ok") else ""]))),
            ("time", _duration(prov.duration_s)),
            ("spend", _spend(prov)),
            ("files", _files(prov.files_changed)),
            ("record", _tiers(prov)),
            ("sandbox", _sandbox(prov)),
            ("run", f"{prov.run_id[:12]}  (bot runs show {prov.run_id[:12]})")]
    return "\n".join(f"  {name:<8} {one_line(value, 4000)}" for name, value in rows if value)


def _files(paths: list[str]) -> str:
    count = f"{len(paths)} file{'s' if len(paths) != 1 else ''} changed"
    return f"{count}: {', '.join(paths)}" if paths else "no file changed"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def _spend(prov: Provenance) -> str:
    parts = [f"{prov.tokens:,} tokens" if prov.tokens else ""]
    if prov.cost_usd:
        parts.append(f"${prov.cost_usd:.2f}" if prov.cost_usd >= 0.01 else "<$0.01")
    return " · ".join(p for p in parts if p)


def _tiers(prov: Provenance) -> str:
    return " · ".join(filter(None, [prov.record_words(), prov.unseen_words()]))


def _sandbox(prov: Provenance) -> str:
    hosts = sorted(h for h, c in prov.egress.items() if c.get("allowed"))
    tier = f"tier {prov.sandbox_tier}" if prov.sandbox_tier is not None else "tier ?"
    return f"{tier} · egress {', '.join(hosts) if hosts else 'none'}"
