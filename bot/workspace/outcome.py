"""What a request asked of the workspace and what became of it: the data between the job and the
bot's effects (bot/workspace/effects.py)."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass
class Request:
    """Who asked for what, where. `pull` is the PR object (GET /pulls/N) when the thread is a PR.
    `still_allowed` is asked right before the push and again before the pull request: None while
    the requester may still act, else why nothing may be published (a permission revoked mid-run)."""

    agent: str
    text: str
    requester_login: str
    requester_id: int | None
    number: int
    title: str = ""
    pull: dict | None = None
    still_allowed: Callable[[], Awaitable[str | None]] | None = None
    draft: bool = False  # a pull request it opens is a draft (an automation's, bot/automations/mode.py)

    async def refusal(self) -> str | None:
        return await self.still_allowed() if self.still_allowed is not None else None


@dataclass
class Outcome:
    kind: str  # none | refused | pushed | pull_request | diff | conflict | failed
    message: str  # one or two sentences for the answer
    base_sha: str
    commit_sha: str | None = None
    diffstat: str = ""  # "3 files changed, 10 insertions(+), 2 deletions(-)"
    files: list[str] = field(default_factory=list)
    repo: str | None = None  # where the branch was pushed (owner/repo)
    branch: str | None = None
    pr_number: int | None = None
    pr_url: str | None = None
    diff: str | None = None  # for `diff`, `conflict` and `failed`: the change to post instead
    git_base_url: str = ""  # the git host the branch went to (BOT_GIT_BASE_URL when it was pushed)

    def summary(self) -> str:
        """One provenance line: base → commit · diffstat · where it went."""
        parts = [f"base {self.base_sha[:7]}" + (f" → {self.commit_sha[:7]}" if self.commit_sha else "")]
        if self.diffstat:
            parts.append(self.diffstat)
        if self.pr_number:
            parts.append(f"[PR #{self.pr_number}]({self.pr_url})" if self.pr_url else f"PR #{self.pr_number}")
        elif self.kind == "pushed":
            parts.append(self.branch_link())
        return " · ".join(parts)

    def branch_link(self) -> str:
        """Markdown for the branch, linked when the git host is a web host (github.com, GHES)."""
        label = f"`{self.branch}`" + (f" on {self.repo}" if self.repo else "")
        base = self.git_base_url
        if not self.branch or not self.repo or not base.startswith(("https://", "http://")):
            return label
        return f"[{label}]({base}/{self.repo}/tree/{self.branch})"
