"""Exactly once: one row per (repository, automation, slot) in `automation_runs`, whatever the
number of intake replicas and workers. The slot is the event's delivery id, or the schedule's
slot time. The database's unique key decides who runs it; the job that claimed a slot may claim
it again (a retry after its worker died), no other.

    if claim(db, "o/r", "triage", delivery_id, job_id): run it
    job_id = claim_and_queue(db, "o/r", "deps", "2026-12-07T06:00Z", queue_job)   # a schedule's slot

A schedule's slot is claimed and its job queued in one transaction (`claim_and_queue`): whoever
claims it queues the one job, and a crash between the two leaves neither.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from bot.db import Database


def claim(db: Database, repo: str, automation: str, slot: str, job_id: int | None) -> bool:
    """True when this job holds the slot (inserted now, or by this same job before)."""
    with db.transaction() as conn:
        return _claim(conn, repo, automation, slot, job_id)


def claim_and_queue(db: Database, repo: str, automation: str, slot: str,
                    queue_job: Callable[[Database], int]) -> int | None:
    """The id of the job `queue_job(conn)` queued for the slot, in the transaction that claimed it
    (stored on the claim's row), or None when another process holds the slot."""
    with db.transaction() as conn:
        if not _claim(conn, repo, automation, slot, None):
            return None
        job_id = queue_job(conn)
        conn.execute("UPDATE automation_runs SET job_id = ? WHERE repo = ? AND automation = ? AND slot = ?",
                     [job_id, repo, automation, slot])
        return job_id


def _claim(db: Database, repo: str, automation: str, slot: str, job_id: int | None) -> bool:
    inserted = db.execute(
        "INSERT INTO automation_runs (repo, automation, slot, job_id, created_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING", [repo, automation, slot, job_id, time.time()]).rowcount
    if inserted:
        return True
    rows = db.query("SELECT job_id FROM automation_runs WHERE repo = ? AND automation = ? AND slot = ?",
                    [repo, automation, slot])
    return job_id is not None and bool(rows) and rows[0]["job_id"] == job_id


def runs(db: Database, repo: str, automation: str) -> list[str]:
    """The slots run so far, oldest first."""
    return [row["slot"] for row in db.query(
        "SELECT slot FROM automation_runs WHERE repo = ? AND automation = ? ORDER BY created_at, slot",
        [repo, automation])]
