"""The GitHub App a first run stores is sealed into the data dir, and with the key, of the settings
it is handed."""
from __future__ import annotations

import base64
import os

from bot.config import Settings
from bot.settings import manifest

APP = {"id": 42, "pem": "pem", "webhook_secret": "w", "client_id": "c", "client_secret": "s", "slug": "my-bot"}


def test_the_app_is_stored_in_the_data_dir_of_the_settings_it_is_handed(tmp_path):
    manifest.store(APP, Settings({"BOT_DATA_DIR": str(tmp_path / "handed")}))
    assert (manifest.stored(tmp_path / "handed") or {}).get("GITHUB_APP_ID") == "42"
    assert not (tmp_path / "data" / manifest.FILE).exists()


def test_the_app_is_sealed_with_the_key_of_the_settings_it_is_handed(tmp_path, monkeypatch):
    handed_key = base64.b64encode(os.urandom(32)).decode()
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    manifest.store(APP, Settings({"BOT_DATA_DIR": str(tmp_path / "handed"), "BOT_SECRET_KEY": handed_key}))
    assert (manifest.stored(tmp_path / "handed", handed_key) or {}).get("GITHUB_APP_ID") == "42"
