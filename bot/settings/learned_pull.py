"""The settings page's side of a learned rule's pull request (bot/review/learned_pull.py), as the
App, with an installation token of the repository's installation: opened (or updated, or opened
anew) right after a maintainer approves the rule or presses "Try again", and each recorded pull
request's state read again when the repository's page is shown (merged, or closed unmerged).

    outcome = await open_as_app(settings, "o/r", installation_id, rule_id, asker="maint")
    await refresh_as_app(settings, "o/r", installation_id)

Anything that stops it before GitHub is asked (no installation of the App holds the repository,
the App's key missing) is recorded on the rule as its failure, as GitHub's refusals are; a refresh
that cannot ask keeps the stored states. GitHub's rate-limit waits are cut short (`MAX_WAIT_S`):
the maintainer is waiting for the page, and can try again.
"""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx
from gidgethub import GitHubException

from bot.config import Settings
from bot.db import Database, connect
from bot.errors import BotError
from bot.github.client import RetryingAPI, TokenCache
from bot.review import learned
from bot.review.learned_pull import Outcome, RulePullRefused, api_error, failure_outcome, open_pull_request, refresh

log = logging.getLogger("bot.settings.learned_pull")
MAX_WAIT_S = 10.0
TIMEOUT_S = 30.0


async def open_as_app(settings: Settings, repo: str, installation: int | None, rule_id: int, asker: str) -> Outcome:
    with _connected(settings) as db:
        if installation is None:
            return failure_outcome(db, repo, rule_id, f"The App is not installed on {repo}, so it cannot open the "
                                                      "pull request; install it, then try again.")
        try:
            async with _as_app(settings, installation) as api:
                return await open_pull_request(db, api, repo, rule_id, asker, settings.oauth_url)
        except RulePullRefused as exc:
            return failure_outcome(db, repo, rule_id, str(exc))


async def refresh_as_app(settings: Settings, repo: str, installation: int | None) -> None:
    """The recorded pull requests' states as GitHub says them now (bounded: learned_pull.refresh)."""
    with _connected(settings) as db:
        asked = [r for r in learned.approved(db, repo)
                 if r.pull_request_number and r.pull_request_state != learned.MERGED]
        if installation is None or not asked:
            return
        try:
            async with _as_app(settings, installation) as api:
                await refresh(db, api, repo)
        except RulePullRefused as exc:
            log.warning("learned rules of %s: pull request states not read: %s", repo, exc)


@contextmanager
def _connected(settings: Settings) -> Iterator[Database]:
    """A connection of its own, without a transaction around the GitHub calls: each write is one
    statement, and no database lock is held while GitHub is awaited (a worker on the same event
    loop waiting on that lock would hold the loop, and so the awaited answer, until it timed out)."""
    db = connect(settings=settings)
    try:
        yield db
    finally:
        db.close()


@asynccontextmanager
async def _as_app(settings: Settings, installation: int) -> AsyncIterator[RetryingAPI]:
    async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
        try:
            token = await TokenCache.of(settings).token(client, installation)
        except (BotError, ValueError, GitHubException, httpx.HTTPError) as exc:
            raise RulePullRefused(f"No installation token for the App: {api_error(exc)}") from exc
        api = RetryingAPI(client, oauth_token=token, base_url=settings.github_api_url)
        api.max_wait_s = MAX_WAIT_S
        yield api
