"""Exactly once: one row per (repository, automation, slot) in `automation_runs`, whatever the
number of intake replicas and workers. The slot is the event's delivery id, or the schedule's
slot time. The database's unique key decides who runs it; the job that claimed a slot may claim
it again (a retry after its worker died), no other.

    if claim(db, "o/r", "triage", delivery_id, job_id): run it
"""
from __future__ import annotations

import time

from bot.db import Database


def claim(db: Database, repo: str, automation: str, slot: str, job_id: int | None) -> bool:
    """True when this job holds the slot (inserted now, or by this same job before)."""
    with db.transaction() as conn:
        return _claim(conn, repo, automation, slot, job_id)


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
