"""What a job is: `Job`, frozen (what was asked, by whom, where, with which settings and mode),
and the steps that differ by where it came from (`Mode`, implemented in bot/job/modes.py). What
changes while it runs (its database, secrets, recorder, tracking comment) is its `JobRun`
(bot/job/run.py)."""
from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from bot.config import Settings
from bot.github.thread import GitHubThread
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job.tracking import Surface
from bot.relay.budgets import AutomationSpend

if TYPE_CHECKING:
    from adapters.base import Result
    from bot.bridge.tool import Labeler
    from bot.record.provenance import Provenance
    from bot.workspace.outcome import Outcome
    from bot.workspace.repo_config import RepoConfig
    from bot.workspace.worktrees import Worktree


class Finished(Protocol):
    """What a mode reads of a finished episode (bot.episode.turn.Turn)."""

    @property
    def result(self) -> Result: ...
    @property
    def run_id(self) -> str: ...


@runtime_checkable
class Mode(Protocol):
    """The steps of a job that differ by where it came from: GitHub (the service, the Action) or the
    terminal (`bot run`)."""

    @property
    def name(self) -> str: ...

    @property
    def thread(self) -> GitHubThread | None:
        """The GitHub thread the job answers in (GitHubMode's); None for the terminal's."""

    @property
    def automation_spend(self) -> AutomationSpend | None:
        """An automation's run (AutomationMode): its calls count against the automation's UTC day."""

    @property
    def labels(self) -> Labeler | None:
        """An automation's run that may label its issue (AutomationMode): its bridge offers add_labels."""

    async def acknowledge(self, ctx: Job) -> None:
        """Say the request was seen (the 👀 reaction), or nothing."""

    async def permission(self, ctx: Job) -> str | None:
        """The requester's permission, or None when nobody need be asked."""

    async def worktree(self, ctx: Job) -> Worktree: ...

    async def release(self, worktree: Worktree) -> None: ...

    async def changes_before(self, worktree: Worktree) -> set[str] | None: ...

    async def changed_since(self, worktree: Worktree, before: set[str] | None) -> list[str] | None: ...

    async def effects(self, ctx: Job, worktree: Worktree, agent: str, turn: Finished) -> Outcome | None: ...

    def still_allowed(self, ctx: Job, cfg: RepoConfig) -> Callable[[], Awaitable[str | None]]:
        """What an effect site (a review posted) asks right before it publishes: None to go on, else why not."""

    def answered(self, ctx: Job, text: str, prov: Provenance) -> None:
        """The answer and its provenance as parts, for a surface that renders them itself."""


@dataclass(frozen=True)
class Queued:
    """What the service's queue knows of a job beyond its spec."""

    job_id: int
    conversation: str  # the queue's thread key, which orders the thread's episodes
    tracking_handle: int | None = None  # the comment an earlier attempt posted
    on_tracking_created: Callable[[int], Awaitable[None] | None] | None = None


@dataclass(frozen=True, kw_only=True)
class Job:
    spec: JobSpec  # what was asked, by whom, where: the intake's (`bot run` makes its own), never copied
    conversation: str  # the thread key that orders the thread's episodes and keys its sessions
    surface: Surface
    mode: Mode  # bot.job.modes.GitHubMode or LocalMode (an automation's AutomationMode)
    settings: Settings  # the entry point's, read once: a module below it reads these, never the environment
    queued: Queued | None = None  # the service's queued job; the Action and `bot run` have no queue
    progress_interval_s: float = 3.0

    @property
    def automation_spend(self) -> AutomationSpend | None:
        """An automation's run: its calls count against the automation's day (its mode's)."""
        return self.mode.automation_spend

    @property
    def labels(self) -> Labeler | None:
        """An automation's run that may label its issue: its bridge offers add_labels (its mode's)."""
        return self.mode.labels

    @property
    def repo(self) -> str:
        return self.spec.repo

    @property
    def number(self) -> int:
        """The issue or pull request answered in; 0 for `bot run`, which answers in none."""
        return self.spec.number

    @property
    def request(self) -> str:
        return self.spec.command.request

    @property
    def requester(self) -> str:
        return self.spec.author

    @property
    def requester_id(self) -> int:
        return self.spec.author_id or 0

    @property
    def repo_id(self) -> int:
        """GitHub's id of the repository: repository keys are bound to it, not its name."""
        return self.spec.repo_id or 0

    @property
    def installation_id(self) -> int | None:
        return self.spec.installation_id

    @property
    def agent(self) -> str | None:
        return self.spec.command.agent

    @property
    def new_session(self) -> bool:
        return self.spec.command.new_session

    @property
    def review(self) -> bool:
        """A pull-request review (bot/job/review_job.py)."""
        return self.spec.command.review

    @property
    def agents(self) -> tuple[str, ...]:
        """The review's agents, in the order named."""
        return self.spec.command.agents

    @property
    def title(self) -> str:
        return self.spec.title or ""

    @property
    def is_pr(self) -> bool:
        return self.spec.is_pr

    @property
    def target(self) -> dict[str, object]:
        """The triggering comment, for the 👀 reaction; empty when there is none."""
        return dict(self.spec.target or {})

    def asking(self, command: Command) -> Job:
        """The same job with another command: a review agent's own request, agent and session."""
        return dataclasses.replace(self, spec=dataclasses.replace(self.spec, command=command))

    @property
    def job_id(self) -> int | None:
        return self.queued.job_id if self.queued is not None else None

    @property
    def thread(self) -> GitHubThread | None:
        """The GitHub thread the job answers in: its mode's (None for the terminal's)."""
        return self.mode.thread

    @property
    def github(self) -> GitHubThread:
        """The GitHub thread of a job that can only come from GitHub (an automation's run)."""
        if (thread := self.mode.thread) is None:
            raise TypeError("this job has no GitHub thread")
        return thread

    @property
    def token(self) -> str | None:
        """The GitHub token for git and effects, as the thread holds it now (it is renewed in a
        long job and on a 401): one source of truth. It never reaches the agent."""
        return self.thread.api.oauth_token if self.thread is not None else None

    async def refresh_token(self) -> None:
        """A long run can outlive the installation token it started with (one hour): renew it
        before the push and the pull request. The job's secrets follow the token (`JobRun.begin`),
        so the new one is masked too."""
        if self.thread is not None:
            await self.thread.fresh_token()

