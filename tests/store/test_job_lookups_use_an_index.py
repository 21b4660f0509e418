"""Every lookup of `jobs` by the object a delivery is about (`trigger_key`) or by its delivery id is
served by an index on each backend, and the schema holds no index those lookups do without: each
index on `jobs` costs every delivery's insert a page written, and one keyed by the random delivery
id a page of its own. Migration 20 dropped `jobs_by_trigger` (the partial unique
`jobs_one_live_per_trigger` serves those lookups); migration 21 indexes the delivery id of jobs
without a trigger only (tests/store/test_delivery_dedupe.py says why that is enough)."""
from __future__ import annotations

import re
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot import db as bot_db
from bot.db import Database, migrations
from bot.db.dialect import SQLITE
from bot.service import store
from bot.web import review_push
from tests.entry_settings import current

CONVERSATION = "octo/repo#3"
TRIGGER = "issue_comment.created:comment:4242"


def _enqueue(conn: Database) -> object:
    spec = {"repo": "octo/repo", "number": 3, "author": "alice", "trigger_key": TRIGGER}
    return store.enqueue_delivery(conn, delivery_id="d-lookup", event="issue_comment", action="created",
                                  kind="episode", conversation=CONVERSATION, spec=spec)


def _enqueue_without_a_trigger(conn: Database) -> object:
    spec = {"repo": "octo/repo", "number": 3, "author": "alice"}
    return store.enqueue_delivery(conn, delivery_id="schedule octo/repo nightly 2026-12-08T00:00", event="schedule",
                                  action=None, kind="episode", conversation=CONVERSATION, spec=spec)


def _seen(conn: Database) -> object:
    return review_push._seen(conn, "d-lookup", TRIGGER)


LOOKUPS: dict[str, Callable[[Database], object]] = {
    "store.enqueue_delivery": _enqueue, "store.enqueue_delivery without a trigger": _enqueue_without_a_trigger,
    "review_push._seen": _seen}


def _statements(work: Callable[[Database], object]) -> list[str]:
    """The statements `work` runs that read jobs by trigger or delivery, with their values in
    place (SQLite's expanded SQL), taken on a database of their own."""
    with tempfile.TemporaryDirectory() as tmp:
        db = bot_db.connect(path=Path(tmp) / "trace.db")
        ran: list[str] = []
        db.conn.set_trace_callback(ran.append)
        work(db)
        db.conn.set_trace_callback(None)
        db.conn.close()
    return [sql for sql in ran if re.search(r"FROM jobs WHERE .*(trigger_key|delivery_id) = ", sql)]


def _fill(db: Database) -> None:
    """Enough rows that a scan would cost more than an index (for SQLite's planner's statistics)."""
    rows = [[f"d-{n}", f"issue_comment.created:comment:{n}", "episode", CONVERSATION, "{}",
             "failed" if n % 7 == 0 else "done", time.time()] for n in range(2000)]
    with db.transaction():
        db.executemany("INSERT INTO jobs (delivery_id, trigger_key, kind, conversation, spec, status, created_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    if db.dialect.name == "sqlite":
        db.execute("ANALYZE")


def _scans_of_jobs(db: Database, sql: str) -> list[str]:
    """The plan's steps that read the whole jobs table (or a whole index of it)."""
    if db.dialect.name == "sqlite":
        plan = [row["detail"] for row in db.query("EXPLAIN QUERY PLAN " + sql)]
        return [step for step in plan if re.match(r"SCAN (jobs|j)\b", step)]
    db.execute("SET enable_seqscan = off")  # a table this small is read whole whenever it may be
    plan = [next(iter(row.values())) for row in db.query("EXPLAIN " + sql)]
    return [step for step in plan if re.search(r"Seq Scan on jobs\b", step)]


@pytest.mark.parametrize("lookup", sorted(LOOKUPS))
def test_a_lookup_of_jobs_by_trigger_or_delivery_reads_an_index_not_the_table(lookup, backend):
    statements = _statements(LOOKUPS[lookup])
    assert statements, f"{lookup} ran no lookup of jobs by trigger or delivery"
    db = store.connect(settings=current())
    _fill(db)
    assert {sql: _scans_of_jobs(db, sql) for sql in statements} == dict.fromkeys(statements, [])


def _jobs_indexes(db: Database) -> set[str]:
    if db.dialect.name == "sqlite":
        return {row["name"] for row in db.query("SELECT name FROM sqlite_master WHERE type = 'index' "
                                                "AND tbl_name = 'jobs' AND sql IS NOT NULL")}
    return {row["indexname"] for row in db.query("SELECT indexname FROM pg_indexes WHERE tablename = 'jobs' "
                                                 "AND indexname != 'jobs_pkey'")}


def test_a_migrated_database_has_no_separate_index_on_trigger_key_and_keeps_the_one_live_per_trigger(backend):
    db = store.connect(settings=current())
    assert "jobs_by_trigger" not in _jobs_indexes(db) and "jobs_one_live_per_trigger" in _jobs_indexes(db)


def test_a_migrated_database_indexes_the_delivery_id_of_jobs_without_a_trigger_only(backend):
    db = store.connect(settings=current())
    assert "jobs_by_delivery" not in _jobs_indexes(db) and "jobs_untriggered_by_delivery" in _jobs_indexes(db)


def _at_version(path: Path, last: int) -> sqlite3.Connection:
    """A SQLite database migrated up to `last`, as an older bot left it."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, description TEXT, "
                 "applied_at DOUBLE PRECISION)")
    for number, description, statements in (m for m in migrations.MIGRATIONS if m[0] <= last):
        for statement in statements:
            conn.execute(SQLITE.ddl(statement))
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", [number, description, time.time()])
    return conn


def test_migration_21_keeps_a_job_without_a_trigger_found_by_its_delivery_id(tmp_path):
    conn = _at_version(tmp_path / "at20.db", 20)
    conn.execute("INSERT INTO jobs (delivery_id, kind, conversation, spec, created_at) "
                 "VALUES ('schedule octo/repo nightly 2026-12-08T00:00', 'episode', ?, '{}', ?)",
                 [CONVERSATION, time.time()])
    conn.commit()
    conn.close()
    db = bot_db.connect(path=tmp_path / "at20.db")
    assert migrations.version(db) == migrations.LATEST and "jobs_by_delivery" not in _jobs_indexes(db)
    assert _enqueue_without_a_trigger(db) is None and len(store.jobs(db)) == 1


def test_migration_20_drops_the_trigger_index_of_a_database_at_19_and_keeps_its_jobs(tmp_path):
    path = tmp_path / "at19.db"
    conn = _at_version(path, 19)
    conn.execute("INSERT INTO jobs (delivery_id, trigger_key, kind, conversation, spec, created_at) "
                 "VALUES ('d-old', ?, 'episode', ?, '{}', ?)", [TRIGGER, CONVERSATION, time.time()])
    conn.commit()
    assert "jobs_by_trigger" in {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    conn.close()
    db = bot_db.connect(path=path)
    assert migrations.version(db) == migrations.LATEST and "jobs_by_trigger" not in _jobs_indexes(db)
    assert [j["delivery_id"] for j in store.jobs(db)] == ["d-old"] and _enqueue(db) is None  # still a duplicate
