"""Whether an automatic trigger (bot/intake/triggers.py) may run: the repository turned it on in
`.github/bot.yml` on its default branch (read through GitHub's contents API, so no checkout is
made for a trigger that is off), a draft only when `triggers.drafts` is set, and the person who
caused it has a permission the configuration lets trigger. Each "no" is silent in the thread.

    why = await refused(thread, spec.automatic, spec.author)    # None: run it
"""
from __future__ import annotations

import base64
import logging
from typing import Any

from gidgethub import BadRequest

from bot.intake.spec import Automatic
from bot.job import authority
from bot.trigger_table import BY_NAME
from bot.workspace.repo_config import CONFIG_PATH, ConfigError, RepoConfig, parse

log = logging.getLogger("bot.job.gate")


async def refused(thread: Any, automatic: Automatic, requester: str) -> str | None:
    try:
        cfg = await default_branch_config(thread)
    except ConfigError as exc:
        return f"{CONFIG_PATH} is invalid ({exc}): automatic triggers stay off"
    kind = automatic.kind
    trigger = BY_NAME.get(kind)
    if trigger is None or not trigger.is_on(cfg):
        return f"the {kind or 'unknown'} trigger is off in {CONFIG_PATH}"
    if kind == "pull_request_opened" and automatic.draft and not cfg.triggers.drafts:
        return "a draft pull request (triggers.drafts is off)"
    verdict = await authority.check(thread, requester, cfg)
    if not verdict.allowed:
        return f"@{requester} ({verdict.permission}) may not trigger the bot"
    return None


async def default_branch_config(thread: Any) -> RepoConfig:
    """`.github/bot.yml` of the default branch (GitHub's contents API without a ref); the defaults
    when there is none."""
    found = await default_branch_text(thread)
    return parse(*found) if found is not None else RepoConfig()


async def default_branch_text(thread: Any) -> tuple[str, str] | None:
    """The text of `.github/bot.yml` on the default branch and its source (`path@sha`), or None."""
    try:
        found = await thread._authed(lambda: thread.api.getitem(f"{thread.prefix}/contents/{CONFIG_PATH}"))
    except BadRequest as exc:
        if int(exc.status_code) == 404:
            return None
        raise
    text = base64.b64decode(found.get("content") or "").decode("utf-8", "replace")
    return text, f"{CONFIG_PATH}@{(found.get('sha') or '')[:7]}"
