"""The settings an entry point reads once: typed, frozen, refused as `check_all` and
`check_identity` refuse, and with the stored App only while the environment names none of it."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from bot import config
from bot.config import Settings, SettingsRefused, StoredApp
from bot.settings import manifest
from tests.entry_settings import current

CONVERSION = {"id": 777, "pem": "stored pem", "webhook_secret": "stored secret", "client_id": "Iv1.stored",
              "client_secret": "stored client secret", "slug": "octo-agent"}
WHOLE_APP = {"GITHUB_APP_ID": "4242", "GITHUB_PRIVATE_KEY": "env pem", "GITHUB_WEBHOOK_SECRET": "env secret"}
STORED = StoredApp.of({"GITHUB_APP_ID": "777", "GITHUB_PRIVATE_KEY": "stored pem",
                       "GITHUB_WEBHOOK_SECRET": "stored secret", "GITHUB_CLIENT_ID": "Iv1.stored",
                       "GITHUB_CLIENT_SECRET": "stored client secret", "BOT_HANDLE": "octo-agent"})


def test_settings_do_not_follow_a_later_change_of_the_environment(monkeypatch):
    monkeypatch.setenv("BOT_WORKERS", "3")
    settings = Settings.load(os.environ)
    monkeypatch.setenv("BOT_WORKERS", "5")
    assert settings.workers == 3


def test_settings_are_frozen():
    settings = Settings.load({})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.stored_app = STORED  # type: ignore[misc]


def test_a_value_not_of_its_kind_is_refused_with_the_line_check_all_gives():
    environ = {"BOT_PORT": "abc", "BOT_LOG_LEVEL": "LOUD"}
    with pytest.raises(SettingsRefused) as refused:
        Settings.load(environ)
    assert refused.value.lines == config.check_all(environ) and len(refused.value.lines) == 2


def test_an_app_set_in_part_in_the_environment_is_refused_on_loading():
    with pytest.raises(config.PartialIdentity, match="GITHUB_WEBHOOK_SECRET"):
        Settings.load({"GITHUB_APP_ID": "4242", "GITHUB_PRIVATE_KEY": "pem"})


def test_each_value_has_its_type(tmp_path):
    settings = Settings.load({"BOT_DATA_DIR": str(tmp_path / "d"), "BOT_WORKERS": "4", "BOT_LEASE_SECONDS": "7"})
    assert (settings.data_dir, settings.workers, settings.number("BOT_LEASE_SECONDS")) == (
        (tmp_path / "d").resolve(), 4, 7.0)
    assert isinstance(settings.agents_dir, Path) and settings.sandbox_tier == 1


def test_a_variable_asked_as_a_type_it_is_not_is_a_type_error():
    with pytest.raises(TypeError, match="BOT_HANDLE"):
        Settings.load({}).whole("BOT_HANDLE")


def test_a_name_the_table_does_not_have_is_refused():
    with pytest.raises(KeyError, match="BOT_NO_SUCH"):
        Settings.load({}).text("BOT_NO_SUCH")


def test_the_stored_app_is_used_while_the_environment_names_none_of_its_variables():
    settings = Settings.load({}, STORED)
    assert (settings.app_id(), settings.private_key(), settings.webhook_secret()) == (
        "777", "stored pem", "stored secret")
    assert (settings.handle, settings.identity_source, settings.oauth_login) == ("octo-agent", "stored", True)


def test_an_app_in_the_environment_replaces_the_stored_one_whole():
    settings = Settings.load(WHOLE_APP, STORED)
    assert (settings.app_id(), settings.webhook_secret(), settings.handle) == ("4242", "env secret", "bot")
    assert settings.text("GITHUB_CLIENT_ID") is None and settings.identity_source == "environment"


def test_the_operators_handle_wins_over_the_stored_apps_slug():
    assert Settings.load({"BOT_HANDLE": "@my-bot"}, STORED).handle == "my-bot"


def test_no_secret_shows_in_the_settings_repr():
    shown = repr(Settings.load({**WHOLE_APP, "BOT_SECRET_KEY": "k" * 44}, STORED))
    assert "env secret" not in shown and "k" * 44 not in shown and "stored pem" not in shown


def test_an_entry_point_finds_the_app_the_first_run_stored(monkeypatch):
    manifest.store(CONVERSION, current())
    settings = manifest.load_settings(os.environ)
    assert (settings.identity_source, settings.handle, settings.app_id()) == ("stored", "octo-agent", "777")


def test_an_entry_point_with_a_whole_app_in_the_environment_reads_no_stored_one(monkeypatch):
    manifest.store(CONVERSION, current())
    for name, text in WHOLE_APP.items():
        monkeypatch.setenv(name, text)
    assert manifest.load_settings(os.environ).handle == "bot"

