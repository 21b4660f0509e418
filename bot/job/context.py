"""What a job is: `Job`, frozen (what was asked, by whom, where, with which settings and mode),
and the steps that differ by where it came from (`Mode`, implemented in bot/job/modes.py). What
changes while it runs (its database, secrets, recorder, tracking comment) is its `JobRun`
(bot/job/run.py)."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from bot.config import Settings
from bot.github.thread import GitHubThread
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


@runtime_checkable
class Mode(Protocol):
    """The steps of a job that differ by where it came from: GitHub (the service, the Action) or the
    terminal (`bot run`)."""

    @property
    def name(self) -> str: ...

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
    mode: Mode  # bot.job.modes.GitHubMode or LocalMode (an automation's AutomationMode)
    settings: Settings  # the entry point's, read once: a module below it reads these, never the environment
    thread: GitHubThread | None = None  # None in local mode
    installation_id: int | None = None
    automation_spend: AutomationSpend | None = None  # an automation's run: its calls count against its day
    target: dict[str, object] = field(default_factory=dict)  # the triggering comment, for the 👀 reaction
    queued: Queued | None = None  # the service's queued job; the Action and `bot run` have no queue
    progress_interval_s: float = 3.0
    review: bool = False  # a pull-request review (bot/job/review_job.py)
    agents: tuple[str, ...] = ()  # the review's agents, in the order named
    labels: Labeler | None = None  # an automation's run that may label: its bridge offers add_labels

    @property
    def job_id(self) -> int | None:
        return self.queued.job_id if self.queued is not None else None

    @property
    def github(self) -> GitHubThread:
        """The job's GitHub thread: a job from GitHub has one (`bot run`'s has none)."""
        if self.thread is None:
            raise TypeError("this job has no GitHub thread")
        return self.thread

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

