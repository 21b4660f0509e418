"""The jobs table as a queue: atomic claim with a lease, renewal, completion.

Episode jobs of one conversation run one at a time in arrival order; reply jobs (help, notices,
status) never wait behind an episode. A running job whose lease expired (its process died) is
claimable again, so a restart picks it up. On PostgreSQL many workers on many machines claim
from the same table: the claim skips rows another worker has locked (FOR UPDATE SKIP LOCKED), and
the per-thread order holds because an earlier episode of the thread is still queued or running in
every snapshot until its worker commits the finish.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.db import Database
from bot.intake.spec import JobSpec, SpecError
from bot.service import store

log = logging.getLogger("bot.service.queue")
DEFAULT_LEASE_S = 30.0

_CLAIM = """
UPDATE jobs SET status = 'running', lease_owner = ?, lease_expires = ?,
       attempts = attempts + 1, started_at = COALESCE(started_at, ?)
WHERE id = (
  SELECT j.id FROM jobs j
  WHERE (j.status = 'queued' OR (j.status = 'running' AND j.lease_expires < ?))
    {busy}
    AND (j.kind != 'episode' OR NOT EXISTS (
          SELECT 1 FROM jobs k WHERE k.kind = 'episode' AND k.conversation = j.conversation
            AND k.id < j.id AND k.status IN ('queued', 'running')))
  ORDER BY j.id LIMIT 1 {lock})
RETURNING *
"""


@dataclass
class Job:
    id: int
    kind: str
    conversation: str
    spec: JobSpec
    attempts: int
    tracking_comment_id: int | None
    delivery_id: str | None = None
    cancel_requested: bool = False
    stopped_by: str | None = None  # who asked `@bot stop` (after the permission check)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Job:
        return cls(id=row["id"], kind=row["kind"], conversation=row["conversation"],
                   spec=JobSpec.from_json(row["spec"]), attempts=row["attempts"],
                   tracking_comment_id=row["tracking_comment_id"],
                   delivery_id=row["delivery_id"], cancel_requested=bool(row.get("cancel_requested")),
                   stopped_by=row.get("stopped_by"))


def claim(db: Database, owner: str, lease_s: float = DEFAULT_LEASE_S,
          busy: tuple[int, ...] = ()) -> Job | None:
    """Atomically take the next runnable job, or None. `busy`: ids this process is running,
    never reclaimed by it even if their lease lapsed while the event loop was blocked."""
    while (row := _claim_row(db, owner, lease_s, busy)) is not None:
        try:
            return Job.from_row(row)
        except SpecError as exc:  # never run on a guess, never claimed again
            log.error("job %s cannot be read and is failed: %s", row["id"], exc)
            finish(db, row["id"], "failed", error=f"unreadable job spec: {exc}")
    return None


def _claim_row(db: Database, owner: str, lease_s: float, busy: tuple[int, ...]) -> dict[str, Any] | None:
    now = time.time()
    busy_sql = f"AND j.id NOT IN ({', '.join('?' * len(busy))})" if busy else ""
    # on PostgreSQL the row lock skips a job another worker is taking this instant (SKIP LOCKED)
    row: dict[str, Any] | None = db.execute(_CLAIM.format(busy=busy_sql, lock=db.dialect.lock_rows),
                                  [owner, now + lease_s, now, now, *busy]).fetchone()
    return row


def renew(db: Database, job_id: int, owner: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
    """Extend the lease; False when the job is no longer ours."""
    cursor = db.execute("UPDATE jobs SET lease_expires = ? WHERE id = ? AND lease_owner = ? "
                        "AND status = 'running'", [time.time() + lease_s, job_id, owner])
    return bool(cursor.rowcount == 1)


def finish(db: Database, job_id: int, status: str, error: str | None = None,
           owner: str | None = None) -> bool:
    """Mark the job finished; with `owner`, only while that worker still holds it (a worker whose
    lease was taken over must not end the job the new owner is running). True when marked."""
    assert status in ("done", "failed", "cancelled"), status
    sql = ("UPDATE jobs SET status = ?, error = ?, finished_at = ?, lease_owner = NULL, lease_expires = NULL "
           "WHERE id = ?")
    params = [status, error, time.time(), job_id]
    if owner is not None:
        sql += " AND lease_owner = ?"
        params.append(owner)
    done = bool(db.execute(sql, params).rowcount == 1)
    store.notify_queued(db)  # the thread's next episode may run now, on any machine
    return done


def request_stop(db: Database, conversation: str, by: str) -> list[int]:
    """Flag the thread's running and queued episodes for cancellation on behalf of `by` (whose
    permission was checked); a running one's worker notices within a second, on any machine, and
    a queued one ends as stopped when claimed. Returns their ids."""
    def flag(conn: Database) -> list[int]:
        ids = [row["id"] for row in conn.execute(
            "SELECT id FROM jobs WHERE conversation = ? AND kind = 'episode' "
            "AND status IN ('queued', 'running') ORDER BY id", [conversation])]
        conn.executemany("UPDATE jobs SET cancel_requested = 1, stopped_by = ? WHERE id = ?", [[by, i] for i in ids])
        return ids
    return store.write(db, flag)


def stop_running(db: Database, conversation: str, by: str, which: Callable[[JobSpec], bool]) -> list[int]:
    """As `request_stop`, for the thread's running episodes `which` picks only (`@bot pause`: what
    runs without a mention). Returns their ids."""
    def flag(conn: Database) -> list[int]:
        rows = conn.query("SELECT id, spec FROM jobs WHERE conversation = ? AND kind = 'episode' "
                          "AND status = 'running' AND cancel_requested = 0 ORDER BY id LIMIT 100", [conversation])
        ids = [row["id"] for row in rows if _picked(row, which)]
        conn.executemany("UPDATE jobs SET cancel_requested = 1, stopped_by = ? WHERE id = ?", [[by, i] for i in ids])
        return ids
    return store.write(db, flag)


def _picked(row: dict[str, Any], which: Callable[[JobSpec], bool]) -> bool:
    try:
        return which(JobSpec.from_json(row["spec"]))
    except SpecError:  # never claimed to be run either (`claim` fails it)
        return False


def open_jobs(db: Database, conversation: str) -> list[dict[str, Any]]:
    return list(db.query("SELECT * FROM jobs WHERE conversation = ? AND status IN ('queued', 'running') "
                         "ORDER BY id", [conversation]))
