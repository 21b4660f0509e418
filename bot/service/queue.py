"""The jobs table as a queue: atomic claim with a lease, renewal, completion.

Episode jobs of one conversation run one at a time in arrival order; reply jobs (help, notices,
status) never wait behind an episode. A running job whose lease expired (its process died) is
claimable again, so a restart picks it up.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass

import sqlite_utils

DEFAULT_LEASE_S = 30.0

_CLAIM = """
UPDATE jobs SET status = 'running', lease_owner = :owner, lease_expires = :expires,
       attempts = attempts + 1, started_at = COALESCE(started_at, :now)
WHERE id = (
  SELECT j.id FROM jobs j
  WHERE (j.status = 'queued' OR (j.status = 'running' AND j.lease_expires < :now))
    AND j.id NOT IN (SELECT value FROM json_each(:busy))
    AND (j.kind != 'episode' OR NOT EXISTS (
          SELECT 1 FROM jobs k WHERE k.kind = 'episode' AND k.conversation = j.conversation
            AND k.id < j.id AND k.status IN ('queued', 'running')))
  ORDER BY j.id LIMIT 1)
RETURNING *
"""


@dataclass
class Job:
    id: int
    kind: str
    conversation: str
    spec: dict
    attempts: int
    tracking_comment_id: int | None
    delivery_id: str | None = None
    cancel_requested: bool = False

    @classmethod
    def from_row(cls, row: dict) -> Job:
        return cls(id=row["id"], kind=row["kind"], conversation=row["conversation"],
                   spec=json.loads(row["spec"]), attempts=row["attempts"],
                   tracking_comment_id=row["tracking_comment_id"],
                   delivery_id=row["delivery_id"], cancel_requested=bool(row.get("cancel_requested")))


def claim(db: sqlite_utils.Database, owner: str, lease_s: float = DEFAULT_LEASE_S,
          busy: tuple[int, ...] = ()) -> Job | None:
    """Atomically take the next runnable job, or None. `busy`: ids this process is running,
    never reclaimed by it even if their lease lapsed while the event loop was blocked."""
    now = time.time()
    cursor = db.execute(_CLAIM, {"owner": owner, "expires": now + lease_s, "now": now,
                                 "busy": json.dumps(list(busy))})
    row = cursor.fetchone()
    if row is None:
        return None
    return Job.from_row(dict(zip([c[0] for c in cursor.description], row, strict=True)))


def renew(db: sqlite_utils.Database, job_id: int, owner: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
    """Extend the lease; False when the job is no longer ours."""
    cursor = db.execute("UPDATE jobs SET lease_expires = ? WHERE id = ? AND lease_owner = ? "
                        "AND status = 'running'", [time.time() + lease_s, job_id, owner])
    return cursor.rowcount == 1


def finish(db: sqlite_utils.Database, job_id: int, status: str, error: str | None = None,
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
    return db.execute(sql, params).rowcount == 1


def open_jobs(db: sqlite_utils.Database, conversation: str) -> list[dict]:
    return list(db.query("SELECT * FROM jobs WHERE conversation = ? AND status IN ('queued', 'running') "
                         "ORDER BY id", [conversation]))
