"""One live job per trigger, enforced by the database (a partial unique index on `trigger_key`),
so two intake replicas racing on the same redelivered comment store one job; on each backend."""
from __future__ import annotations

import threading
import time
import uuid

import pytest

from bot.db import Database
from bot.service import store
from tests.entry_settings import current
from tests.spine.helpers import minimal_spec

CONVERSATION = "octo/repo#1"


@pytest.fixture(autouse=True)
def on_each_backend(backend):
    yield backend


def enqueue(conn: Database, trigger: str) -> int | None:
    spec = {**minimal_spec(CONVERSATION), "trigger_key": trigger}
    return store.enqueue_delivery(conn, delivery_id=uuid.uuid4().hex, event="issue_comment", action="created",
                                  kind="episode", conversation=CONVERSATION, spec=spec)


def raw_insert(db: Database, trigger: str | None, status: str = "queued") -> None:
    db.execute("INSERT INTO jobs (delivery_id, trigger_key, kind, conversation, spec, status, created_at) "
               "VALUES (?, ?, 'episode', ?, '{}', ?, ?)", [uuid.uuid4().hex, trigger, CONVERSATION, status,
                                                          time.time()])


def test_the_database_refuses_a_second_live_job_for_one_trigger():
    db = store.connect(settings=current())
    raw_insert(db, "comment:7")
    with pytest.raises(Exception, match="(?i)unique"):
        raw_insert(db, "comment:7")


def test_jobs_without_a_trigger_or_failed_ones_do_not_count_as_duplicates():
    db = store.connect(settings=current())
    raw_insert(db, None), raw_insert(db, None)
    raw_insert(db, "comment:8", status="failed"), raw_insert(db, "comment:8")
    assert len(store.jobs(db)) == 4


def test_two_concurrent_inserts_of_one_trigger_store_one_job(backend):
    """The first replica's insert is not committed yet when the second one's runs: one job."""
    first = store.connect(settings=current())
    first.execute(first.dialect.begin)
    assert enqueue(first, "comment:9") is not None
    results: list[int | None] = []
    second = threading.Thread(target=lambda: results.append(store.write(store.connect(settings=current()), lambda conn: enqueue(
        conn, "comment:9"))))
    second.start()
    _until_second_waits_or_ends(second, backend)
    first.execute("COMMIT")
    second.join(timeout=120)
    assert results == [None]
    assert [row["trigger_key"] for row in store.jobs(store.connect(settings=current()))] == ["comment:9"]


def _until_second_waits_or_ends(second: threading.Thread, backend: str) -> None:
    """Without the index PostgreSQL's second insert ends at once; with it, it waits on the first's
    row. SQLite's second writer waits for the first's write lock (its busy timeout)."""
    if backend != "postgresql":
        return
    watcher = store.connect(settings=current())
    for _ in range(2400):
        waiting = watcher.query("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                "AND datname = current_database()")[0]["n"]
        if waiting or not second.is_alive():
            return
        time.sleep(0.05)
    raise AssertionError("the second insert neither waited nor ended")


def test_a_database_holding_duplicates_migrates_keeping_the_oldest_live():
    db = store.connect(settings=current())
    db.execute("DROP INDEX jobs_one_live_per_trigger")
    db.execute("DELETE FROM schema_migrations WHERE version = 7")
    for _ in range(3):
        raw_insert(db, "comment:10")
    from bot.db.migrations import migrate
    assert migrate(db) == [7]
    rows = store.jobs(db)
    assert rows[0]["trigger_key"] == "comment:10"
    assert all(row["trigger_key"] != "comment:10" and "comment:10" in row["trigger_key"] for row in rows[1:])
    assert enqueue(db, "comment:10") is None
