"""What an episode reports to while it runs, and what it is told of the thread it answers."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from adapters.base import Event
from bot.record.recorder import Recorder

LIVE_LABEL = "follow it live"


class Progress(Protocol):
    """What an episode reports to: the job's tracking comment, or one review agent's view of it
    (bot/job/review_job.py). Typed so that a view cannot be handed where the comment itself is
    meant, nor the other way round."""

    async def note(self, text: str, done: bool = True) -> None: ...

    async def plan(self, markdown: str) -> None: ...

    async def on_event(self, event: Event) -> None: ...

    def link_live(self, url: str, label: str = LIVE_LABEL) -> None: ...


class Thread(Protocol):
    """The thread the episode answers, as the job hands it down: the prompt and the standing
    instruction it built, the reader behind the bridge's read_thread, the folder of the thread's
    attachments (bound read-only inside), and the record of what the job showed the agent."""

    @property
    def folder(self) -> Path | None: ...

    @property
    def live(self) -> bool:
        """The answer goes to a thread people read, so the run's live page is linked in it."""

    async def prompt(self, resumed: bool, fresh_reason: str | None) -> str: ...

    def instruction(self) -> str: ...

    def reader(self) -> Callable[[], Awaitable[str]]: ...

    def record(self, recorder: Recorder, run_id: str) -> None: ...
