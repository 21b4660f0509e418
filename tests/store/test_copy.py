"""`bot db copy`: an existing SQLite deployment moves to PostgreSQL with nothing lost."""
from __future__ import annotations

import pytest

from bot import db as bot_db
from bot.cli import db as db_cli
from bot.credentials import vault
from bot.db import migrations
from bot.db.copy import CopyRefused, copy
from bot.job import conversations
from bot.record.recorder import Recorder
from bot.relay.budgets import Ledger, Scope
from bot.service import store
from tests.entry_settings import current
from tests.spine.helpers import enqueue
from tests.store.conftest import TEST_KEY


def _deployment() -> bot_db.Database:
    db = store.connect(settings=current())
    enqueue(db, "episode", "o/r#1")
    conversations.ensure(db, "o/r#1")
    conversations.record_turn(db, "o/r#1", "codex", "sess-1", fresh=True)
    vault.put("user:octocat", "claude:api_key", "sk-ant-secret-value-0001", actor="octocat", settings=current())
    recorder = Recorder(db)
    run_id = recorder.start_run(agent="codex", conversation="o/r#1")
    recorder.declare_gap(run_id, "codex's model calls")
    Ledger(db).add(run_id, Scope(conversation="o/r#1"), 120, 0.5)
    return db


def _dump(db: bot_db.Database) -> dict[str, list[dict]]:
    return {table: db.query(f"SELECT * FROM {table} ORDER BY 1, 2") for table in migrations.TABLES}


def test_copy_to_postgresql_keeps_every_row(pg_cluster, monkeypatch):
    monkeypatch.setenv("BOT_SECRET_KEY", TEST_KEY)
    source = _deployment()
    target = bot_db.connect(pg_cluster.new_database(), settings=current())
    copy(source, target)
    assert _dump(target) == _dump(source)


def test_copied_secrets_open_and_new_ids_follow_the_copied_ones(pg_cluster, monkeypatch):
    monkeypatch.setenv("BOT_SECRET_KEY", TEST_KEY)
    source = _deployment()
    url = pg_cluster.new_database()
    copy(source, bot_db.connect(url, settings=current()))
    monkeypatch.setenv("BOT_DATABASE_URL", url)
    assert vault.get("user:octocat", "claude:api_key", settings=current()) == "sk-ant-secret-value-0001"
    assert enqueue(store.connect(settings=current()), "episode", "o/r#2") == 2


def test_copy_into_a_database_with_rows_is_refused(pg_cluster, monkeypatch):
    monkeypatch.setenv("BOT_SECRET_KEY", TEST_KEY)
    source = _deployment()
    target = bot_db.connect(pg_cluster.new_database(), settings=current())
    enqueue(target, "episode", "x/y#1")
    with pytest.raises(CopyRefused, match="jobs"):
        copy(source, target)


def test_copy_from_a_data_dir_whose_key_file_is_not_the_shared_key_is_refused(pg_cluster, monkeypatch, capsys):
    store.connect(settings=current())
    vault.put("user:octocat", "claude:api_key", "sk-ant-secret-value-0001", actor="octocat", settings=current())  # makes secret.key
    monkeypatch.setenv("BOT_SECRET_KEY", TEST_KEY)
    source = f"sqlite:///{current().data_dir / 'bot.db'}"
    assert db_cli.main(["copy", "--from", source, "--to", pg_cluster.new_database()]) == 2
    assert "secret.key" in capsys.readouterr().err
