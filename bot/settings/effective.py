"""What a settings page shows about credentials: per agent the one a run would use (by the runner's
own `resolve_origin`), and per stored key its last use, runs and spend."""
from __future__ import annotations

import shutil

from adapters import base
from bot.config import Settings
from bot.credentials import resolve as credentials
from bot.credentials import usage
from bot.credentials import vault as secrets
from bot.settings.pages import Effective


def effective(settings: Settings, requester: int | None, repo_id: int | None, installation: int | str | None,
              installation_name: str = "") -> list[Effective]:
    """Per agent, what `resolve` gives a run for this requester / repository / installation."""
    return [_one(settings, agent, requester, repo_id, installation, installation_name) for agent in base.names()]


def _one(settings: Settings, agent: str, requester: int | None, repo_id: int | None,
         installation: int | str | None, installation_name: str) -> Effective:
    try:
        origin = credentials.resolve_origin(settings, agent, repo_id, requester, installation)
    except secrets.SecretError:
        return Effective(agent, None, "", "", False, "a stored key cannot be decrypted: connect it again")
    missing_cli = _missing_cli(settings, agent)
    if origin is None:
        return Effective(agent, None, "", "", False, "connect a credential below")
    label = origin.kind.label if origin.kind else origin.variable or ""
    where = installation_name if origin.source == "installation" else ""
    shown = usage.fingerprint_of(origin) if origin.source != "operator" else ""
    if missing_cli:
        return Effective(agent, origin.source, label, shown, False, missing_cli, where)
    return Effective(agent, origin.source, label, shown, True, "", where)


def _missing_cli(settings: Settings, agent: str) -> str:
    adapter = base.get(agent)
    binary = settings.agent_bin(agent, adapter.executable)
    return "" if shutil.which(binary) else f"the {adapter.executable} CLI is not installed on this bot"


def stored_rows(settings: Settings, scope: str) -> list[dict]:
    """The keys stored in one scope, as fingerprints with their use."""
    rows = []
    stored = [(info, credentials.find_kind(info.name)) for info in secrets.listing(scope, settings)]
    with secrets.database(settings) as db:
        for info, kind in stored:
            if not kind:
                continue
            use = usage.key_use(db, scope, info.name, info.fingerprint)
            rows.append({"agent": kind.agent, "label": kind.label, "name": kind.name,
                         "fingerprint": info.fingerprint, "updated_at": when(info.updated_at),
                         "updated_by": info.updated_by, "runs": use.runs, "usd": use.usd,
                         "tokens": use.tokens, "last_used": when(use.last_used) if use.last_used else None})
    return rows


def when(timestamp: str) -> str:
    return timestamp.replace("T", " ")[:16] + " UTC"
