"""An automation's scheduled and fired runs queue in its issue's thread once the bot opened one, so
`@bot stop` there finds them and a mention there waits for them (one thread, one run at a time);
before the first run opened it they queue under the automation, and opening (or replacing) the
issue moves them into its thread, on SQLite and PostgreSQL."""
from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot import db as bot_db
from bot.automations import automation_issue, scheduled_job
from bot.automations.schedule import remember
from bot.service import queue, schedules, store
from bot.service.schedules import tick
from tests.entry_settings import current
from tests.spine.helpers import enqueue, minimal_spec

WEEKLY = ("automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n"
          "    agent: codex\n    prompt: Update the dependencies.\n")
MONDAY_6 = dt.datetime(2026, 12, 7, 6, 0, tzinfo=dt.UTC)


def _declared(issue: int | None = None):
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 11, 22, WEEKLY, ".github/bot.yml@abc1234")
    tick(db, MONDAY_6 - dt.timedelta(hours=1))
    if issue is not None:
        automation_issue.store(db, "o/r", "deps", issue)
    return db


def _conversations(db) -> list[str]:
    return [job["conversation"] for job in store.jobs(db)]


def test_a_slot_of_an_automation_with_an_issue_queues_in_that_issues_thread(backend):
    db = _declared(issue=5)
    tick(db, MONDAY_6)
    assert _conversations(db) == ["o/r#5"]


def test_a_slot_before_the_first_run_opened_the_issue_queues_under_the_automation(backend):
    db = _declared()
    tick(db, MONDAY_6)
    assert _conversations(db) == [scheduled_job.own_key("o/r", "deps")]


def test_opening_the_issue_moves_the_automations_open_runs_into_its_thread(backend):
    db = _declared()
    tick(db, MONDAY_6)
    tick(db, MONDAY_6 + dt.timedelta(days=7))
    mention = enqueue(db, "episode", "o/r#9", minimal_spec("o/r#9"))
    automation_issue.store(db, "o/r", "deps", 9)
    assert _conversations(db) == ["o/r#9", "o/r#9", "o/r#9"]
    assert store.jobs(db)[-1]["id"] == mention


def test_replacing_a_closed_issue_moves_the_runs_queued_in_the_old_one_but_not_its_mentions(backend):
    db = _declared(issue=5)
    mention = enqueue(db, "episode", "o/r#5", minimal_spec("o/r#5"))
    tick(db, MONDAY_6)
    automation_issue.store(db, "o/r", "deps", 8)
    assert {job["id"]: job["conversation"] for job in store.jobs(db)}[mention] == "o/r#5"
    assert _conversations(db).count("o/r#8") == 1


def test_a_finished_run_stays_where_it_ran(backend):
    db = _declared()
    tick(db, MONDAY_6)
    [job] = store.jobs(db)
    queue.finish(db, job["id"], "done")
    automation_issue.store(db, "o/r", "deps", 9)
    assert _conversations(db) == [scheduled_job.own_key("o/r", "deps")]


def test_a_mention_in_the_automations_issue_waits_for_its_scheduled_run(backend):
    db = _declared(issue=5)
    tick(db, MONDAY_6)
    enqueue(db, "episode", "o/r#5", minimal_spec("o/r#5"))
    running = queue.claim(db, "worker-1")
    assert running is not None and running.spec.automatic is not None
    assert queue.claim(db, "worker-2", busy=(running.id,)) is None


def test_a_scheduled_run_waits_for_a_mention_running_in_the_automations_issue(backend):
    db = _declared(issue=5)
    enqueue(db, "episode", "o/r#5", minimal_spec("o/r#5"))
    tick(db, MONDAY_6)
    running = queue.claim(db, "worker-1")
    assert running is not None and running.spec.automatic is None
    assert queue.claim(db, "worker-2", busy=(running.id,)) is None


def test_a_stop_in_the_automations_issue_flags_its_queued_run(backend):
    db = _declared(issue=5)
    tick(db, MONDAY_6)
    [job] = store.jobs(db)
    assert queue.request_stop(db, "o/r#5", "alice") == [job["id"]]


def test_a_fired_run_queues_in_the_automations_issue_too(backend):
    from bot.automations import fire
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 11, 22, "automations:\n  - {name: nightly, on: {fire: {}}, agent: codex, prompt: p}\n",
             ".github/bot.yml@abc1234")
    automation_issue.store(db, "o/r", "nightly", 4)
    where, automation = fire.target(db, "o/r", "nightly")
    fire.fire(db, where, automation, "k", "", schedules.queue, account_cap=0)
    assert _conversations(db) == ["o/r#4"]


SLUG = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True)


@settings(max_examples=30, deadline=None)
@given(SLUG, SLUG, st.integers(min_value=1, max_value=10**9))
def test_opening_an_issue_moves_only_its_own_automations_runs(name, other, number):
    assume(name != other)
    with tempfile.TemporaryDirectory() as folder:
        db = bot_db.connect(path=Path(folder) / "bot.db")
        spec = minimal_spec("o/r#1")
        for each in (name, other):
            store.write(db, lambda conn, each=each: store.enqueue_delivery(
                conn, delivery_id=scheduled_job.delivery_of("o/r", each, "2026-12-07T06:00Z"), event="schedule",
                action=None, kind="episode", conversation=scheduled_job.own_key("o/r", each), spec=spec))
        automation_issue.store(db, "o/r", name, number)
        assert sorted(_conversations(db)) == sorted([f"o/r#{number}", scheduled_job.own_key("o/r", other)])
        db.close()
