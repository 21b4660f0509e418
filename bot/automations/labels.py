"""`may: [label]`: the GitHub side of the bridge's add_labels tool (bot/bridge/label_tools.py) for
one automation run. It labels the issue or pull request of the run and nothing else, and reads the
repository's labels bounded (GET /repos/{o}/{r}/labels, at most `MAX_PAGES` pages of 100), once
per run; the tool admits only those names, so the bot never creates a label.

    labeler = for_run(automation, thread)        # None unless `may:` has label and the run has a thread
    await labeler.known()                          # ("bug", "feature", ...)
    await labeler.add(["bug"])                     # POST /repos/{o}/{r}/issues/{n}/labels
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from bot.github.client import with_retries
from bot.github.thread import GitHubThread
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.automations.labels")
PER_PAGE = 100
MAX_PAGES = 10  # 1,000 labels: a repository with more has the first 1,000 offered


def for_run(automation: Automation | None, thread: GitHubThread | None) -> RepoLabels | None:
    """The labeler of a run whose automation may label, on its thread (an issue or pull request)."""
    if automation is None or "label" not in automation.may or thread is None or not thread.number:
        return None
    return RepoLabels(thread)


@dataclass
class RepoLabels:
    thread: GitHubThread
    _known: tuple[str, ...] | None = field(default=None, init=False)
    _added: set[str] = field(default_factory=set, init=False)  # by this run, whichever episode

    async def known(self) -> tuple[str, ...]:
        if self._known is None:
            self._known = await self._read()
        return self._known

    async def _read(self) -> tuple[str, ...]:
        thread, names = self.thread, []
        for page in range(1, MAX_PAGES + 1):
            answer = await self._page(page)
            batch = [str(label["name"]) for label in answer or [] if isinstance(label, dict)
                     and isinstance(label.get("name"), str)]
            names += batch
            if len(answer or []) < PER_PAGE:
                return tuple(names)
        log.info("%s has more than %d labels: the first %d are offered", thread.repo, len(names), len(names))
        return tuple(names)

    def added(self) -> frozenset[str]:
        return frozenset(self._added)

    async def _page(self, page: int) -> Any:
        thread = self.thread
        url = f"{thread.prefix}/labels?per_page={PER_PAGE}&page={page}"
        return await thread._authed(lambda: thread.api.getitem(url))

    async def add(self, names: list[str]) -> list[str]:
        """Adding a label it already carries changes nothing, so a retry is harmless."""
        thread = self.thread
        url = f"{thread.prefix}/issues/{thread.number}/labels"
        answer: Any = await with_retries(lambda: thread._authed(lambda: thread.api.post(url, data={"labels": names})))
        self._added.update(names)
        return [str(label.get("name")) for label in answer or [] if isinstance(label, dict)]
