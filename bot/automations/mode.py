"""How an automation's run differs from a person's request: its authority is its declared `may:`
list, not the permission of whoever caused the event (an outsider may open the issue).

No permission check of the event's author (`permission` is None: the pipeline then holds no one's
permission against the configuration), and the bot's effects (commit, push, pull request) run only
when `may:` grants them. In this slice only `comment` is built: any other act is refused here, in
the bot, whatever the agent does (docs/automations.md).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.job.context import Finished
from bot.job.modes import GitHubMode
from bot.workspace.repo_config_model import Automation

if TYPE_CHECKING:
    from bot.job.context import JobContext
    from bot.workspace.effects import Outcome
    from bot.workspace.worktrees import Worktree

log = logging.getLogger("bot.automations.mode")
BUILT_ACTS = frozenset({"comment"})  # what the bot carries out for an automation today


@dataclass(frozen=True)
class AutomationMode(GitHubMode):
    automation: Automation | None = None

    async def permission(self, ctx: JobContext) -> str | None:
        return None  # the automation's `may:` is the authority, not the event's author

    async def effects(self, ctx: JobContext, worktree: Worktree, agent: str, turn: Finished) -> Outcome | None:
        may = set(self.automation.may if self.automation else ())
        if may - BUILT_ACTS:
            log.info("automation %s: %s declared but not built: nothing but the answer is published",
                     self.automation.name if self.automation else "?", ", ".join(sorted(may - BUILT_ACTS)))
        return None  # comment: the answer is the only thing published; changes in the worktree are dropped
