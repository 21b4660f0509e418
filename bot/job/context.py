"""What a job is while it runs: its context, and the way to end it early with a terminal text."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from bot.job.tracking import Surface


class Stop(Exception):
    """End the job now with this terminal text."""

    def __init__(self, text: str, status: str = "failed"):
        super().__init__(text)
        self.text, self.status = text, status


@dataclass
class JobContext:
    conversation: str
    repo: str
    request: str
    requester: str
    surface: Surface
    agent: str | None = None
    new_session: bool = False
    number: int | None = None
    requester_id: int = 0
    title: str = ""
    is_pr: bool = False
    thread: Any = None  # bot.github.Thread; None in local mode
    token: str | None = None  # installation token for git and effects; never reaches the agent
    installation_id: int | None = None
    target: dict | None = None  # the triggering comment, for the 👀 reaction
    tracking_handle: int | None = None
    on_tracking_created: Callable[[int], Awaitable[None] | None] | None = None
    local_repo: Path | None = None  # local mode: the repository to work in, no effects
    job_id: int | None = None
    progress_interval_s: float = 3.0
    secrets: list[str] = field(default_factory=list)
