"""The settings page's side of a learned rule's pull request (bot/review/learned_pull.py): opened
as the App, with an installation token of the repository's installation, right after a maintainer
approves the rule or presses "Try again".

    outcome = await open_as_app(settings, db, "o/r", installation_id, rule_id, asker="maint")

Anything that stops it before GitHub is asked (no installation of the App holds the repository,
the App's key missing) is recorded on the rule as its failure, as GitHub's refusals are. GitHub's
rate-limit waits are cut short (`MAX_WAIT_S`): the maintainer is waiting for the page, and can try
again.
"""
from __future__ import annotations

from typing import Any

import httpx
from gidgethub import GitHubException

from bot.config import Settings
from bot.errors import BotError
from bot.github.client import RetryingAPI, TokenCache
from bot.review.learned_pull import Outcome, api_error, failure_outcome, open_pull_request

MAX_WAIT_S = 10.0
TIMEOUT_S = 30.0


async def open_as_app(settings: Settings, db: Any, repo: str, installation: int | None, rule_id: int,
                      asker: str) -> Outcome:
    if installation is None:
        return failure_outcome(db, repo, rule_id, f"The App is not installed on {repo}, so it cannot open the "
                                                  "pull request; install it, then try again.")
    async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
        try:
            token = await TokenCache.of(settings).token(client, installation)
        except (BotError, ValueError, GitHubException, httpx.HTTPError) as exc:
            return failure_outcome(db, repo, rule_id, f"No installation token for the App: {api_error(exc)}")
        api = RetryingAPI(client, oauth_token=token, base_url=settings.github_api_url)
        api.max_wait_s = MAX_WAIT_S
        return await open_pull_request(db, api, repo, rule_id, asker, settings.oauth_url)
