"""A stored CLI home is sealed, and opened, with the key of the settings it is handed."""
from __future__ import annotations

import base64
import os

import pytest

from bot.config import Settings
from bot.credentials import vault
from bot.episode import session_home
from bot.service import store
from tests.entry_settings import current

ROLLOUT = ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-abc.jsonl"


def _with_key(data_dir, key: str) -> Settings:
    return Settings({"BOT_DATA_DIR": str(data_dir), "BOT_SECRET_KEY": key})


def _saved(settings: Settings) -> None:
    home = session_home.home_dir(settings.data_dir, "o/r#1", "codex")
    (home / ROLLOUT).parent.mkdir(parents=True)
    (home / ROLLOUT).write_text('{"type":"session_meta"}\n')
    session_home.save(store.connect(settings=current()), settings, "o/r#1", "codex")


def test_a_home_sealed_with_the_handed_key_opens_with_it_on_another_machine(tmp_path, monkeypatch):
    key = base64.b64encode(os.urandom(32)).decode()
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    _saved(_with_key(tmp_path / "a", key))
    assert session_home.restore(store.connect(settings=current()), _with_key(tmp_path / "b", key), "o/r#1", "codex") is True


def test_a_home_sealed_with_another_key_does_not_open(tmp_path):
    _saved(_with_key(tmp_path / "a", base64.b64encode(os.urandom(32)).decode()))
    with pytest.raises(vault.SecretError):
        session_home.restore(store.connect(settings=current()), _with_key(tmp_path / "b", base64.b64encode(os.urandom(32)).decode()),
                             "o/r#1", "codex")
