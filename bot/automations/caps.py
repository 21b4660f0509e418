"""Caps on automations' runs, so that no one can amplify cost by causing events: per automation
`max_runs_per_day` (in `.github/bot.yml`, default 50, per UTC day) and `max_usd_per_day` (default 10:
its model cost today, the relay's ledger, bot/relay/budgets.py, which also refuses the calls of a run
that reaches it), and per account that caused the event BOT_AUTOMATION_ACCOUNT_RUNS_PER_HOUR runs
over the last hour across every repository (default 20; 0: none). Only runs count (`automation_runs`
rows of kind run, bot/automations/runs.py).

    admitted = admit(conn, "o/r", automation, slot, job_id, "alice", account_cap=20)   # in the claim's transaction
    admitted.runs / admitted.refused (why) / neither (the slot had its row: a redelivery)
    await note_once(db, thread, "o/r", automation, why)   # the one visible note a day in that thread

A run over a cap is recorded (its slot's row, kind refused, with why) and not run; the first one
a day per automation and thread leaves a short note there, the rest are silent (logged). The count
and the row are written in the claim's transaction, and the caps are exact however many claims
race: on SQLite a write transaction excludes every other; on PostgreSQL the claim first takes, for
its transaction, the lock of its automation and then that of its account (advisory locks named by
a digest, always in that order, so two claims never wait on each other in a circle), and counts
only then: read committed, each count sees every claim committed before it. A lock rather than a
counter row, so the rows stay the one truth (a run skipped later stops counting) and no table
grows with the accounts that ever caused an event.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
from dataclasses import dataclass

from bot.automations.runs import REFUSED, RUN, insert_row
from bot.db import Database
from bot.github.thread import GitHubThread
from bot.record import render
from bot.relay.budgets import Ledger, Scope, automation_key
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.automations.caps")
HOUR = 3_600
NOTE = "note"  # the kind of the row that says a thread was told today


@dataclass(frozen=True)
class Admission:
    runs: bool = False
    refused: str | None = None  # why, when a cap refused it now


def admit(conn: Database, repo: str, automation: Automation, slot: str, job_id: int | None, account: str | None,
          account_cap: int, now: float | None = None) -> Admission:
    """Inserts the slot's row: a run when no cap is reached, else refused with why. A slot that had
    its row runs only for the job that claimed it (its retry)."""
    rows = conn.query("SELECT job_id, kind FROM automation_runs WHERE repo = ? AND automation = ? AND slot = ?",
                      [repo, automation.name, slot])
    if rows:
        return Admission(runs=job_id is not None and rows[0]["job_id"] == job_id and (rows[0]["kind"] or RUN) == RUN)
    now = time.time() if now is None else now
    _wait_for_racing_claims(conn, repo, automation.name, account if account_cap > 0 else None)
    why = over(conn, repo, automation, account, account_cap, now)
    kind = RUN if why is None else REFUSED
    if not insert_row(conn, repo, automation.name, slot, job_id, kind, account, why, at=now):
        return Admission()  # another claim inserted it meanwhile
    return Admission(runs=why is None, refused=why)


def _wait_for_racing_claims(conn: Database, repo: str, name: str, account: str | None) -> None:
    """Holds, until the claim's transaction ends, the locks of the automation and of the account
    (PostgreSQL; SQLite's write transaction holds everything already)."""
    for key in (f"automation\0{repo}\0{name}", *((f"account\0{account}",) if account else ())):
        statement = conn.dialect.transaction_lock(_lock_key(key))
        if statement:
            conn.execute(statement)


def _lock_key(name: str) -> int:
    """A signed 64-bit number for `name` (two names sharing one only wait on each other)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big", signed=True)


def over(db: Database, repo: str, automation: Automation, account: str | None, account_cap: int,
         now: float) -> str | None:
    """Why one more run now would be over a cap, or None."""
    today = db.query("SELECT COUNT(*) AS n FROM automation_runs WHERE repo = ? AND automation = ? "
                     "AND COALESCE(kind, 'run') = 'run' AND created_at >= ?",
                     [repo, automation.name, day_start(now)])[0]["n"]
    if today >= automation.max_runs_per_day:
        return f"it has run {today} times today (UTC), its cap (`max_runs_per_day: {automation.max_runs_per_day}`)"
    if (why := over_money(db, repo, automation, now)) is not None:
        return why
    if account and account_cap > 0:
        hour = db.query("SELECT COUNT(*) AS n FROM automation_runs WHERE account = ? "
                        "AND COALESCE(kind, 'run') = 'run' AND created_at >= ?", [account, now - HOUR])[0]["n"]
        if hour >= account_cap:
            return (f"the account that caused this event caused {hour} automation runs in the last hour, "
                    f"the cap of one account")
    return None


def over_money(db: Database, repo: str, automation: Automation, now: float | None = None) -> str | None:
    """Why the automation's model cost today (UTC) leaves no room for a run, or None."""
    day = dt.datetime.fromtimestamp(time.time() if now is None else now, dt.UTC)
    spent = Ledger(db).spent(Scope(automation=automation_key(repo, automation.name)), now=day)["automation_day"].usd
    if spent < automation.max_usd_per_day:
        return None
    return (f"its model cost today (UTC) is ${spent:.2f}, its cap (`max_usd_per_day: "
            f"{automation.max_usd_per_day:g}`)")


def day_start(now: float) -> float:
    day = dt.datetime.fromtimestamp(now, dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day.timestamp()


def day_of(now: float) -> str:
    return dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%d")


async def note_once(db: Database, thread: GitHubThread, repo: str, automation: Automation, why: str,
                    now: float | None = None) -> bool:
    """A short note in `thread` that the automation did not run and why, once per UTC day per
    automation and thread (True when posted now)."""
    day = day_of(time.time() if now is None else now)
    slot = f"note:{thread.number}:{day}"
    if not insert_row(db, repo, automation.name, slot, None, NOTE, None, why):
        log.info("automation %s of %s not run (%s); #%d was told today", automation.name, repo, why, thread.number)
        return False
    marker = f"<!-- bot:automation-note {automation.name} {day} -->"
    text = render.outgoing(f"⏸️ The automation {render.code(automation.name)} did not run here: {why}. "
                           f"Until tomorrow (UTC) this is the only note about it in this thread.\n{marker}")
    await thread.create_comment(render.required(text), marker=marker, look_first=True)
    return True
