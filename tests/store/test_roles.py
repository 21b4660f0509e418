"""Process roles on a shared database: `bot serve` and `bot worker` refuse PostgreSQL without the
shared key, in words, before doing anything."""
from __future__ import annotations

import pytest

from bot.cli import serve, worker
from bot.settings import session
from tests.entry_settings import current
from tests.spine.helpers import configure_app


@pytest.mark.parametrize("command", [serve, worker])
def test_postgresql_without_the_shared_key_refuses_to_start(command, pg_url, monkeypatch, capsys):
    configure_app(monkeypatch)
    monkeypatch.delenv("BOT_SECRET_KEY")
    assert command.main([]) == 2
    assert "BOT_SECRET_KEY must be set" in capsys.readouterr().err


def test_worker_with_no_episode_slot_is_refused(monkeypatch, capsys):
    monkeypatch.setenv("BOT_WORKERS", "0")
    assert worker.main([]) == 2
    assert "at least 1" in capsys.readouterr().err


def test_a_settings_session_started_on_one_replica_opens_on_another(pg_url, monkeypatch, tmp_path):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "replica-a"))
    cookie, _ = session.start_session(current(), "octocat", 1, "ghu_usertoken0123456789")
    on_a = session.load_session(current(), cookie)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "replica-b"))
    on_b = session.load_session(current(), cookie)
    assert on_b is not None and (on_b.login, on_b.token, on_b.csrf) == ("octocat", "ghu_usertoken0123456789", on_a.csrf)
