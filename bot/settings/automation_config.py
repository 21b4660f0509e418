"""The automations a repository's settings page shows: `.github/bot.yml` read from the default
branch as the App (an installation token of the repository's installation), parsed by the one
grammar (bot/workspace/repo_config.py), and stored as the schedules and fired runs read it
(bot/automations/schedule.py `remember`), so a maintainer's visit is also a fresh read.

    declared = await read_as_app(settings, "o/r", repo_id, installation_id)
    declared.automations / declared.problem (why none could be read: shown on the page)

Bounded: a file over CONFIG_MAX_BYTES is not decoded. An invalid file is shown with its error and is
not stored: what was stored before stays in force.
"""
from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
from gidgethub import BadRequest, GitHubException

from bot.automations.schedule import remember
from bot.config import Settings
from bot.db import Database, connect
from bot.errors import BotError
from bot.github.client import RetryingAPI, TokenCache
from bot.workspace.repo_config import CONFIG_MAX_BYTES, CONFIG_PATH, ConfigError, parse
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.settings.automation_config")
MAX_WAIT_S = 10.0
TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Declared:
    automations: tuple[Automation, ...] = ()
    source: str = ""  # `.github/bot.yml@abc1234`
    problem: str | None = None  # why the page shows none (not installed, unreadable, invalid)


async def read_as_app(settings: Settings, repo: str, repo_id: int | None, installation: int | None) -> Declared:
    if installation is None:
        return Declared(problem=f"The App is not installed on {repo}, so its automations cannot run.")
    try:
        found = await _fetch(settings, repo, installation)
    except (BotError, ValueError, GitHubException, httpx.HTTPError) as exc:
        log.warning("automations of %s not read: %s", repo, type(exc).__name__)
        return Declared(problem=f"{CONFIG_PATH} could not be read from GitHub ({type(exc).__name__}); "
                                "reload the page to try again.")
    if found is None:
        return Declared(problem=f"There is no {CONFIG_PATH} on the default branch.")
    text, source = found
    try:
        automations = parse(text, source=source).automations
    except ConfigError as exc:
        return Declared(source=source, problem=f"{exc} (no automation changed: the last valid file stays in force)")
    with _connected(settings) as db:
        remember(db, repo, repo_id, installation, text, source)
    return Declared(automations, source)


async def _fetch(settings: Settings, repo: str, installation: int) -> tuple[str, str] | None:
    async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
        token = await TokenCache.of(settings).token(client, installation)
        api = RetryingAPI(client, oauth_token=token, base_url=settings.github_api_url)
        api.max_wait_s = MAX_WAIT_S
        try:
            found = await api.getitem(f"/repos/{repo}/contents/{CONFIG_PATH}")
        except BadRequest as exc:
            if int(exc.status_code) == 404:
                return None
            raise
    if not isinstance(found, dict) or int(found.get("size") or 0) > CONFIG_MAX_BYTES:
        raise ValueError(f"{CONFIG_PATH} is not a file of at most {CONFIG_MAX_BYTES:,} bytes")
    raw = base64.b64decode(str(found.get("content") or "")[: CONFIG_MAX_BYTES * 2])
    return raw[:CONFIG_MAX_BYTES].decode("utf-8", "replace"), f"{CONFIG_PATH}@{str(found.get('sha') or '')[:7]}"


@contextmanager
def _connected(settings: Settings) -> Iterator[Database]:
    db = connect(settings=settings)
    try:
        yield db
    finally:
        db.close()
