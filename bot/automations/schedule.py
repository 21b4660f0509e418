"""Schedules: which slot of each scheduled automation is due as of a time, claimed once, its job
queued in the same transaction.

    due = tick(db, at, queue_job)   # [(repo, automation, slot)] claimed by this call, at most one per automation
    automation = declared(db, "o/r", "deps")   # as last stored, for the job that runs a slot
    when = next_run(automation, now)           # its next slot after `now` (the settings page), or None

The repositories are those whose default branch's `.github/bot.yml` the bot has read and stored
(`remember`, called whenever the worker reads it: for an event, after a push that changed it, on
install; an invalid file is never stored, so the last valid one stays in force). Per automation only
the latest slot at or before `at` is due (slots missed while the service was down run once, not once
each), and only when that slot is not before the minute the schedule was first seen: a schedule
declared after its slot has passed waits for its next one (as does one whose issue was resumed after
a pause; while the automation's issue is paused its slots are not claimed:
bot/automations/pauses.py). The claim is the `automation_runs` row (bot/automations/runs.py): two
processes ticking the same slot at once run it once. `queue_job(conn, spec)` queues the slot's job
(bot/automations/scheduled_job.py) inside the claim's transaction and returns its id
(bot/service/schedules.py, which also ticks every BOT_SCHEDULE_INTERVAL in each worker pool); the
worker runs it in the automation's own issue (bot/automations/scheduled_run.py).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from bot import cron
from bot.automations import pauses, runs, scheduled_job
from bot.db import Database
from bot.intake.spec import JobSpec
from bot.workspace.repo_config import CONFIG_MAX_BYTES, ConfigError, parse
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.automations.schedule")
# queues the slot's job inside the claim's transaction and returns its id (bot/service/schedules.py)
QueueJob = Callable[[Database, JobSpec], int]
PARSED_KEPT = 4_096  # repositories' parsed automations a process keeps between ticks (by the text's digest)
_PARSED: OrderedDict[bytes, tuple[Automation, ...] | str] = OrderedDict()
_PARSED_LOCK = threading.Lock()


def remember(db: Database, repo: str, repo_id: int | None, installation_id: int | None, text: str,
             source: str) -> str | None:
    """The default branch's `.github/bot.yml` as last read (bounded: a larger one was never read),
    when it is valid; an invalid one is refused (why is returned) and the last valid one stays in
    force, whoever read it (an event, a push, an install, the settings page)."""
    parsed = _parsed(text[:CONFIG_MAX_BYTES], source)
    if isinstance(parsed, str):
        log.info("%s of %s not stored, the last valid one stays in force: %s", source, repo, parsed)
        return parsed
    db.execute("INSERT INTO automation_configs (repo, repo_id, installation_id, text, source, read_at) "
               "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (repo) DO UPDATE SET repo_id = excluded.repo_id, "
               "installation_id = excluded.installation_id, text = excluded.text, source = excluded.source, "
               "read_at = excluded.read_at", [repo, repo_id, installation_id, text[:CONFIG_MAX_BYTES], source,
                                              time.time()])
    return None


def last_valid(db: Database, repo: str) -> tuple[Automation, ...]:
    """The automations of the last valid `.github/bot.yml` stored for the repository (none stored: none)."""
    rows = db.query("SELECT text, source FROM automation_configs WHERE repo = ?", [repo])
    parsed = _parsed(rows[0]["text"], rows[0]["source"] or "") if rows else ()
    return () if isinstance(parsed, str) else parsed


def forget(db: Database, repo: str) -> None:
    """The default branch no longer has a `.github/bot.yml`: no automation of the repository runs."""
    db.execute("DELETE FROM automation_configs WHERE repo = ?", [repo])


def stored_source(db: Database, repo: str) -> str | None:
    """Where the stored (last valid) file came from (`.github/bot.yml@abc1234`), or None."""
    rows = db.query("SELECT source FROM automation_configs WHERE repo = ?", [repo])
    return str(rows[0]["source"] or "") if rows else None


def tick(db: Database, at: dt.datetime, queue_job: QueueJob) -> list[tuple[str, str, str]]:
    at = cron.utc(at)
    claimed = []
    seen = _all_seen(db)
    for row in db.query("SELECT repo, repo_id, installation_id, text, source FROM automation_configs ORDER BY repo"):
        for automation in _automations(row):
            slot = _due(db, row["repo"], automation, at, seen.get((row["repo"], automation.name)))
            if slot is not None and not _paused(db, row["repo"], automation, slot) \
                    and _claim_and_queue(db, row, automation, slot, queue_job):
                claimed.append((row["repo"], automation.name, slot))
    return claimed


def _automations(row: dict[str, Any]) -> tuple[Automation, ...]:
    if row["installation_id"] is None:  # nothing could act for it
        log.warning("automations of %s not evaluated: no installation is known for it", row["repo"])
        return ()
    parsed = _parsed(row["text"], row["source"] or "")
    if isinstance(parsed, str):  # stored before `remember` refused invalid files: nothing runs
        log.warning("automations of %s not evaluated: %s", row["repo"], parsed)
        return ()
    return parsed


def _parsed(text: str, source: str) -> tuple[Automation, ...] | str:
    """The file's automations, or why it is invalid: parsed once per process while the text is
    unchanged (parsing every repository's YAML was most of a tick's cost, bench/automations.py)."""
    key = hashlib.sha256(f"{source}\0{text}".encode()).digest()
    with _PARSED_LOCK:
        if key in _PARSED:
            _PARSED.move_to_end(key)
            return _PARSED[key]
    try:
        found: tuple[Automation, ...] | str = parse(text, source=source).automations
    except ConfigError as exc:
        found = str(exc)
    with _PARSED_LOCK:
        _PARSED[key] = found
        while len(_PARSED) > PARSED_KEPT:
            _PARSED.popitem(last=False)
    return found


def forget_parsed() -> None:
    """Drop the kept parses: the next tick parses every file, as a freshly started process does."""
    with _PARSED_LOCK:
        _PARSED.clear()


def _paused(db: Database, repo: str, automation: Automation, slot: str) -> bool:
    """The automation's issue is paused (bot/automations/pauses.py): its slot is not claimed."""
    by = pauses.automation_paused_by(db, repo, automation.name)
    if by is not None:
        log.info("automation %s of %s: its issue was paused by @%s; slot %s not run", automation.name, repo, by, slot)
    return by is not None


def _claim_and_queue(db: Database, row: dict[str, Any], automation: Automation, slot: str,
                     queue_job: QueueJob) -> bool:
    spec = scheduled_job.spec_for(row["repo"], row["repo_id"], row["installation_id"], automation, slot)
    job_id = runs.claim_and_queue(db, row["repo"], automation.name, slot, lambda conn: queue_job(conn, spec))
    if job_id is not None:
        log.info("automation %s of %s: slot %s claimed, job %s queued", automation.name, row["repo"], slot, job_id)
    return job_id is not None


def latest_slot(automation: Automation, at: dt.datetime) -> dt.datetime | None:
    slots = [slot for text in automation.on.schedule or () if (slot := cron.parse(text).previous(at))]
    return max(slots, default=None)


def next_run(automation: Automation, now: dt.datetime) -> dt.datetime | None:
    """The first slot of any of its cron lines strictly after `now` (what the settings page shows)."""
    slots = [slot for text in automation.on.schedule or () if (slot := cron.parse(text).next_after(now))]
    return min(slots, default=None)


def _due(db: Database, repo: str, automation: Automation, at: dt.datetime,
         known: tuple[str, float] | None) -> str | None:
    """`known`: (cron lines, first seen) as stored when the tick began; written only when new or changed."""
    if not automation.on.schedule:
        return None
    if known is not None and known[0] == "\n".join(automation.on.schedule):
        seen = dt.datetime.fromtimestamp(known[1], dt.UTC)
    else:
        seen = _first_seen(db, repo, automation, at)
    slot = latest_slot(automation, at)
    if slot is None or slot < seen.replace(second=0, microsecond=0):
        return None
    return slot.strftime("%Y-%m-%dT%H:%MZ")


def _all_seen(db: Database) -> dict[tuple[str, str], tuple[str, float]]:
    """Every stored schedule's cron lines and when they were first seen, read once per tick."""
    return {(row["repo"], row["automation"]): (row["crons"], float(row["seen_at"]))
            for row in db.query("SELECT repo, automation, crons, seen_at FROM automation_schedules")}


def _first_seen(db: Database, repo: str, automation: Automation, at: dt.datetime) -> dt.datetime:
    """When this schedule (its cron lines) was first seen; a changed schedule is seen anew."""
    crons = "\n".join(automation.on.schedule or ())
    with db.transaction() as conn:
        conn.execute("INSERT INTO automation_schedules (repo, automation, crons, seen_at) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT DO NOTHING", [repo, automation.name, crons, at.timestamp()])
        conn.execute("UPDATE automation_schedules SET crons = ?, seen_at = ? WHERE repo = ? AND automation = ? "
                     "AND crons != ?", [crons, at.timestamp(), repo, automation.name, crons])
        row = conn.query("SELECT seen_at FROM automation_schedules WHERE repo = ? AND automation = ?",
                         [repo, automation.name])[0]
    return dt.datetime.fromtimestamp(row["seen_at"], dt.UTC)


def declared(db: Database, repo: str, name: str) -> Automation | None:
    """The automation `name` of the repository's `.github/bot.yml` as last stored, or None when it is
    gone (or the file no longer parses): a job queued for it then runs nothing."""
    rows = db.query("SELECT text, source FROM automation_configs WHERE repo = ?", [repo])
    try:
        found = parse(rows[0]["text"], source=rows[0]["source"] or "").automations if rows else ()
    except ConfigError:
        return None
    return next((automation for automation in found if automation.name == name), None)
