"""bot/db: one API, two backends; migrations applied once however many processes start at once."""
from __future__ import annotations

import sqlite3
import threading

import psycopg
import pytest

from bot import db as bot_db
from bot.config import Settings
from bot.db import migrations
from bot.db.dialect import POSTGRESQL
from bot.service import queue, store
from tests.entry_settings import current
from tests.spine.helpers import enqueue


def test_fresh_database_is_migrated_to_the_latest_version(backend):
    db = bot_db.connect(settings=current())
    assert migrations.version(db) == migrations.LATEST
    assert set(migrations.TABLES) <= set(db.table_names())


def test_six_processes_opening_one_new_sqlite_file_at_once_all_open_it(tmp_path):
    """SQLite answers "database is locked" at once, not after its busy timeout, to a connection
    switching a new file to WAL while another does: about one round in ten failed before."""
    for round_ in range(40):
        path, errors = tmp_path / f"bot-{round_}.db", []

        def start(path=path, errors=errors) -> None:
            try:
                bot_db.connect(path=path).close()
            except sqlite3.OperationalError as exc:  # reported below
                errors.append(exc)

        _six_at_once(start)
        assert errors == [], f"round {round_}: {errors}"


def _six_at_once(start) -> None:
    """`start` in six threads at once, each joined."""
    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_processes_starting_together_apply_each_migration_once(backend):
    errors: list[BaseException] = []

    def start() -> None:
        try:
            bot_db.connect(settings=current()).close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    _six_at_once(start)
    versions = [row["version"] for row in bot_db.connect(settings=current()).query("SELECT version FROM schema_migrations ORDER BY 1")]
    assert errors == [] and versions == [number for number, _, _ in migrations.MIGRATIONS]


def test_postgresql_without_the_shared_key_is_refused_with_the_reason(pg_url, monkeypatch):
    monkeypatch.delenv("BOT_SECRET_KEY")
    with pytest.raises(bot_db.DatabaseConfigError, match="BOT_SECRET_KEY must be set"):
        bot_db.connect(settings=current())


def test_a_connection_opens_the_database_of_the_settings_it_is_handed(tmp_path):
    handed = Settings({"BOT_DATA_DIR": str(tmp_path / "handed")})
    db = bot_db.connect(settings=handed)
    assert db.url == f"sqlite:///{(tmp_path / 'handed' / 'bot.db').resolve()}"
    assert not (tmp_path / "data" / "bot.db").exists()


def test_postgresql_is_refused_when_the_handed_settings_lack_the_shared_key(monkeypatch):
    monkeypatch.setenv("BOT_SECRET_KEY", "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=")
    with pytest.raises(bot_db.DatabaseConfigError, match="BOT_SECRET_KEY must be set"):
        bot_db.connect(settings=Settings({"BOT_DATABASE_URL": "postgresql://db.invalid/bot"}))


def test_unknown_scheme_is_refused(monkeypatch):
    monkeypatch.setenv("BOT_DATABASE_URL", "mysql://x/y")
    with pytest.raises(bot_db.DatabaseConfigError, match="postgresql://"):
        bot_db.connect(settings=current())


def test_placeholders_become_pyformat_outside_quotes_only():
    sql = "SELECT '?', x::text, '%' FROM t WHERE a = ? AND b = :name AND c LIKE 'a%'"
    assert POSTGRESQL.translate(sql) == ("SELECT '?', x::text, '%%' FROM t WHERE a = %s AND b = %(name)s "
                                         "AND c LIKE 'a%%'")


def test_workers_claiming_at_once_never_share_a_job(backend):
    db = store.connect(settings=current())
    expected = {enqueue(db, "episode", f"o/r#{n}") for n in range(40)}
    claimed: list[int] = []

    def work(owner: str) -> None:
        mine = store.connect(settings=current())
        while (job := queue.claim(mine, owner)) is not None:
            claimed.append(job.id)

    threads = [threading.Thread(target=work, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claimed) == sorted(expected)


def test_a_threads_second_episode_waits_while_another_worker_runs_the_first(backend):
    db = store.connect(settings=current())
    first = enqueue(db, "episode", "o/r#1")
    second = enqueue(db, "episode", "o/r#1")
    assert queue.claim(store.connect(settings=current()), "machine-a").id == first
    other = store.connect(settings=current())
    assert queue.claim(other, "machine-b") is None
    queue.finish(db, first, "done", owner="machine-a")
    assert queue.claim(other, "machine-b").id == second


def test_stop_from_any_intake_reaches_the_job_another_machine_runs(backend):
    worker_db = store.connect(settings=current())
    job = enqueue(worker_db, "episode", "o/r#1")
    queue.claim(worker_db, "machine-a")
    assert queue.request_stop(store.connect(settings=current()), "o/r#1", "alice") == [job]
    assert store.get_job(worker_db, job)["cancel_requested"] == 1


def test_binary_values_round_trip(backend):
    db = bot_db.connect(settings=current())
    db.execute("INSERT INTO session_homes (conversation, agent, version, sealed, size, updated_at) "
               "VALUES (?, ?, 1, ?, 3, 0)", ["o/r#1", "codex", b"\x00\xff\x10"])
    assert db.query("SELECT sealed FROM session_homes")[0]["sealed"] == b"\x00\xff\x10"


def test_a_connection_the_server_dropped_is_opened_again(pg_url):
    db = store.connect(settings=current())
    pid = db.query("SELECT pg_backend_pid() AS pid")[0]["pid"]
    store.connect(settings=current()).execute("SELECT pg_terminate_backend(?)", [pid])
    with pytest.raises(psycopg.OperationalError):
        db.execute("SELECT 1")
    assert db.query("SELECT 1 AS one") == [{"one": 1}]


def test_an_existing_sqlite_data_dir_adopts_the_versioned_schema_with_its_rows():
    """A data dir from before the migrations (tables made by each module) keeps every row."""
    old = sqlite3.connect(current().data_dir / "bot.db")
    old.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT, kind TEXT NOT NULL, "
                "conversation TEXT NOT NULL, spec TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'queued', "
                "attempts INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_expires REAL, "
                "tracking_comment_id INTEGER, cancel_requested INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, "
                "started_at REAL, finished_at REAL, error TEXT, run_id TEXT)")
    old.execute('CREATE TABLE [secrets] ([scope] TEXT, [name] TEXT, [sealed] BLOB, [fingerprint] TEXT, '
                '[updated_at] TEXT, [updated_by] TEXT, PRIMARY KEY ([scope], [name]))')
    old.execute("INSERT INTO jobs (kind, conversation, spec, created_at) VALUES ('episode', 'o/r#1', '{}', 1)")
    old.commit()
    old.close()
    db = store.connect(settings=current())
    assert migrations.version(db) == migrations.LATEST and [j["conversation"] for j in store.jobs(db)] == ["o/r#1"]
    assert enqueue(db, "episode", "o/r#2") == 2
