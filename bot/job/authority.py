"""The one run-time permission check for everything that acts on a thread: an episode, a review,
`@bot stop`, an automatic trigger, a person's signal on a review thread (`may_signal`), and again
right before each effect (a push, a pull request, a review). The payload's `author_association`
is only the intake's pre-filter; this asks GitHub for the person's collaborator permission and
holds it against what `.github/bot.yml` lets act (`RepoConfig.may_trigger`: write, maintain or
admin by default).

    verdict = await check(thread, "alice", cfg)               # the permission cache may answer
    verdict = await check(thread, "alice", cfg, fresh=True)   # right before an effect: asked anew
    if not verdict.allowed: ...
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.github.thread import GitHubThread
from bot.workspace.repo_config import RepoConfig


@dataclass(frozen=True)
class Verdict:
    login: str
    permission: str  # GitHub's answer: admin, maintain, write, triage, read or none
    levels: tuple[str, ...]  # the permissions that may act here

    @property
    def allowed(self) -> bool:
        return self.permission in self.levels


def decide(login: str, permission: str, cfg: RepoConfig) -> Verdict:
    """GitHub's answer held against the repository's rule: the one place that decides."""
    return Verdict(login, permission, tuple(cfg.trigger_permissions))


async def check(thread: GitHubThread, login: str, cfg: RepoConfig, *, fresh: bool = False) -> Verdict:
    """Ask GitHub (`thread.permission`; `fresh` bypasses the few minutes the answer is cached,
    so a permission revoked since is seen) and decide."""
    permission = await (thread.permission(login, fresh=True) if fresh else thread.permission(login))
    return decide(login, permission, cfg)


def may_signal(thread: GitHubThread, cfg: RepoConfig) -> Callable[[str], Awaitable[bool]]:
    """The same check for a human signal that changes what the bot does (a reply that declines
    or reopens a review finding, a thread resolved: bot/review/signals.py): may `login` give it?"""
    async def may(login: str) -> bool:
        return (await check(thread, login, cfg)).allowed
    return may


def before_effects(thread: GitHubThread, login: str, cfg: RepoConfig) -> Callable[[], Awaitable[str | None]]:
    """The re-check an effect site calls right before it acts: None while `login` may still act,
    else the sentence saying why nothing was published."""
    async def recheck() -> str | None:
        verdict = await check(thread, login, cfg, fresh=True)
        if verdict.allowed:
            return None
        return (f"@{login} no longer has {' or '.join(verdict.levels)} permission on this repository "
                f"(GitHub now says {verdict.permission}), so nothing was published.")
    return recheck
