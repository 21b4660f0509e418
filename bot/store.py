"""The spine's state in $BOT_DATA_DIR/bot.db (SQLite, WAL) behind one module.

Tables owned here: deliveries, jobs (the queue; claim/lease logic is in bot.queue), conversations,
sessions, notices, audit. Other modules own their own tables in the same file.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import orjson
import sqlite_utils

from bot import config

JOB_STATES = ("queued", "running", "done", "failed", "cancelled")


def connect(path: Path | None = None) -> sqlite_utils.Database:
    """A WAL-mode connection to the bot database; tables are created on first use."""
    path = path or config.data_dir() / "bot.db"
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")
    db = sqlite_utils.Database(conn)
    ensure_schema(db)
    return db


def ensure_schema(db: sqlite_utils.Database) -> None:
    db.execute("""CREATE TABLE IF NOT EXISTS deliveries (
        id TEXT PRIMARY KEY, event TEXT, action TEXT, received_at REAL, decision TEXT)""")
    db.execute("""CREATE TABLE IF NOT EXISTS jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT, kind TEXT NOT NULL,
        conversation TEXT NOT NULL, spec TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'queued',
        attempts INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_expires REAL,
        tracking_comment_id INTEGER, cancel_requested INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL, started_at REAL, finished_at REAL, error TEXT, run_id TEXT)""")
    db.execute("CREATE INDEX IF NOT EXISTS jobs_by_delivery ON jobs(delivery_id)")
    db.execute("CREATE INDEX IF NOT EXISTS jobs_open ON jobs(status, conversation, id)")
    db.execute("""CREATE TABLE IF NOT EXISTS conversations (
        key TEXT PRIMARY KEY, slug TEXT UNIQUE, repo TEXT, number INTEGER,
        created_at REAL, last_active_at REAL)""")
    db.execute("""CREATE TABLE IF NOT EXISTS sessions (
        conversation TEXT NOT NULL, agent TEXT NOT NULL, session_id TEXT, created_at REAL,
        last_used_at REAL, turns INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (conversation, agent))""")
    db.execute("""CREATE TABLE IF NOT EXISTS notices (
        conversation TEXT NOT NULL, kind TEXT NOT NULL, created_at REAL, PRIMARY KEY (conversation, kind))""")
    db.execute("""CREATE TABLE IF NOT EXISTS audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL, actor TEXT, action TEXT, subject TEXT, detail TEXT)""")


def record_delivery(db: sqlite_utils.Database, delivery_id: str, event: str, action: str | None,
                    decision: str) -> None:
    db.execute("INSERT OR REPLACE INTO deliveries (id, event, action, received_at, decision) "
               "VALUES (?, ?, ?, ?, ?)", [delivery_id, event, action, time.time(), decision])


def write(db: sqlite_utils.Database, statements):
    """Run `statements(conn)` in one transaction, committed before returning (no await in
    between, so no other code of this process can write on the connection meanwhile).
    A None result rolls the writes back."""
    conn = db.conn
    if conn.in_transaction:  # inside someone's open transaction: a savepoint of it
        conn.execute("SAVEPOINT spine_write")
        try:
            result = statements(conn)
        except BaseException:
            conn.execute("ROLLBACK TO spine_write")
            conn.execute("RELEASE spine_write")
            raise
        if result is None:
            conn.execute("ROLLBACK TO spine_write")
        conn.execute("RELEASE spine_write")
        return result
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = statements(conn)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT" if result is not None else "ROLLBACK")
    return result


def enqueue_delivery(conn, *, delivery_id: str, event: str, action: str | None, kind: str,
                     conversation: str, spec: dict, notice: str | None = None) -> int | None:
    """Insert the job unless the delivery already has a live one (a failed job may be retried),
    claiming the once-per-thread notice if any, and record the delivery. Returns the job id, or
    None when nothing may be stored (run it in `write`, which then rolls back)."""
    now = time.time()
    if notice is not None and conn.execute(
            "INSERT OR IGNORE INTO notices (conversation, kind, created_at) VALUES (?, ?, ?)",
            [conversation, notice, now]).rowcount == 0:
        return None
    cursor = conn.execute(
        "INSERT INTO jobs (delivery_id, kind, conversation, spec, created_at) SELECT ?, ?, ?, ?, ? "
        "WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE delivery_id = ? AND status != 'failed')",
        [delivery_id, kind, conversation, orjson.dumps(spec).decode(), now, delivery_id])
    if cursor.rowcount == 0:
        return None
    conn.execute("INSERT OR REPLACE INTO deliveries (id, event, action, received_at, decision) "
                 "VALUES (?, ?, ?, ?, ?)", [delivery_id, event, action, now, kind])
    return cursor.lastrowid


def live_job_for_delivery(db: sqlite_utils.Database, delivery_id: str) -> dict | None:
    """The delivery's job unless it failed (a failed job may be retried by redelivering)."""
    rows = db.query("SELECT * FROM jobs WHERE delivery_id = ? AND status != 'failed' LIMIT 1",
                    [delivery_id])
    return next(iter(rows), None)


def insert_job(db: sqlite_utils.Database, *, kind: str, conversation: str, spec: dict,
               delivery_id: str | None = None) -> int:
    cursor = db.execute(
        "INSERT INTO jobs (delivery_id, kind, conversation, spec, created_at) VALUES (?, ?, ?, ?, ?)",
        [delivery_id, kind, conversation, json.dumps(spec), time.time()])
    return cursor.lastrowid


def get_job(db: sqlite_utils.Database, job_id: int) -> dict | None:
    return next(iter(db.query("SELECT * FROM jobs WHERE id = ?", [job_id])), None)


def jobs(db: sqlite_utils.Database, conversation: str | None = None) -> list[dict]:
    if conversation is None:
        return list(db.query("SELECT * FROM jobs ORDER BY id"))
    return list(db.query("SELECT * FROM jobs WHERE conversation = ? ORDER BY id", [conversation]))


def update_job(db: sqlite_utils.Database, job_id: int, **fields) -> None:
    columns = ", ".join(f"{name} = ?" for name in fields)
    db.execute(f"UPDATE jobs SET {columns} WHERE id = ?", [*fields.values(), job_id])


def claim_notice(db: sqlite_utils.Database, conversation: str, kind: str) -> bool:
    """True the first time a notice of this kind is claimed for the thread, False after."""
    cursor = db.execute("INSERT OR IGNORE INTO notices (conversation, kind, created_at) VALUES (?, ?, ?)",
                        [conversation, kind, time.time()])
    return cursor.rowcount == 1


def audit(db: sqlite_utils.Database, actor: str, action: str, subject: str = "", **detail) -> None:
    db.execute("INSERT INTO audit (at, actor, action, subject, detail) VALUES (?, ?, ?, ?, ?)",
               [time.time(), actor, action, subject, json.dumps(detail, default=str)])


def audit_rows(db: sqlite_utils.Database, action: str | None = None) -> list[dict]:
    if action is None:
        return list(db.query("SELECT * FROM audit ORDER BY id"))
    return list(db.query("SELECT * FROM audit WHERE action = ? ORDER BY id", [action]))
