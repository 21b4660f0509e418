"""The service evaluates the schedules on its own: the worker pool's ticker ticks every
BOT_SCHEDULE_INTERVAL seconds, and the slot it claims runs in the automation's issue."""
from __future__ import annotations

import asyncio
import datetime as dt
import os
import sqlite3

import pytest

from bot.automations import scheduled_job
from bot.automations.schedule import remember
from bot.config import Settings
from bot.intake.spec import JobSpec
from bot.service import schedules, store
from bot.service.worker import WorkerPool
from tests.entry_settings import current, database
from tests.spine.helpers import configure_app
from tests.spine.service import REPO, make_remote, seeded_github

WEEKLY = ("automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n"
          "    agent: codex\n    prompt: Update the dependencies.\n")
EVERY_MINUTE = WEEKLY.replace("0 6 * * 1", "* * * * *")
MONDAY_6 = dt.datetime(2026, 12, 7, 6, 0, tzinfo=dt.UTC)


def _clock(*moments: dt.datetime):
    """Each call the next moment, then the last one for ever."""
    left = list(moments)
    return lambda: left.pop(0) if len(left) > 1 else left[0]


async def test_the_ticker_evaluates_the_schedules_again_after_each_interval(backend):
    db = database()
    remember(db, "o/r", 1, 1, WEEKLY, ".github/bot.yml@abc1234")
    queued = asyncio.Event()
    running = schedules.Ticker(db, 0.01, queued.set, now=_clock(MONDAY_6 - dt.timedelta(hours=1), MONDAY_6)).start()
    try:
        await asyncio.wait_for(queued.wait(), 30)
    finally:
        await running.stop()
    assert [spec_slot(job) for job in store.jobs(db)] == [("deps", "2026-12-07T06:00Z")]


async def test_a_failing_tick_does_not_end_the_ticker(backend):
    db = database()
    remember(db, "o/r", 1, 1, WEEKLY, ".github/bot.yml@abc1234")
    queued = asyncio.Event()
    moments = iter([None, MONDAY_6 - dt.timedelta(hours=1)])

    def now() -> dt.datetime:
        moment = next(moments, MONDAY_6)
        if moment is None:
            raise RuntimeError("the first tick fails")
        return moment

    running = schedules.Ticker(db, 0.01, queued.set, now=now).start()
    try:
        await asyncio.wait_for(queued.wait(), 30)
    finally:
        await running.stop()
    assert len(store.jobs(db)) == 1


def test_no_interval_means_no_ticker():
    assert schedules.Ticker(database(), 0, lambda: None).start().running is False


def spec_slot(job) -> tuple[str, str]:
    return scheduled_job.slot_of(JobSpec.from_json(job["spec"]))


@pytest.fixture
def gh(monkeypatch, tmp_path):
    fake = seeded_github()
    configure_app(monkeypatch, api_url=fake.url)
    monkeypatch.setenv("BOT_GIT_BASE_URL", f"file://{make_remote(tmp_path)}")
    monkeypatch.setenv("BOT_SCHEDULE_INTERVAL", "0.05")
    yield fake
    fake.stop()


async def test_a_worker_pool_runs_a_due_slot_in_the_automations_issue(gh):
    db = store.connect(settings=current())
    remember(db, REPO, 1, 1, EVERY_MINUTE, ".github/bot.yml@abc1234")  # due at once: first seen this minute
    pool = WorkerPool(db, Settings.load(os.environ), size=1)
    await pool.start()
    try:
        await asyncio.to_thread(gh.wait_for, lambda: _final_answer(gh), 60)
    finally:
        await pool.stop(grace_s=5)
    assert [i["title"] for i in gh.issues(REPO).values() if i["title"].startswith("Automation")] == ["Automation: deps"]


def _final_answer(gh) -> list[dict]:
    issues = [n for n, i in gh.issues(REPO).items() if i["title"] == "Automation: deps"]
    return [c for n in issues for c in gh.comments(REPO, n)
            if "bot:job" in (c["body"] or "") and "is on it" not in (c["body"] or "")]


async def test_the_services_ticker_ticks_off_the_event_loop_on_a_connection_of_its_own(backend, monkeypatch):
    import threading

    db = database()
    remember(db, "o/r", 1, 1, WEEKLY, ".github/bot.yml@abc1234")
    queued, opened, ticked_on = asyncio.Event(), [], []
    real_tick = schedules.tick

    def opener():
        opened.append(database())
        return opened[-1]

    def tick(conn, at):
        ticked_on.append((threading.current_thread() is threading.main_thread(), conn is db))
        return real_tick(conn, at)

    monkeypatch.setattr(schedules, "tick", tick)
    running = schedules.Ticker(db, 0.01, queued.set, now=lambda: MONDAY_6, opener=opener).start()
    try:
        await asyncio.wait_for(queued.wait(), 30)
    finally:
        await running.stop()
    assert len(opened) == 1 and set(ticked_on) == {(False, False)}
    assert [spec_slot(job) for job in store.jobs(db)] == [("deps", "2026-12-07T06:00Z")]


async def test_a_stopped_ticker_closes_its_own_connection(backend):
    queued, opened = asyncio.Event(), []

    def opener():
        opened.append(database())
        return opened[-1]

    db = database()
    remember(db, "o/r", 1, 1, WEEKLY, ".github/bot.yml@abc1234")
    running = schedules.Ticker(db, 0.01, queued.set, now=lambda: MONDAY_6, opener=opener).start()
    await asyncio.wait_for(queued.wait(), 30)
    await running.stop()
    assert _closed(opened[0])


def _closed(db) -> bool:
    """Asked of the driver: the bot's PostgreSQL connection would reopen itself on a query."""
    if db.dialect.name == "postgresql":
        return bool(db.conn.closed)
    try:
        db.conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False
