"""Where a ChatGPT login (Codex's `auth.json`: its adapter's `chatgpt_login`) goes back after the
model relay refreshed it.

OpenAI rotates the refresh token on every refresh, so the renewed login must replace the one the
run started from, or the next run cannot refresh: a login stored on the settings page is sealed
again in the vault under its own scope and kind; the operator's login goes back to the file it was
read from (the adapter's `operator_login`: for Codex BOT_CODEX_AUTH_FILE, $CODEX_HOME/auth.json or
~/.codex/auth.json), owner-only.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from adapters import base as adapters
from bot.credentials import resolve as credentials
from bot.credentials import vault

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.episode.asker import Asker

log = logging.getLogger(__name__)
ACTOR = "model relay (login refresh)"
_SCOPE_KIND = {"requester": "user", "repository": "repo", "installation": "installation"}


def saver(agent: str, source: str, ctx: Asker) -> Callable[[str], None]:
    """The callback that stores `agent`'s renewed login for credentials of `source` in this job."""
    if source == "operator":
        return lambda text: _save_operator_file(ctx.settings, agent, text)
    owner = {"requester": ctx.requester_id, "repository": ctx.repo_id,
             "installation": ctx.installation_id}.get(source)
    if source not in _SCOPE_KIND or owner in (None, "", 0):
        return _lost(f"no scope to store a {source} login in")
    scope = vault.scope_for(_SCOPE_KIND[source], owner)
    held = adapters.get(agent).chatgpt_login
    kind = next((kind for kind in credentials.kinds_for(agent) if held and kind.file == held), None)
    if kind is None:
        return _lost(f"the {agent} adapter declares no credential kind for its login file")
    name = kind.name

    def seal(text: str) -> None:
        vault.put(scope, name, text, actor=ACTOR, settings=ctx.settings)
    return seal


def _save_operator_file(settings: Settings, agent: str, text: str) -> None:
    path = credentials.operator_login_file(settings, agent)
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
