"""Process roles on a shared database: `bot serve` and `bot worker` refuse PostgreSQL without the
shared key, in words, before doing anything."""
from __future__ import annotations

import pytest

from bot.cli import serve, worker
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
