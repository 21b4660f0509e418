"""The Action's session cache: one per thread, holding only what the next turn needs to resume.

A workflow run starts from an empty data dir. What the next comment in the same thread needs is
the thread's CLI homes, reduced to each CLI's session state (bot/job/resume_state.py), the
thread's rows of the session map, and its model spend so far (a thread budget and `@bot status`
count every turn); nothing else (no mirror, no database, no key, no other thread).
`export` writes exactly that to the session folder, which action.yml saves under a key of the
thread and the run, deleting the entry it restored, so each thread has one entry, replaced each
turn. `restore` brings it back into the fresh data dir; the cache is written by workflow runs of
the repository, so what comes back is scrubbed again and only this thread's part is taken.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from bot import config
from bot.db import Database
from bot.job import conversations
from bot.job.resume_state import empty, scrub_homes

SESSIONS_FILE = "sessions.json"
_FIELDS = {"agent": str, "session_id": str, "created_at": float, "last_used_at": float, "turns": int}
_SPEND = {"run_id": str, "ts": str, "requester": str, "installation": str, "tokens": int, "usd": float}


def export(db: Database, key: str, folder: Path) -> int:
    """Replace `folder` with this thread's scrubbed CLI homes and session rows; returns how many
    sessions it holds."""
    slug = conversations.slug(key)
    scrub_homes(config.data_dir() / "homes")
    if folder.is_dir() and not folder.is_symlink():
        empty(folder)
    folder.mkdir(parents=True, exist_ok=True)
    homes = config.data_dir() / "homes" / slug
    if homes.is_dir():
        shutil.copytree(homes, folder / "homes" / slug, symlinks=True)
    rows = [{name: row[name] for name in _FIELDS} for row in db.query(
        "SELECT * FROM sessions WHERE conversation = ? AND session_id IS NOT NULL", [key])]
    spend = [{name: row[name] for name in _SPEND} for row in db.query(
        "SELECT * FROM model_spend WHERE conversation = ?", [key])] if "model_spend" in db.table_names() else []
    (folder / SESSIONS_FILE).write_text(json.dumps({"conversation": key, "sessions": rows, "spend": spend}))
    return len(rows)


def restore(db: Database, key: str, folder: Path) -> int:
    """Take this thread's part of a restored session cache into the data dir; returns how many
    sessions came back (0 when there is no cache or it is another thread's)."""
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
        target = config.data_dir() / "homes" / slug
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target, symlinks=True)
    conversations.ensure(db, key)
    restored = 0
    for row in data.get("sessions") or []:
        if _valid(row):
            db.execute("INSERT INTO sessions (conversation, agent, session_id, created_at, last_used_at, turns) "
                       "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (conversation, agent) DO NOTHING",
                       [key, row["agent"], row["session_id"], row["created_at"], row["last_used_at"], row["turns"]])
            restored += 1
    for row in data.get("spend") or []:
        if _typed(row, _SPEND, nullable=("requester", "installation", "usd", "run_id")):
            db.execute("INSERT INTO model_spend (run_id, ts, conversation, requester, installation, tokens, usd) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", [row["run_id"], row["ts"], key, row["requester"],
                                                        row["installation"], row["tokens"], row["usd"]])
    return restored


def _valid(row: object) -> bool:
    if not isinstance(row, dict) or row.get("agent") not in config.AGENTS or not _typed(row, _FIELDS):
        return False
    return len(row["session_id"]) <= 200


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
