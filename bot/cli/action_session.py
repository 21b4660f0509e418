"""The Action's session cache: one per thread, holding only what the next turn needs to resume.

A workflow run starts from an empty data dir. What the next comment in the same thread needs is
the thread's CLI homes, reduced to each CLI's session state (bot/job/resume_state.py), the
thread's rows of the session map, and its model spend so far (a thread budget and `@bot status`
count every turn); nothing else (no mirror, no database, no key, no other thread).
`export` writes exactly that to the session folder, which action.yml saves under a key of the
thread and the run, deleting the entry it restored, so each thread has one entry, replaced each
turn. `restore` brings it back into the fresh data dir; the cache is written by workflow runs of
the repository (a fork's included), so what comes back is scrubbed again and only this thread's
part is taken: a session id only in its CLI's grammar (it becomes an argument of the CLI), a
spend row only in range and as this thread's runs write it (it counts toward the caps).
"""
from __future__ import annotations

import json
import logging
import math
import shutil
from datetime import UTC, datetime
from pathlib import Path

from adapters import base
from bot.db import Database
from bot.job import conversations
from bot.job.resume_state import empty, scrub_homes

SESSIONS_FILE = "sessions.json"
_FIELDS = {"agent": str, "session_id": str, "created_at": float, "last_used_at": float, "turns": int}
_SPEND = {"run_id": str, "ts": str, "requester": str, "installation": str, "tokens": int, "usd": float}
# No one priced call comes near these: a row above them was not written by a run.
MAX_CALL_TOKENS = 10_000_000
MAX_CALL_USD = 1_000.0
MAX_SPEND_ROWS = 10_000
log = logging.getLogger("bot.cli.action_session")


def export(db: Database, key: str, folder: Path, data_dir: Path) -> int:
    """Replace `folder` with this thread's scrubbed CLI homes (from `data_dir`) and session rows;
    returns how many sessions it holds."""
    slug = conversations.slug(key)
    scrub_homes(data_dir / "homes")
    if folder.is_dir() and not folder.is_symlink():
        empty(folder)
    folder.mkdir(parents=True, exist_ok=True)
    homes = data_dir / "homes" / slug
    if homes.is_dir():
        shutil.copytree(homes, folder / "homes" / slug, symlinks=True)
    rows = [{name: row[name] for name in _FIELDS} for row in db.query(
        "SELECT * FROM sessions WHERE conversation = ? AND session_id IS NOT NULL", [key])]
    spend = [{name: row[name] for name in _SPEND} for row in db.query(
        "SELECT * FROM model_spend WHERE conversation = ?", [key])] if "model_spend" in db.table_names() else []
    (folder / SESSIONS_FILE).write_text(json.dumps({"conversation": key, "sessions": rows, "spend": spend}))
    return len(rows)


def restore(db: Database, key: str, folder: Path, data_dir: Path, requester: str | None = None) -> int:
    """Take this thread's part of a restored session cache into `data_dir`; returns how many
    sessions came back (0 when there is no cache or it is another thread's). `requester` is this
    run's (its spend rows count toward their day; anyone else's toward the thread only)."""
    try:
        data = json.loads((folder / SESSIONS_FILE).read_text())
    except (OSError, ValueError):
        return 0
    if not isinstance(data, dict) or data.get("conversation") != key:
        return 0
    slug = conversations.slug(key)
    scrub_homes(folder / "homes")  # written by earlier runs: only resume state, no link, comes in
    source = folder / "homes" / slug
    if source.is_dir() and not source.is_symlink():
        target = data_dir / "homes" / slug
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target, symlinks=True)
    conversations.ensure(db, key)
    _restore_spend(db, key, _list(data.get("spend")), requester)
    return _restore_sessions(db, key, _list(data.get("sessions")))


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _restore_sessions(db: Database, key: str, rows: list) -> int:
    restored = 0
    for row in rows:
        if _valid(row):
            db.execute("INSERT INTO sessions (conversation, agent, session_id, created_at, last_used_at, turns) "
                       "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (conversation, agent) DO NOTHING",
                       [key, row["agent"], row["session_id"], row["created_at"], row["last_used_at"], row["turns"]])
            restored += 1
    return restored


def _valid(row: object) -> bool:
    if not isinstance(row, dict) or row.get("agent") not in base.names() or not _typed(row, _FIELDS):
        return False
    try:
        base.check_session_id(base.get(row["agent"]), row["session_id"])
    except base.InvalidSessionId as exc:
        log.warning("a cached %s session is not restored (%s); the next turn starts fresh", row["agent"], exc)
        return False
    return True


def _restore_spend(db: Database, key: str, rows: list, requester: str | None) -> None:
    """Spend rows count toward caps, and the cache is writable by any workflow run: a row is
    taken only when it could be one this thread's runs wrote (in range, dated before now, no
    installation), so a cache can add spend to the thread but never take any away."""
    refused = 0
    for row in rows[:MAX_SPEND_ROWS]:
        ts = _spend_time(row)
        if ts is None:
            refused += 1
            continue
        owner = row["requester"] if row["requester"] == requester else None
        db.execute("INSERT INTO model_spend (run_id, ts, conversation, requester, installation, tokens, usd) "
                   "VALUES (?, ?, ?, ?, NULL, ?, ?)", [row["run_id"], ts, key, owner, row["tokens"], row["usd"]])
    refused += max(0, len(rows) - MAX_SPEND_ROWS)
    if refused:
        log.warning("%d cached spend rows of %s are not restored (out of range or not this thread's)", refused, key)


def _spend_time(row: object) -> str | None:
    """The row's time, as the ledger writes it, when the row is one a run of this thread could
    have written; else None."""
    if not _typed(row, _SPEND, nullable=("requester", "installation", "usd", "run_id")):
        return None
    assert isinstance(row, dict)  # _typed checked it
    usd = row["usd"]
    if row["installation"] is not None or not 0 <= row["tokens"] <= MAX_CALL_TOKENS or \
            (usd is not None and not (math.isfinite(usd) and 0 <= usd <= MAX_CALL_USD)):
        return None
    try:
        ts = datetime.fromisoformat(row["ts"])
    except ValueError:
        return None
    if ts.tzinfo is None or ts > datetime.now(UTC):
        return None
    return ts.astimezone(UTC).isoformat(timespec="milliseconds")


def _typed(row: object, fields: dict[str, type], nullable: tuple[str, ...] = ()) -> bool:
    if not isinstance(row, dict):
        return False
    for name, kind in fields.items():
        value = row.get(name)
        if value is None and name in nullable:
            continue
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            return False
    return True
