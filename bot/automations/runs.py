"""Exactly once: one row per (repository, automation, slot) in `automation_runs`, whatever the
number of intake replicas and workers. The slot is the event's delivery id, or the schedule's
slot time. The database's unique key decides who runs it; the job that claimed a slot may claim
it again (a retry after its worker died), no other.

    if claim(db, "o/r", "triage", delivery_id, job_id, account="alice"): run it
    job_id = claim_and_queue(db, "o/r", "deps", "2026-12-07T06:00Z", queue_job)   # a schedule's slot
    record(db, "o/r", "triage", delivery_id, REFUSED, "over its 50 runs a day", account="alice")

Each row says what it is (`kind`, migration 15): a run (RUN; rows from before the column are runs
too), an autofix attempt counted (bot/automations/attempts.py), the bot's push, or a slot refused
or skipped, with why (`outcome`). Only runs count toward the caps (bot/automations/caps.py).

A schedule's slot is claimed and its job queued in one transaction (`claim_and_queue`): whoever
claims it queues the one job, and a crash between the two leaves neither.
"""
from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.db import Database
from bot.relay.budgets import automation_key

RUN, ATTEMPT, PUSHED, REFUSED, SKIPPED = "run", "attempt", "pushed", "refused", "skipped"


def claim(db: Database, repo: str, automation: str, slot: str, job_id: int | None,
          account: str | None = None) -> bool:
    """True when this job holds the slot (inserted now, or by this same job before)."""
    with db.transaction() as conn:
        return claim_in(conn, repo, automation, slot, job_id, account=account)


def record(db: Database, repo: str, automation: str, slot: str, kind: str, outcome: str,
           account: str | None = None, job_id: int | None = None) -> bool:
    """A slot that does not run (refused by a cap, skipped), with why: True when recorded now, False
    when the slot had its row already (a redelivery: recorded, or run, once)."""
    return insert_row(db, repo, automation, slot, job_id, kind, account, outcome)


def outcome(db: Database, repo: str, automation: str, slot: str, why: str, kind: str = SKIPPED) -> None:
    """A claimed slot that did not run after all (its automation changed meanwhile: skipped; or its
    day's money was spent by the time it ran: refused), with why; it no longer counts as a run."""
    db.execute("UPDATE automation_runs SET kind = ?, outcome = ? WHERE repo = ? AND automation = ? AND slot = ?",
               [kind, why, repo, automation, slot])


def claim_and_queue(db: Database, repo: str, automation: str, slot: str,
                    queue_job: Callable[[Database], int]) -> int | None:
    """The id of the job `queue_job(conn)` queued for the slot, in the transaction that claimed it
    (stored on the claim's row), or None when another process holds the slot."""
    with db.transaction() as conn:
        if not claim_in(conn, repo, automation, slot, None):
            return None
        job_id = queue_job(conn)
        conn.execute("UPDATE automation_runs SET job_id = ? WHERE repo = ? AND automation = ? AND slot = ?",
                     [job_id, repo, automation, slot])
        return job_id


def claim_in(db: Database, repo: str, automation: str, slot: str, job_id: int | None, kind: str = RUN,
           account: str | None = None) -> bool:
    if insert_row(db, repo, automation, slot, job_id, kind, account, None):
        return True
    rows = db.query("SELECT job_id, kind FROM automation_runs WHERE repo = ? AND automation = ? AND slot = ?",
                    [repo, automation, slot])
    return job_id is not None and bool(rows) and rows[0]["job_id"] == job_id and (rows[0]["kind"] or RUN) == kind


def insert_row(db: Database, repo: str, automation: str, slot: str, job_id: int | None, kind: str,
               account: str | None, outcome: str | None, at: float | None = None) -> bool:
    return bool(db.execute(
        "INSERT INTO automation_runs (repo, automation, slot, job_id, created_at, kind, account, outcome) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [repo, automation, slot, job_id, time.time() if at is None else at, kind, account, outcome]).rowcount)


def runs(db: Database, repo: str, automation: str) -> list[str]:
    """The slots run so far, oldest first."""
    return [row["slot"] for row in db.query(
        "SELECT slot FROM automation_runs WHERE repo = ? AND automation = ? AND COALESCE(kind, 'run') = 'run' "
        "ORDER BY created_at, slot", [repo, automation])]


@dataclass(frozen=True)
class LastRun:
    at: float
    slot: str
    kind: str  # run | refused | skipped
    outcome: str | None  # why, for refused and skipped
    job_status: str | None  # the job's (queued, running, done, failed), when it is known
    number: int | None  # the issue or pull request it answered in, when known
    cost_usd: float | None = None  # its model calls at the relay, for this automation: None when it made none


def last_runs(db: Database, repo: str, names: list[str], per: int = 5) -> dict[str, list[LastRun]]:
    """Each automation's latest `per` slots (runs, refusals and skips; newest first) with its job's
    status, thread and cost: bounded, `per` rows for each of at most 50 names."""
    found: dict[str, list[LastRun]] = {}
    for name in names[:50]:
        rows = db.query("SELECT r.created_at, r.slot, r.kind, r.outcome, r.job_id, j.status, j.conversation, i.number "
                        "FROM automation_runs r LEFT JOIN jobs j ON j.id = r.job_id "
                        "LEFT JOIN automation_issues i ON i.repo = r.repo AND i.automation = r.automation "
                        "WHERE r.repo = ? AND r.automation = ? AND COALESCE(r.kind, 'run') IN (?, ?, ?) "
                        "ORDER BY r.created_at DESC, r.slot DESC LIMIT ?",
                        [repo, name, RUN, REFUSED, SKIPPED, min(per, 20)])
        costs = _costs(db, repo, name, rows)
        found[name] = [LastRun(float(r["created_at"]), str(r["slot"]), str(r["kind"] or RUN), r["outcome"],
                               r["status"], _thread(repo, r["conversation"], r["number"]),
                               costs.get(str(r["job_id"])) if (r["kind"] or RUN) == RUN else None) for r in rows]
    return found


def _costs(db: Database, repo: str, name: str, rows: list[dict]) -> dict[str, float]:
    """What each job of `rows` spent on the automation's model calls (the relay's ledger): one query,
    read by the automation's index from the oldest row's time on (a job's calls come after its claim)."""
    jobs = sorted({str(r["job_id"]) for r in rows if r["job_id"] is not None})
    if not jobs:
        return {}
    since = dt.datetime.fromtimestamp(min(float(r["created_at"]) for r in rows), dt.UTC)
    spent = db.query("SELECT r.job_id AS job, SUM(COALESCE(s.usd, 0)) AS usd FROM model_spend s "
                     "JOIN runs r ON r.id = s.run_id WHERE s.automation = ? AND s.ts >= ? "
                     f"AND r.job_id IN ({', '.join('?' * len(jobs))}) GROUP BY r.job_id",
                     [automation_key(repo, name), since.isoformat(timespec="milliseconds"), *jobs])
    return {str(row["job"]): float(row["usd"]) for row in spent}


def _thread(repo: str, conversation: str | None, issue: int | None) -> int | None:
    """The thread a run answered in: its job's (`o/r#N`), else the automation's own issue."""
    prefix = f"{repo}#"
    if conversation and conversation.startswith(prefix) and conversation[len(prefix):].isdigit():
        number = int(conversation[len(prefix):])
        if number:
            return number
    return int(issue) if issue is not None else None


def outcomes(db: Database, repo: str, automation: str) -> list[tuple[str, str, str | None]]:
    """Every row of the automation, oldest first: (slot, kind, outcome)."""
    return [(row["slot"], row["kind"] or RUN, row["outcome"]) for row in db.query(
        "SELECT slot, kind, outcome FROM automation_runs WHERE repo = ? AND automation = ? "
        "ORDER BY created_at, slot", [repo, automation])]
