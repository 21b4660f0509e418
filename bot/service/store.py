"""The spine's state in $BOT_DATA_DIR/bot.db (SQLite, WAL) behind one module.

Tables owned here: jobs (the queue; claim/lease logic is in bot.queue), conversations, sessions,
notices. Other modules own their own tables in the same file. An accepted delivery is recorded by
its job row alone (`jobs.delivery_id`, with event and action in the spec).
"""
from __future__ import annotations

import asyncio
import sqlite3
import time
import weakref
from pathlib import Path

import orjson
import sqlite_utils

from bot import config


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


def write_batch(db: sqlite_utils.Database, batch: list) -> list[tuple[object, Exception | None]]:
    """Run every `statements(conn)` of `batch` in one transaction (one COMMIT), each inside its own
    savepoint: a None result or an exception rolls back that one's writes only, as `write` would.
    Returns (result, exception) per item, in order."""
    def run_all(conn) -> list:
        outcomes = []
        for statements in batch:
            conn.execute("SAVEPOINT spine_item")
            try:
                result, error = statements(conn), None
            except Exception as exc:  # this item's failure is its caller's, not the batch's
                result, error = None, exc
            if result is None:
                conn.execute("ROLLBACK TO spine_item")
            conn.execute("RELEASE spine_item")
            outcomes.append((result, error))
        return outcomes
    return write(db, run_all)


class GroupCommit:
    """Group commit on the event loop: the writes submitted during one loop iteration share one
    transaction. The first submission schedules the flush with `call_soon`, so it runs after every
    request task already scheduled in this iteration; each caller's future resolves only after
    the COMMIT, so an answer sent after awaiting it stands on durable rows. No thread hop, and no
    await between BEGIN and COMMIT (the connection stays the loop's alone). Like `write`, a batch
    flushed while the connection is inside someone's open transaction becomes a savepoint of it;
    nothing in this process holds a transaction across an await."""

    def __init__(self):
        self._pending: list[tuple[object, asyncio.Future]] = []

    def submit(self, db: sqlite_utils.Database, statements) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush, db)
        self._pending.append((statements, future))
        return future

    def _flush(self, db: sqlite_utils.Database) -> None:
        batch, self._pending = self._pending, []
        try:
            outcomes = write_batch(db, [statements for statements, _ in batch])
        except Exception as exc:  # BEGIN or COMMIT failed: nothing of the batch is stored
            outcomes = [(None, exc)] * len(batch)
        for (_, future), (result, error) in zip(batch, outcomes, strict=True):
            if future.done():  # its request went away; the rows stand, a redelivery dedupes
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)


_group_commits: weakref.WeakKeyDictionary[sqlite_utils.Database, GroupCommit] = weakref.WeakKeyDictionary()


async def commit(db: sqlite_utils.Database, statements):
    """`write(db, statements)` for code on the event loop, committed together with the other
    writes of the same loop iteration; returns once the COMMIT is done."""
    group = _group_commits.get(db)
    if group is None:
        group = _group_commits[db] = GroupCommit()
    return await group.submit(db, statements)


def enqueue_delivery(conn, *, delivery_id: str, event: str, action: str | None, kind: str,
                     conversation: str, spec: dict, notice: str | None = None) -> int | None:
    """Insert the job unless the delivery already has a live one (a failed job may be retried),
    claiming the once-per-thread notice if any. Returns the job id, or None when nothing may be
    stored (run it in `write`, which then rolls back).

    The job row is the delivery's record (delivery_id, created_at, kind; event and action in the
    spec): a second row keyed by the random delivery id cost a page written per delivery and
    about a quarter of the transaction's cost (docs/service.md, Figures)."""
    now = time.time()
    if notice is not None and conn.execute(
            "INSERT OR IGNORE INTO notices (conversation, kind, created_at) VALUES (?, ?, ?)",
            [conversation, notice, now]).rowcount == 0:
        return None
    cursor = conn.execute(
        "INSERT INTO jobs (delivery_id, kind, conversation, spec, created_at) SELECT ?, ?, ?, ?, ? "
        "WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE delivery_id = ? AND status != 'failed')",
        [delivery_id, kind, conversation, orjson.dumps({**spec, "event": event, "action": action}).decode(),
         now, delivery_id])
    return cursor.lastrowid if cursor.rowcount else None



def get_job(db: sqlite_utils.Database, job_id: int) -> dict | None:
    return next(iter(db.query("SELECT * FROM jobs WHERE id = ?", [job_id])), None)


def jobs(db: sqlite_utils.Database, conversation: str | None = None) -> list[dict]:
    if conversation is None:
        return list(db.query("SELECT * FROM jobs ORDER BY id"))
    return list(db.query("SELECT * FROM jobs WHERE conversation = ? ORDER BY id", [conversation]))


def update_job(db: sqlite_utils.Database, job_id: int, **fields) -> None:
    columns = ", ".join(f"{name} = ?" for name in fields)
    db.execute(f"UPDATE jobs SET {columns} WHERE id = ?", [*fields.values(), job_id])
