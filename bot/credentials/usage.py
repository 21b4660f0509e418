"""Which stored key each run used, so a settings page can show a key's last use, runs and spend.

One row per run in `credential_use` (bot.db): the run id, the scope and kind of the stored key (or
the operator's variable) and the key's fingerprint at the time, never a value. A rotated key has
a new fingerprint, so its counts start again. Spend comes from the relay's `model_spend` rows of
those runs; a run whose key went into the sandbox (direct mode) has runs but no spend.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot.credentials import vault as secrets
from bot.credentials.resolve import Origin
from bot.db import Database

TABLE = "credential_use"


@dataclass(frozen=True)
class KeyUse:
    runs: int = 0
    last_used: str | None = None  # ISO time of the latest run's start
    tokens: int = 0
    usd: float = 0.0


def note(db: Database, run_id: str, origin: Origin) -> None:
    """Record that `run_id` runs on `origin`'s credential."""
    scope = origin.scope or "operator"
    name = origin.kind.name if origin.kind else (origin.variable or "")
    db.execute(f"INSERT INTO {TABLE} (run_id, at, scope, name, fingerprint) VALUES (?, ?, ?, ?, ?)",
               [run_id, datetime.now(UTC).isoformat(timespec="milliseconds"), scope, name, fingerprint_of(origin)])


def key_use(db: Database, scope: str, name: str, fingerprint: str) -> KeyUse:
    """Runs on this stored key (this exact value), its latest use and the model spend of those runs."""
    row = db.query(f"select count(*) as runs, max(at) as last from {TABLE} "
                   "where scope = ? and name = ? and fingerprint = ?", [scope, name, fingerprint])[0]
    if not row["runs"]:
        return KeyUse()
    spend = db.query(
        "select coalesce(sum(tokens), 0) as tokens, coalesce(sum(usd), 0) as usd from model_spend "
        f"where run_id in (select run_id from {TABLE} where scope = ? and name = ? and fingerprint = ?)",
        [scope, name, fingerprint])[0]
    return KeyUse(int(row["runs"]), row["last"], int(spend["tokens"]), float(spend["usd"]))


def fingerprint_of(origin: Origin) -> str:
    values = list(origin.credentials.env.values()) + [v.decode(errors="replace")
                                                      for v in origin.credentials.files.values()]
    return secrets.fingerprint(values[0]) if values else ""

