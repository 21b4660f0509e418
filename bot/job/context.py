"""What a job is while it runs: its context, and the way to end it early with a terminal text."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.errors import BotError
from bot.job.tracking import Surface


class Stop(BotError):
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
    repo_id: int = 0  # GitHub's id of the repository: repository keys are bound to it, not its name
    title: str = ""
    is_pr: bool = False
    mode: Any = None  # bot.job.modes.GitHubMode or LocalMode: the steps that differ
    thread: Any = None  # bot.github.client.Thread; None in local mode
    installation_id: int | None = None
    target: dict | None = None  # the triggering comment, for the 👀 reaction
    tracking_handle: int | None = None
    on_tracking_created: Callable[[int], Awaitable[None] | None] | None = None
    job_id: int | None = None
    progress_interval_s: float = 3.0
    secrets: list[str] = field(default_factory=list)
    review: bool = False  # a pull-request review (bot/job/review_job.py)
    agents: tuple[str, ...] = ()  # the review's agents, in the order named
    findings: Any = None  # a review episode's collector (bot.review.findings): its bridge offers the review tools
    stopped_by: str | None = None  # who stopped the job with `@bot stop` (their permission was checked)
    ended_because: str | None = None  # why it ended early, for the service's outcome line ("no credentials")

    @property
    def token(self) -> str | None:
        """The GitHub token for git and effects, as the thread holds it now (it is renewed in a
        long job and on a 401): one source of truth. It never reaches the agent."""
        return self.thread.api.oauth_token if self.thread is not None else None

    async def refresh_token(self) -> None:
        """A long run can outlive the installation token it started with (one hour): renew it
        before the push and the pull request, and redact the new one too."""
        fresh = getattr(self.thread, "fresh_token", None)
        if fresh is not None:
            await fresh()
        self.add_secret(self.token)

    def add_secret(self, value: str | None) -> None:
        """A value that must never leave: masked in logs, comments and the record from now on."""
        if value and value not in self.secrets:
            self.secrets.append(value)
