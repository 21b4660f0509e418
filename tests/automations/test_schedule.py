"""Schedules: the latest slot at or before the tick is due once per automation; a schedule first
seen after its slot waits for the next; two connections ticking one slot claim it once."""
from __future__ import annotations

import datetime as dt
import threading

from bot import db as bot_db
from bot.automations.schedule import remember
from bot.service.schedules import tick
from tests.entry_settings import current

WEEKLY = ("automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n"
          "    agent: codex\n    prompt: Update the dependencies.\n")
MONDAY_6 = dt.datetime(2026, 12, 7, 6, 0, tzinfo=dt.UTC)


def _db_with(text: str = WEEKLY):
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 1, 1, text, ".github/bot.yml@abc1234")
    return db


def test_a_schedule_seen_before_its_slot_runs_the_slot_once(backend):
    db = _db_with()
    assert tick(db, MONDAY_6 - dt.timedelta(hours=1)) == []  # first seen: the previous Monday's slot waits
    assert tick(db, MONDAY_6) == [("o/r", "deps", "2026-12-07T06:00Z")]
    assert tick(db, MONDAY_6 + dt.timedelta(minutes=1)) == []


def test_a_schedule_declared_after_its_slot_waits_for_the_next(backend):
    db = _db_with()
    assert tick(db, MONDAY_6 + dt.timedelta(hours=2)) == []
    assert tick(db, MONDAY_6 + dt.timedelta(days=7)) == [("o/r", "deps", "2026-12-14T06:00Z")]


def test_slots_missed_while_down_run_once_the_latest(backend):
    db = _db_with()
    tick(db, MONDAY_6 - dt.timedelta(hours=1))
    assert tick(db, MONDAY_6 + dt.timedelta(days=22)) == [("o/r", "deps", "2026-12-28T06:00Z")]
    assert tick(db, MONDAY_6 + dt.timedelta(days=22, minutes=5)) == []


def test_an_automation_without_a_schedule_is_never_due(backend):
    db = _db_with("automations:\n  - {name: t, on: {issues: {}}, agent: codex, prompt: p}\n")
    assert tick(db, MONDAY_6 - dt.timedelta(days=1)) == [] and tick(db, MONDAY_6) == []


def test_two_connections_ticking_one_slot_run_it_once(backend):
    _db_with()
    tick(bot_db.connect(settings=current()), MONDAY_6 - dt.timedelta(hours=1))
    found: list[list] = []
    barrier = threading.Barrier(3)

    def run() -> None:
        db = bot_db.connect(settings=current())
        barrier.wait()
        found.append(tick(db, MONDAY_6))
        db.close()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(len(each) for each in found) == [0, 0, 1]


def test_the_tick_command_prints_the_slots_it_claimed(backend, capsys):
    from bot.cli import automations

    _db_with()
    assert automations.main(["tick", "--at", "2026-12-07T05:00Z"]) == 0
    assert automations.main(["tick", "--at", "2026-12-07T06:00Z"]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == ["o/r deps 2026-12-07T06:00Z", "1 slot(s) due"]


def test_a_changed_file_is_evaluated_anew_at_the_next_tick(backend):
    db = _db_with()
    assert tick(db, MONDAY_6 - dt.timedelta(hours=1)) == []
    remember(db, "o/r", 1, 1, WEEKLY.replace("0 6 * * 1", "*/5 * * * *"), ".github/bot.yml@def5678")
    assert tick(db, MONDAY_6 - dt.timedelta(minutes=55)) == [("o/r", "deps", "2026-12-07T05:05Z")]


def test_a_file_made_invalid_is_refused_and_the_last_valid_one_still_runs(backend):
    db = _db_with(WEEKLY.replace("0 6 * * 1", "*/5 * * * *"))
    assert tick(db, MONDAY_6) == [("o/r", "deps", "2026-12-07T06:00Z")]
    why = remember(db, "o/r", 1, 1, WEEKLY + "    colour: red\n", ".github/bot.yml@def5678")
    assert why is not None and "line 7, key `automations.0.colour`" in why
    assert tick(db, MONDAY_6 + dt.timedelta(minutes=5)) == [("o/r", "deps", "2026-12-07T06:05Z")]
