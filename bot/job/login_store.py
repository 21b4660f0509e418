"""Where a Codex ChatGPT login goes back after the model relay refreshed it.

OpenAI rotates the refresh token on every refresh, so the renewed `auth.json` must replace the one
the run started from, or the next run cannot refresh: a login stored on the settings page is sealed
again in the vault under its own scope and name; the operator's login goes back to the file it was
read from (BOT_CODEX_AUTH_FILE, $CODEX_HOME/auth.json or ~/.codex/auth.json), owner-only.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot import config
from bot.credentials import vault

log = logging.getLogger(__name__)
SECRET_NAME = "codex:auth_json"
ACTOR = "model relay (login refresh)"
_SCOPE_KIND = {"requester": "user", "repository": "repo", "installation": "installation"}


def saver(source: str, ctx: Any) -> Callable[[str], None]:
    """The callback that stores a renewed `auth.json` for credentials of `source` in this job."""
    if source == "operator":
        return _save_operator_file
    owner = {"requester": getattr(ctx, "requester_id", None), "repository": getattr(ctx, "repo_id", None),
             "installation": getattr(ctx, "installation_id", None)}.get(source)
    if source not in _SCOPE_KIND or owner in (None, "", 0):
        return _lost(f"no scope to store a {source} login in")
    scope = vault.scope_for(_SCOPE_KIND[source], owner)

    def seal(text: str) -> None:
        vault.put(scope, SECRET_NAME, text, actor=ACTOR)
    return seal


def operator_file() -> Path | None:
    """The operator's `auth.json`, found as the credential resolver finds it."""
    codex_home = config.env("CODEX_HOME")
    for candidate in (config.env("BOT_CODEX_AUTH_FILE"), str(Path(codex_home) / "auth.json") if codex_home else None,
                      str(Path(os.path.expanduser("~")) / ".codex" / "auth.json")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def _save_operator_file(text: str) -> None:
    path = operator_file()
    if path is None:
        log.warning("the operator's ChatGPT login was refreshed but its auth.json is gone; not stored")
        return
    temporary = path.with_name(f".{path.name}.bot-refresh")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    os.replace(temporary, path)


def _lost(why: str) -> Callable[[str], None]:
    def warn(_text: str) -> None:
        log.warning("a refreshed ChatGPT login was not stored: %s", why)
    return warn
