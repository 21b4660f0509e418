"""How an automation's run differs from a person's request: its authority is its declared `may:`
list, not the permission of whoever caused the event (an outsider may open the issue).

No permission check of the event's author (`permission` is None: the pipeline then holds no one's
permission against the configuration), and the bot's effects run only when `may:` grants them:

- `comment`: the answer in the thread, always; changes in the worktree are dropped.
- `push` on a pull request whose branch is in this repository: the bot commits the agent's change
  and pushes it to that branch (never a new branch, never a pull request), and only while the
  pull request's head is still the commit the run started from (`head_sha`): a person's push
  meanwhile wins. `on_pushed(sha)` hears the new head (the autofix counts its attempts by it).
- `push` on a fork's pull request: never pushed, whatever `allow_fork_push` says; the answer says
  why and carries the change as a diff.

- `draft_pull_request` off a pull request (an issue's thread, the automation's own issue): the bot
  commits the agent's change on a new branch (`bot/<agent>/<issue>-<automation>-job-<id>`) off the
  default branch and opens a DRAFT pull request for it, never closing the issue it links.

- `label`: the run's episode is offered the bridge's add_labels tool (bot/bridge/label_tools.py), which
  adds labels the repository already has to the run's own issue or pull request
  (bot/automations/labels.py); without `label` the tool is not offered.
- `review` on a `pull_request` event: the run is the review `@bot review` makes (bot/job/review_job.py:
  findings, one review, the repository's `reviews:` settings), its focus the declared prompt. It never
  approves or requests changes where `@bot review` would not.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.automations import labels
from bot.job.context import Finished
from bot.job.modes import GitHubMode
from bot.relay.budgets import AutomationSpend
from bot.workspace import effects
from bot.workspace.repo_config_model import Automation

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from bot.bridge.tool import Labeler
    from bot.job.context import Job
    from bot.workspace.effects import Outcome
    from bot.workspace.repo_config import RepoConfig
    from bot.workspace.worktrees import Worktree

log = logging.getLogger("bot.automations.mode")
BUILT_ACTS = frozenset({"comment", "label", "push", "draft_pull_request", "review"})  # what the bot carries out
FORK = ("This pull request comes from a fork, and an automation never pushes to a fork's branch: "
        "here is the change as a diff to apply.")


@dataclass(frozen=True)
class AutomationMode(GitHubMode):
    automation: Automation | None = None
    head_sha: str | None = None  # the pull request's head the run is for; a push needs it unchanged
    on_pushed: Callable[[str], None] | None = None
    spend: AutomationSpend | None = None  # its calls count against the automation's UTC day
    labeler: Labeler | None = None  # `may: [label]`: the bridge offers add_labels

    @property
    def automation_spend(self) -> AutomationSpend | None:
        return self.spend

    @property
    def labels(self) -> Labeler | None:
        return self.labeler

    async def permission(self, ctx: Job) -> str | None:
        return None  # the automation's `may:` is the authority, not the event's author

    def still_allowed(self, ctx: Job, cfg: RepoConfig) -> Callable[[], Awaitable[str | None]]:
        """No one's permission to ask again before a review is posted: `may:` granted it."""
        async def granted() -> str | None:
            return None
        return granted

    async def effects(self, ctx: Job, worktree: Worktree, agent: str, turn: Finished) -> Outcome | None:
        automation = self.automation
        may = set(automation.may if automation else ())
        if may - BUILT_ACTS:
            log.info("automation %s: %s declared but not built: not carried out",
                     automation.name if automation else "?", ", ".join(sorted(may - BUILT_ACTS)))
        if not may & {"push", "draft_pull_request"} or not turn.result.ok:
            return None  # the answer is the only thing published; changes in the worktree are dropped
        if "draft_pull_request" in may and not ctx.is_pr and automation is not None:
            return await self._draft(ctx, worktree, agent, automation, turn.run_id)
        if "push" not in may or not ctx.is_pr:
            return None  # the answer is the only thing published; changes in the worktree are dropped
        await ctx.refresh_token()
        pull = await self.thread.pull()
        fork = is_fork(pull, ctx.repo)
        # never a fork's branch and never a new pull request, whatever .github/bot.yml allows a person
        own = dataclasses.replace(worktree, config=dataclasses.replace(
            worktree.config, allow_fork_push=False, open_pull_requests=False))
        request = effects.Request(agent=agent, text=ctx.request, requester_login=ctx.requester,
                                  requester_id=ctx.requester_id, number=ctx.number, title=ctx.title,
                                  pull=pull, still_allowed=self._head_unmoved(ctx))
        outcome = await effects.apply(own, request, self.thread.api, token=ctx.token)
        if fork and outcome.kind == "diff":
            outcome.message = FORK
        if outcome.kind == "pushed" and outcome.commit_sha and self.on_pushed is not None:
            self.on_pushed(outcome.commit_sha)
        return outcome

    async def _draft(self, ctx: Job, worktree: Worktree, agent: str, automation: Automation,
                     run_id: str) -> Outcome:
        """The change on a new branch off the default branch, in a draft pull request. The title and
        body quote the declared prompt (the maintainers' words), never the event's text."""
        await ctx.refresh_token()
        own = dataclasses.replace(worktree, config=dataclasses.replace(worktree.config, close_issue=False))
        request = effects.Request(agent=agent, text=automation.prompt, requester_login=ctx.requester,
                                  requester_id=ctx.requester_id, number=ctx.number,
                                  title=draft_title(automation.name, ctx.job_id, run_id), draft=True)
        return await effects.apply(own, request, self.thread.api, token=ctx.token)

    def _head_unmoved(self, ctx: Job) -> Callable[[], Any]:
        async def recheck() -> str | None:
            if self.head_sha is None:
                return None
            head: Any = (await self.thread.pull()).get("head") or {}
            now = str(head.get("sha") or "")
            if now == self.head_sha:
                return None
            return (f"The pull request's head moved to {now[:7]} while I worked (from {self.head_sha[:7]}), "
                    "so nothing was pushed: the newer push wins.")
        return recheck


def draft_title(name: str, job_id: int | None, run_id: str) -> str:
    """The words a draft's title and branch name carry after the automation's name: its queued job,
    or, where nothing queued it (the Action), its run's own id, the one its answer's footer shows."""
    return f"{name} job {job_id}" if job_id is not None else f"{name} run {run_id[:8]}"


def run_as(ctx: Job, automation: Automation, *, head_sha: str | None = None,
           on_pushed: Callable[[str], None] | None = None) -> Job:
    """The context of an automation's run in the job's GitHub thread: its `may:` the authority, and
    its model calls counted against the automation's UTC day, capped by its `max_usd_per_day` at the
    relay. `head_sha`, `on_pushed`: an autofix's (AutomationMode)."""
    thread = ctx.github  # an automation runs only on GitHub
    mode = AutomationMode(thread, automation=automation, head_sha=head_sha, on_pushed=on_pushed,
                          spend=AutomationSpend(ctx.repo, automation.name, automation.max_usd_per_day),
                          labeler=labels.for_run(automation, thread))  # `may: [label]`: add_labels
    return dataclasses.replace(ctx, mode=mode)


def reviews(automation: Automation, event: str) -> bool:
    """Whether the run is a review: `may:` has review and the event is a pull request's."""
    return "review" in automation.may and event == "pull_request"


def is_fork(pull: dict[str, Any], repo: str) -> bool:
    head_repo = (pull.get("head") or {}).get("repo") or {}
    return str(head_repo.get("full_name") or "").lower() != repo.lower()


def marker(job_id: int, name: str) -> str:
    """Hidden in each automation's comment, so a retry edits it instead of posting a second."""
    return f"<!-- bot:job {job_id} automation {name} -->"
