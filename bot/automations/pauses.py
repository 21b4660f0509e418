"""`@bot pause` and `@bot resume`: a thread (a repository's issue or pull request) where nothing runs
without a mention. While it is paused no automation runs on its events, no push-triggered review
runs on it, and, when it is an automation's issue, no scheduled run of that automation: each is
skipped before it claims its slot (bot/automations/runs.py), so what happens during the pause counts
toward nothing. A `@bot` mention still runs. One row per paused thread in `thread_pauses`
(migration 13); the commands that write it pass the run-time permission check first
(bot/service/commands.py).

    pause(db, "o/r", 7, "alice")        # False: it was paused already
    resume(db, "o/r", 7)                # False: it was not paused
    paused_by(db, "o/r", 7)             # who paused it, or None
    paused(db, "o/r", 7)                # Pause(by, at), or None (`@bot status` says it)
    why = holds(db, spec)               # why a job that runs without a mention waits out a pause, or None
    ends(spec)                          # a run of the thread that a pause ends when it is under way

A pause also ends what it holds back that is already under way in the thread (bot/service/
commands.py): an automation's run there, its push-triggered review, and in an automation's issue
that automation's scheduled, fired or alert's run (queued in that issue's thread). Each is stopped as
`@bot stop` stops it, its comment naming who paused. A queued one is skipped when a worker claims it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from bot.automations import runs, scheduled_job
from bot.db import Database
from bot.intake import automation_event
from bot.intake.spec import JobSpec

PUSH_REVIEW = "synchronize"  # the push-triggered review's trigger (bot/trigger_table.py)
HELD = frozenset({automation_event.KIND, scheduled_job.KIND, PUSH_REVIEW})


@dataclass(frozen=True)
class Pause:
    by: str
    at: float  # when, in seconds since the epoch


def pause(db: Database, repo: str, number: int, by: str, at: float | None = None) -> bool:
    """True when the thread is paused now, False when it was already."""
    return bool(db.execute(
        "INSERT INTO thread_pauses (repo, number, paused_by, paused_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [repo, number, by, time.time() if at is None else at]).rowcount)


def resume(db: Database, repo: str, number: int, at: float | None = None) -> bool:
    """True when the thread was paused. A schedule whose automation's issue it is waits for its first
    slot after `at` (default now), as a schedule first seen then would: a slot that passed during
    the pause does not run late."""
    with db.transaction() as conn:
        if not conn.execute("DELETE FROM thread_pauses WHERE repo = ? AND number = ?", [repo, number]).rowcount:
            return False
        conn.execute("UPDATE automation_schedules SET seen_at = ? WHERE repo = ? AND automation IN "
                     "(SELECT automation FROM automation_issues WHERE repo = ? AND number = ?)",
                     [time.time() if at is None else at, repo, repo, number])
    return True


def paused_by(db: Database, repo: str, number: int) -> str | None:
    rows = db.query("SELECT paused_by FROM thread_pauses WHERE repo = ? AND number = ?", [repo, number])
    return str(rows[0]["paused_by"]) if rows else None


def paused(db: Database, repo: str, number: int) -> Pause | None:
    rows = db.query("SELECT paused_by, paused_at FROM thread_pauses WHERE repo = ? AND number = ?", [repo, number])
    return Pause(str(rows[0]["paused_by"]), float(rows[0]["paused_at"])) if rows else None


def automation_paused_by(db: Database, repo: str, name: str) -> str | None:
    """Who paused the automation's issue (its scheduled runs), or None."""
    rows = db.query("SELECT p.paused_by FROM thread_pauses p JOIN automation_issues i "
                    "ON p.repo = i.repo AND p.number = i.number WHERE i.repo = ? AND i.automation = ?", [repo, name])
    return str(rows[0]["paused_by"]) if rows else None


def holds(db: Database, spec: JobSpec) -> str | None:
    """Why the job waits out a pause and does not run (for the log), or None: only an automation's
    run and a push-triggered review are held, never what a person asked (a mention, a label). A
    claimed slot held in an automation's issue (a scheduled, fired or alert's run) is recorded as
    skipped, with why: it counts toward nothing."""
    automatic = spec.automatic
    if automatic is None or automatic.kind not in HELD:
        return None
    if automatic.kind == scheduled_job.KIND:
        name, slot = scheduled_job.slot_of(spec)
        if not (by := automation_paused_by(db, spec.repo, name)):
            return None
        runs.outcome(db, spec.repo, name, slot, f"its issue was paused by @{by}")  # it counts toward nothing
        return f"the issue of automation {name} was paused by @{by}: slot {slot} not run"
    by = paused_by(db, spec.repo, spec.number)
    return f"{spec.repo}#{spec.number} was paused by @{by}: the {automatic.kind} run is skipped" if by else None


def ends(spec: JobSpec) -> bool:
    """A job of the paused thread that the pause ends when it is under way: what it holds back."""
    return spec.automatic is not None and spec.automatic.kind in HELD
