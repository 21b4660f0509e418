"""The tracking comment: posted once, edited in place (working → live checklist → answer).

Edits are throttled so a long run edits at most every `interval_s`; the final edit always goes
out. The comment id is handed to `on_created` so a retried job edits the same comment.
Everything posted is redacted first.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Protocol, runtime_checkable

from adapters.base import Event, EventKind
from bot.episode.progress import LIVE_LABEL
from bot.github.client import with_retries
from bot.github.thread import GitHubThread
from bot.record import render
from bot.record.redact import redact
from bot.record.tool_line import call_line, one_line, tool_detail, tool_name

log = logging.getLogger("bot.job.tracking")
MAX_CHECKLIST = 12
MAX_PLAN = 20  # lines of the agent's own checklist shown
MAX_COMMENT_CHARS = 60000  # GitHub refuses bodies over 65536 characters
HEARTBEAT_S = 20.0  # between steps, the working comment's elapsed time still moves this often
# report_progress is shown as the agent's plan, not as a call with its markdown argument
PLAN_TOOL = "report_progress"
_PLAN_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[(?P<box>[ xX])\]\s*)?(?P<text>.*)$")


@runtime_checkable
class Surface(Protocol):
    """Where the tracking text goes: a GitHub comment or the terminal."""

    async def post(self, body: str) -> int | None: ...

    async def edit(self, handle: int | None, body: str) -> None: ...


@runtime_checkable
class Removable(Protocol):
    """A surface whose comment can be taken back (GitHub's): a review with nothing to say leaves none."""

    async def remove(self, handle: int | None) -> bool: ...


@runtime_checkable
class Watcher(Protocol):
    """A surface that follows the job's steps themselves rather than comment text (the terminal:
    bot/cli/render.py). The comment text still goes to post/edit; a watcher may ignore it."""

    def headline(self, text: str) -> None: ...

    def noted(self, text: str) -> None: ...

    def event(self, event: Event) -> None: ...


class Checklist:
    """Progress lines from the event stream, newest last, bounded. A tool call reads as the terminal
    shows it (`save_file calc.py`, bot/record/tool_line.py) and is open until its result arrives; a
    failed call or an error is a warning line, not a box."""

    DONE, OPEN, WARN, NOTE = "done", "open", "warn", "note"

    def __init__(self) -> None:
        self.items: list[list[str]] = []  # [state, text]
        self.plan: list[list[str]] = []  # the agent's own checklist, replaced by each report
        self._open_calls: deque[tuple[list[str] | None, str, str]] = deque()  # (item or hidden, name, detail)

    def add(self, text: str, done: bool = True, state: str | None = None) -> list[str]:
        item = [state or (self.DONE if done else self.OPEN), render.markdown(text)]
        self.items.append(item)
        del self.items[:-MAX_CHECKLIST]
        return item

    def set_plan(self, markdown: str) -> None:
        """The agent's checklist as its own lines: `- [x] read calc.py` ticked, `- [ ] …` open, any
        other line as it is; replaced whole by the next report, never spliced into the steps."""
        plan = []
        for line in markdown.splitlines():
            found = _PLAN_LINE.match(line)
            box, text = (found.group("box"), found.group("text")) if found else (None, line)
            if text.strip():
                state = self.DONE if box in ("x", "X") else self.OPEN if box == " " else self.NOTE
                plan.append([state, render.markdown(one_line(text, 100))])
        self.plan = plan[:MAX_PLAN]

    def from_event(self, event: Event) -> bool:
        """Add or tick a line for the events worth showing; True when something changed."""
        if event.kind == EventKind.TOOL_USE:
            name, detail = tool_name(event.tool), tool_detail(event.text)
            if name == PLAN_TOOL:  # its markdown is shown as the plan when the bridge receives it
                self._open_calls.append((None, name, detail))
                return False
            self._open_calls.append((self.add(call_line(name, detail), state=self.OPEN), name, detail))
        elif event.kind == EventKind.TOOL_RESULT:
            return self._close_oldest_call(event.error)
        elif event.kind == EventKind.SESSION and event.session_id:
            self.add(f"session `{event.session_id[:12]}`")
        elif event.kind == EventKind.TEXT and event.text.strip():
            self.add(_short(event.text.strip().splitlines()[0], 100))
        elif event.kind == EventKind.ERROR and event.error:
            self.add(f"error: {_short(event.error, 100)}", state=self.WARN)
        else:
            return False
        return True

    def _close_oldest_call(self, error: str | None) -> bool:
        if not self._open_calls:
            return False
        item, name, detail = self._open_calls.popleft()
        if item is None:
            return False
        if error:
            item[:] = [self.WARN, render.markdown(call_line(name, detail, one_line(error, 100)))]
        else:
            item[0] = self.DONE
        return True

    def render(self) -> str:
        marks = {self.DONE: "- [x]", self.OPEN: "- [ ]", self.WARN: "- ⚠️", self.NOTE: "-"}
        steps = "\n".join(f"{marks[state]} {text}" for state, text in self.items)
        if not self.plan:
            return steps
        plan = "\n".join(f"{marks[state]} {text}" for state, text in self.plan)
        return f"{plan}\n\n_steps:_\n\n{steps}" if steps else plan


class TrackingComment:
    def __init__(self, surface: Surface, secrets: Callable[[], Iterable[str]], *, handle: int | None = None,
                 on_created: Callable[[int], Awaitable[None] | None] | None = None,
                 interval_s: float = 3.0, header: str = ""):
        self.surface, self._secrets, self.handle = surface, secrets, handle
        self._watcher = surface if isinstance(surface, Watcher) else None
        self._on_created, self.interval_s, self.header = on_created, interval_s, header
        self.checklist = Checklist()
        self._links: dict[str, str] = {}  # label -> url, shown after the header
        self._last_edit = 0.0
        self._pending: asyncio.TimerHandle | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._started = time.monotonic()
        self._lock = asyncio.Lock()
        self._finished = False  # after the terminal edit no progress edit may overwrite it
        self._withdrawn = False  # the comment was taken back: no terminal edit either

    @property
    def header(self) -> str:
        links = "".join(f" · [{label}]({url})" for label, url in self._links.items())
        return self._header + links if self._header else self._header

    @header.setter
    def header(self, text: str) -> None:
        self._header = text
        if self._watcher and text:
            self._watcher.headline(redact(self.header, self._secrets()))

    def link_live(self, url: str, label: str = LIVE_LABEL) -> None:
        """The header links a run's live page (bot/web/run_page.py); a later run under the same
        label (a fallback agent) replaces the link."""
        self._links[label] = url
        self.header = self._header

    async def start(self, header: str) -> None:
        """Post the working comment, or reset the one a previous attempt already posted."""
        self._links.clear()
        self.header = header
        body = self._working_body()
        if self.handle is None:
            self.handle = await self.surface.post(self._clean(body))
            if self._on_created and self.handle is not None:
                outcome = self._on_created(self.handle)
                if asyncio.iscoroutine(outcome):
                    await outcome
        else:
            await self.surface.edit(self.handle, self._clean(body))
        self._last_edit = time.monotonic()
        if self._heartbeat is None and self._watcher is None:
            self._heartbeat = asyncio.create_task(self._beat())

    async def _beat(self) -> None:
        """Between steps the working comment is still edited now and then, so its elapsed time moves
        and a long step does not read as a frozen run."""
        while not self._finished:
            await asyncio.sleep(max(HEARTBEAT_S, self.interval_s))
            if not self._finished and time.monotonic() - self._last_edit >= HEARTBEAT_S:
                await self._maybe_edit()

    async def plan(self, markdown: str) -> None:
        """The agent's own checklist (its report_progress), shown above the steps."""
        self.checklist.set_plan(markdown)
        if self._watcher:
            self._watcher.noted(redact(markdown, self._secrets()))
        await self._maybe_edit()

    async def note(self, text: str, done: bool = True) -> None:
        self.checklist.add(text, done)
        if self._watcher:
            self._watcher.noted(redact(text, self._secrets()))
        await self._maybe_edit()

    async def on_event(self, event: Event) -> None:
        if self._watcher:
            secrets = self._secrets()
            self._watcher.event(replace(event, text=redact(event.text, secrets), raw=b"",
                                        error=redact(event.error, secrets) if event.error else event.error))
        if self.checklist.from_event(event):
            await self._maybe_edit()

    async def finish(self, body: str) -> None:
        """The terminal edit: the answer, an error, or stopped. Always sent, unless withdrawn."""
        self._stop_editing()
        async with self._lock:
            if self._withdrawn:
                return
            text = self._clean(body)
            if self.handle is None:
                self.handle = await self.surface.post(text)
            else:
                await self.surface.edit(self.handle, text)

    async def withdraw(self) -> bool:
        """Take the comment back instead of the terminal edit (a quiet review: its 👍 and check run
        say it); False, with the comment kept for `finish`, when the surface cannot or GitHub refused."""
        if not isinstance(self.surface, Removable) or self.handle is None:
            return False
        self._stop_editing()
        async with self._lock:
            try:
                self._withdrawn = await self.surface.remove(self.handle)
            except Exception as exc:  # the comment stays: the terminal edit answers in it
                log.warning("could not take the tracking comment back: %s", exc)
        return self._withdrawn

    def _stop_editing(self) -> None:
        self._finished = True
        if self._pending:
            self._pending.cancel()
        if self._heartbeat:
            self._heartbeat.cancel()

    async def _maybe_edit(self) -> None:
        if self.handle is None or self._finished:
            return
        wait = self.interval_s - (time.monotonic() - self._last_edit)
        if wait <= 0:
            await self._edit_now()
        elif self._pending is None:
            self._pending = asyncio.get_running_loop().call_later(
                wait, lambda: asyncio.ensure_future(self._edit_now()))

    async def _edit_now(self) -> None:
        self._pending = None
        async with self._lock:
            if self._finished:  # a timer that fired while the answer was being posted
                return
            self._last_edit = time.monotonic()
            try:
                await self.surface.edit(self.handle, self._clean(self._working_body()))
            except Exception as exc:  # a missed progress edit must not end the episode
                log.warning("progress edit failed: %s", exc)

    def _working_body(self) -> str:
        elapsed = int(time.monotonic() - self._started)
        shown = self.checklist.items or self.checklist.plan
        lines = [self.header, "", self.checklist.render()] if shown else [self.header]
        return "\n".join(lines + ["", f"<sub>working · {elapsed} s</sub>"])

    def _clean(self, body: str) -> str:
        text = redact(body, self._secrets())
        if len(text) > MAX_COMMENT_CHARS:
            text = text[:MAX_COMMENT_CHARS] + "\n\n… (truncated)"
        return text


def _short(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class GitHubSurface:
    """The tracking comment on GitHub: an issue comment, or a reply in a review thread.

    `marker` (an HTML comment naming the job) is appended to every body, so a retried post, or a
    job retried after a crash (`look_first`), finds the comment already posted instead of posting
    a second one."""

    def __init__(self, thread: GitHubThread, review_thread: int | None = None, marker: str = "",
                 look_first: bool = False) -> None:
        self.thread, self.review_thread = thread, review_thread
        self.marker, self.look_first = marker, look_first
        self.muted = False

    def mute(self) -> None:
        """Another worker took the job over: from now on this one writes nothing to the thread."""
        self.muted = True

    async def post(self, body: str) -> int | None:
        if self.muted:
            return None
        return await self.thread.create_comment(self._marked(body), review_thread=self.review_thread,
                                                marker=self.marker or None, look_first=self.look_first)

    async def edit(self, handle: int | None, body: str) -> None:
        if self.muted or handle is None:  # None: the post was muted, there is no comment to edit
            return
        await with_retries(lambda: self.thread.update_comment(handle, self._marked(body),
                                                              review=self.review_thread is not None))

    async def remove(self, handle: int | None) -> bool:
        if self.muted or handle is None:  # another worker holds the job, or nothing was posted
            return False
        await with_retries(lambda: self.thread.delete_comment(handle, review=self.review_thread is not None))
        return True

    def _marked(self, body: str) -> str:
        return f"{body}\n{self.marker}" if self.marker else body
