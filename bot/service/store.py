"""The spine's state (bot/db: SQLite in the data dir, or PostgreSQL) behind one module.

Tables owned here: jobs (the queue; claim/lease logic is in bot.queue), conversations, sessions,
notices. Other modules own their own tables in the same file. An accepted delivery is recorded by
its job row alone (`jobs.delivery_id`, with event and action in the spec).
"""
from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict, TypeVar, cast

import orjson

from bot.config import Settings
from bot.db import Database
from bot.db import connect as db_connect

T = TypeVar("T")
QUEUE_CHANNEL = "bot_jobs"  # notified when a job is queued or a thread's next job may run


def connect(path: Path | None = None, *, settings: Settings | None = None) -> Database:
    """The bot database of the entry point's `settings` (BOT_DATABASE_URL, else the data dir's
    SQLite file), or `path`'s SQLite file, migrated to the latest schema (bot/db/migrations.py)."""
    return db_connect(path=path, settings=settings)


def write(db: Database, statements: Callable[[Database], T]) -> T:
    """Run `statements(db)` in one transaction, committed before returning (no await in
    between, so no other code of this process can write on the connection meanwhile).
    A None result rolls the writes back."""
    if db.in_transaction:  # inside someone's open transaction: a savepoint of it
        db.execute("SAVEPOINT spine_write")
        try:
            result = statements(db)
        except BaseException:
            db.execute("ROLLBACK TO spine_write")
            db.execute("RELEASE spine_write")
            raise
        if result is None:
            db.execute("ROLLBACK TO spine_write")
        db.execute("RELEASE spine_write")
        return result
    db.execute(db.dialect.begin)
    try:
        result = statements(db)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT" if result is not None else "ROLLBACK")
    return result


def write_batch(db: Database, batch: list[Callable[[Database], object]]) -> list[tuple[object, Exception | None]]:
    """Run every `statements(conn)` of `batch` in one transaction (one COMMIT), each inside its own
    savepoint: a None result or an exception rolls back that one's writes only, as `write` would.
    Returns (result, exception) per item, in order."""
    def run_all(conn: Database) -> list[tuple[object, Exception | None]]:
        outcomes: list[tuple[object, Exception | None]] = []
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

    def __init__(self) -> None:
        self._pending: list[tuple[Callable[[Database], Any], asyncio.Future[Any]]] = []

    def submit(self, db: Database, statements: Callable[[Database], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._flush, db)
        self._pending.append((statements, future))
        return future

    def _flush(self, db: Database) -> None:
        batch, self._pending = self._pending, []
        try:
            outcomes = _written(db, [statements for statements, _ in batch])
        except Exception as exc:  # BEGIN or COMMIT failed: nothing of the batch is stored
            outcomes = [(None, exc)] * len(batch)
        for (_, future), (result, error) in zip(batch, outcomes, strict=True):
            if future.done():  # its request went away; the rows stand, a redelivery dedupes
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)


def _written(db: Database, batch: list[Callable[[Database], object]]) -> list[tuple[object, Exception | None]]:
    """`write_batch`, with a batch of one written as `write` writes it: its transaction is its
    own, so the savepoint around it would add two statements (each a hand-back of the GIL, which
    another thread may keep for a while) and change nothing."""
    if len(batch) > 1:
        return write_batch(db, batch)
    try:
        return [(write(db, batch[0]), None)]
    except Exception as exc:  # rolled back: nothing of it is stored, as in `write_batch`
        return [(None, exc)]


_group_commits: weakref.WeakKeyDictionary[Database, GroupCommit] = weakref.WeakKeyDictionary()


async def commit(db: Database, statements: Callable[[Database], T]) -> T:
    """`write(db, statements)` for code on the event loop, committed together with the other
    writes of the same loop iteration; returns once the COMMIT is done."""
    group = _group_commits.get(db)
    if group is None:
        group = _group_commits[db] = GroupCommit()
    return await group.submit(db, statements)


def enqueue_delivery(conn: Database, *, delivery_id: str, event: str, action: str | None, kind: str,
                     conversation: str, spec: dict[str, Any], notice: str | None = None,
                     coalesce_key: str | None = None) -> int | None:
    """Insert the job unless the object it is about (`spec["trigger_key"]`: a redelivery, or a
    replay of a signed body under a new delivery id), or for a job about none (a schedule's slot, an
    automation's run) its delivery id, already has a live one (a failed job may be retried),
    claiming the once-per-thread notice if any. One delivery id names one signed body, so one
    trigger: its job is found by that (the delivery id is indexed for jobs without a trigger only:
    a random id in an index cost each insert a page written of its own). Returns the job id, or
    None when nothing may be stored (run it in `write`, which then rolls back). `coalesce_key`: a
    push review's thread and requester (bot/web/review_push.py); the database holds one waiting
    job per key, so a racing replica's insert of the same key does nothing (None) too.

    The job row is the delivery's record (delivery_id, created_at, kind; event and action in the
    spec): a second row keyed by the random delivery id cost a page written per delivery and
    about a quarter of the transaction's cost (docs/service.md, Figures)."""
    now = time.time()
    if notice is not None and conn.execute(
            "INSERT INTO notices (conversation, kind, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [conversation, notice, now]).rowcount == 0:
        return None
    trigger_key = spec.get("trigger_key")  # the comment, review or item the delivery is about
    row = conn.execute(
        "INSERT INTO jobs (delivery_id, trigger_key, kind, conversation, spec, coalesce_key, created_at) "
        "SELECT ?, ?, ?, ?, ?, ?, ? "
        "WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE delivery_id = ? AND trigger_key IS NULL AND status != 'failed') "
        "AND NOT EXISTS (SELECT 1 FROM jobs WHERE trigger_key = ? AND status != 'failed') "
        "ON CONFLICT DO NOTHING RETURNING id",  # a racing replica's insert of the same trigger (or key) won
        [delivery_id, trigger_key, kind, conversation,
         orjson.dumps({**spec, "event": event, "action": action}).decode(), coalesce_key, now, delivery_id,
         trigger_key]).fetchone()
    if row is None:
        return None
    notify_queued(conn)
    job_id: int = row["id"]
    return job_id


def notify_queued(db: Database) -> None:
    """Wake the workers listening on other machines (PostgreSQL NOTIFY, delivered at COMMIT)."""
    statement = db.dialect.notify_sql(QUEUE_CHANNEL)
    if statement:
        db.execute(statement)


class JobRow(TypedDict):
    """A row of the `jobs` table (bot/db/migrations.py)."""

    id: int
    delivery_id: str | None
    trigger_key: str | None
    kind: str
    conversation: str
    spec: str  # JSON
    status: str
    attempts: int
    lease_owner: str | None
    lease_expires: float | None
    tracking_comment_id: int | None
    cancel_requested: int
    stopped_by: str | None
    created_at: float
    started_at: float | None
    finished_at: float | None
    error: str | None
    run_id: str | None
    coalesce_key: str | None


def get_job(db: Database, job_id: int) -> JobRow | None:
    return cast(JobRow | None, db.execute("SELECT * FROM jobs WHERE id = ?", [job_id]).fetchone())


def jobs(db: Database, conversation: str | None = None) -> list[JobRow]:
    if conversation is None:
        return cast(list[JobRow], db.query("SELECT * FROM jobs ORDER BY id"))
    return cast(list[JobRow], db.query("SELECT * FROM jobs WHERE conversation = ? ORDER BY id", [conversation]))


def update_job(db: Database, job_id: int, **fields: object) -> None:
    columns = ", ".join(f"{name} = ?" for name in fields)
    db.execute(f"UPDATE jobs SET {columns} WHERE id = ?", [*fields.values(), job_id])
