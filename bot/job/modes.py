"""Where a job came from decides a few of its steps; each mode is an object that provides them,
so the pipeline reads straight through (claude-code-action's modes are the model).

- `GitHubMode` (the service and the Action): 👀 on the trigger, the requester's permission is
  checked, the worktree comes from the cached mirror and is removed after, the bot commits,
  pushes and opens the pull request.
- `LocalMode` (`bot run`): the person at the terminal is trusted, the worktree is their own
  checkout (left in place), nothing is committed; the answer lists the files that changed.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
from gidgethub import HTTPException

from bot.episode.stop import Stop
from bot.github.client import transient, with_retries
from bot.job import authority, replies
from bot.job.context import Finished
from bot.workspace import effects, worktrees
from bot.workspace.local_checkout import dirty_paths, local_worktree

if TYPE_CHECKING:
    from bot.bridge.tool import Labeler
    from bot.github.thread import GitHubThread
    from bot.job.context import Job
    from bot.record.provenance import Provenance
    from bot.relay.budgets import AutomationSpend
    from bot.workspace.effects import Outcome
    from bot.workspace.repo_config import RepoConfig
    from bot.workspace.worktrees import Worktree


@dataclass(frozen=True)
class GitHubMode:
    """The job answers in `thread`, an issue's or a pull request's: the mode holds it, so a job from
    GitHub always has its thread and one from the terminal never has one."""

    thread: GitHubThread
    name = "github"

    @property
    def automation_spend(self) -> AutomationSpend | None:
        return None  # a person's request: no automation's day to count against

    @property
    def labels(self) -> Labeler | None:
        return None  # add_labels is an automation's only (bot/automations/mode.py)

    async def acknowledge(self, ctx: Job) -> None:
        thread, target = self.thread, ctx.target
        if target:
            await with_retries(lambda: thread.react(target, "eyes"))

    async def permission(self, ctx: Job) -> str | None:
        """GitHub's answer; a refusal or an outage ends the job with what to do (a bug in our own
        code is not caught here: it is reported as the failure it is)."""
        try:
            return await self.thread.permission(ctx.requester)
        except (httpx.TransportError, HTTPException) as exc:
            raise Stop(replies.permission_check_failed(ctx.requester, ctx.repo, exc, transient(exc))) from exc

    async def worktree(self, ctx: Job) -> Worktree:
        return await worktrees.prepare(ctx.repo, ctx.conversation, ctx.settings, token=ctx.token,
                                       pull_number=ctx.number if ctx.is_pr else None)

    async def release(self, worktree: Worktree) -> None:
        await worktrees.remove(worktree)

    async def changes_before(self, worktree: Worktree) -> set[str] | None:
        return None

    async def changed_since(self, worktree: Worktree, before: set[str] | None) -> list[str] | None:
        return None

    async def effects(self, ctx: Job, worktree: Worktree, agent: str, turn: Finished) -> Outcome | None:
        if not turn.result.ok:
            return None
        await ctx.refresh_token()
        thread = self.thread
        pull = await thread.pull() if ctx.is_pr else None
        request = effects.Request(agent=agent, text=ctx.request, requester_login=ctx.requester,
                                  requester_id=ctx.requester_id, number=ctx.number,
                                  title=ctx.title, pull=pull, still_allowed=self.still_allowed(ctx, worktree.config))
        return await effects.apply(worktree, request, thread.api, token=ctx.token)

    def still_allowed(self, ctx: Job, cfg: RepoConfig) -> Callable[[], Awaitable[str | None]]:
        """The requester's permission, asked of GitHub again right before an effect."""
        return authority.before_effects(self.thread, ctx.requester, cfg)

    def answered(self, ctx: Job, text: str, prov: Provenance) -> None:
        return None  # the answer is the comment the pipeline posts


@dataclass(frozen=True)
class LocalMode:
    """`on_answer(text, provenance)` receives the answer (masked by the job's secrets) and its
    provenance as parts, for a terminal that renders them itself instead of the comment's Markdown."""

    repo: Path
    on_answer: Callable[[str, Provenance], None] | None = None
    name = "local"

    @property
    def thread(self) -> None:
        return None  # the terminal is no GitHub thread

    @property
    def automation_spend(self) -> None:
        return None

    @property
    def labels(self) -> None:
        return None

    def answered(self, ctx: Job, text: str, prov: Provenance) -> None:
        if self.on_answer is not None:
            self.on_answer(text, prov)

    async def acknowledge(self, ctx: Job) -> None:
        return None

    async def permission(self, ctx: Job) -> str | None:
        return None  # the person at the terminal owns the checkout

    async def worktree(self, ctx: Job) -> Worktree:
        return await local_worktree(self.repo, ctx.conversation)

    async def release(self, worktree: Worktree) -> None:
        return None  # the user's own checkout stays

    async def changes_before(self, worktree: Worktree) -> set[str] | None:
        return await dirty_paths(worktree)

    async def changed_since(self, worktree: Worktree, before: set[str] | None) -> list[str] | None:
        return sorted(await dirty_paths(worktree) - (before or set()))

    async def effects(self, ctx: Job, worktree: Worktree, agent: str, turn: Finished) -> Outcome | None:
        return None  # changes stay in the checkout for the user to review

    def still_allowed(self, ctx: Job, cfg: RepoConfig) -> Callable[[], Awaitable[str | None]]:
        return _allowed  # the person at the terminal owns the checkout

    def stopped(self, ctx: Job, *, started: bool) -> str:
        return replies.stopped(None, started=started)


async def _allowed() -> str | None:
    return None
