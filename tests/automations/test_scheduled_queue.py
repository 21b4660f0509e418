"""A claimed schedule slot queues the job that runs it, in the claim's own transaction: one job per
slot however many ticks or processes evaluate it, on SQLite and PostgreSQL."""
from __future__ import annotations

import datetime as dt
import threading

from bot import db as bot_db
from bot.automations import scheduled_job
from bot.automations.schedule import remember
from bot.intake.spec import JobSpec
from bot.service import store
from bot.service.schedules import tick
from tests.entry_settings import current

WEEKLY = ("automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n"
          "    agent: codex\n    prompt: Update the dependencies.\n")
MONDAY_6 = dt.datetime(2026, 12, 7, 6, 0, tzinfo=dt.UTC)


def _seen_before_the_slot():
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 11, 22, WEEKLY, ".github/bot.yml@abc1234")
    tick(db, MONDAY_6 - dt.timedelta(hours=1))
    return db


def test_two_ticks_of_one_slot_queue_one_job(backend):
    db = _seen_before_the_slot()
    tick(db, MONDAY_6)
    tick(db, MONDAY_6 + dt.timedelta(seconds=30))
    assert len(store.jobs(db)) == 1


def test_the_queued_job_names_the_automation_and_its_slot(backend):
    db = _seen_before_the_slot()
    tick(db, MONDAY_6)
    job = store.jobs(db)[0]
    spec = JobSpec.from_json(job["spec"])
    assert job["kind"] == "episode" and job["status"] == "queued"
    assert (spec.repo, spec.repo_id, spec.installation_id) == ("o/r", 11, 22)
    assert scheduled_job.slot_of(spec) == ("deps", "2026-12-07T06:00Z")


def test_the_claim_records_the_job_it_queued(backend):
    db = _seen_before_the_slot()
    tick(db, MONDAY_6)
    row = db.query("SELECT job_id FROM automation_runs WHERE slot = ?", ["2026-12-07T06:00Z"])[0]
    assert row["job_id"] == store.jobs(db)[0]["id"]


def test_two_connections_ticking_one_slot_queue_one_job(backend):
    _seen_before_the_slot()
    barrier = threading.Barrier(3)

    def run() -> None:
        db = bot_db.connect(settings=current())
        barrier.wait()
        tick(db, MONDAY_6)
        db.close()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.jobs(bot_db.connect(settings=current()))) == 1


def test_a_repository_read_without_an_installation_queues_nothing(backend):
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 11, None, WEEKLY, ".github/bot.yml@abc1234")
    tick(db, MONDAY_6 - dt.timedelta(hours=1))
    assert tick(db, MONDAY_6) == [] and store.jobs(db) == []


def test_a_scheduled_run_is_asked_the_declared_prompt_and_which_slot_it_runs():
    from bot.automations import request
    from bot.workspace.repo_config import parse

    automation = parse(WEEKLY).automations[0]
    text = request.for_slot(automation, "2026-12-07T06:00Z")
    assert text.endswith("Update the dependencies.")
    assert "the scheduled automation `deps`" in text and "slot 2026-12-07T06:00Z (UTC)" in text
