"""`bot keys rotate`: every secret opens under the new key, none under the old one."""
from __future__ import annotations

import base64
import json
import os

import pytest

from bot.cli import keys
from bot.credentials import rotation, vault
from bot.db import connect
from bot.episode import session_home
from bot.settings import manifest, session
from tests.entry_settings import current

VALUES = {("user:alice", "openai_api_key"): "sk-alice-0123456789abcdef",
          ("repo:octo/app", "anthropic_api_key"): "sk-ant-app-0123456789abcdef",
          ("installation:42", "gemini_api_key"): "AIza-install-0123456789abcdef"}


def _store_all() -> None:
    for (scope, name), value in VALUES.items():
        vault.put(scope, name, value, actor="alice", settings=current())


def _sealed_rows() -> list[dict]:
    db = connect(settings=current())
    try:
        return db.query("SELECT scope, name, sealed FROM secrets")
    finally:
        db.close()


def _opens(key: bytes, row: dict) -> bool:
    try:
        rotation.unseal_with(key, vault._context(row["scope"], row["name"]), bytes(row["sealed"]))
    except rotation.RotationError:
        return False
    return True


def test_every_secret_is_readable_under_the_new_key_only(capsys):
    _store_all()
    old = vault.master_key(settings=current())
    assert keys.main(["rotate"]) == 0
    new = vault.master_key(settings=current())
    assert new != old
    assert {key: vault.get(*key, settings=current()) for key in VALUES} == VALUES
    rows = _sealed_rows()
    assert len(rows) == len(VALUES)
    assert all(_opens(new, row) and not _opens(old, row) for row in rows)
    assert "3 sealed value(s) re-encrypted" in capsys.readouterr().out


def test_the_old_key_is_nowhere_in_the_data_dir():
    _store_all()
    old = base64.b64encode(vault.master_key(settings=current()))
    rotation.rotate(current())
    data = current().data_dir
    assert sorted(p.name for p in data.iterdir() if p.name.startswith("secret.key")) == ["secret.key"]
    assert old not in (data / "secret.key").read_bytes()
    assert (data / "secret.key").stat().st_mode & 0o777 == 0o600


def test_settings_sessions_end_with_the_rotation():
    cookie, _ = session.start_session(current(), "alice", 1, "gho_user_token_0123456789")
    assert session.load_session(current(), cookie) is not None
    rotation.rotate(current())
    assert session.load_session(current(), cookie) is None
    db = connect(settings=current())
    try:
        assert db.query("SELECT sid_hash FROM settings_sessions") == []
    finally:
        db.close()


def test_with_bot_secret_key_the_new_key_goes_to_the_named_file(monkeypatch, tmp_path):
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    _store_all()
    out = tmp_path / "new.key"
    rotation.rotate(current(), out)
    assert out.stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("BOT_SECRET_KEY", out.read_text().strip())
    assert {key: vault.get(*key, settings=current()) for key in VALUES} == VALUES


def test_with_bot_secret_key_and_no_file_nothing_changes(monkeypatch):
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    _store_all()
    before = _sealed_rows()
    with pytest.raises(rotation.RotationError, match="--key-out"):
        rotation.rotate(current())
    assert _sealed_rows() == before


def test_a_failed_commit_keeps_the_old_key(monkeypatch):
    _store_all()
    old = vault.master_key(settings=current())

    def failing_install(path, key, keep_previous):
        real_install(path, key, keep_previous)
        raise OSError("disk full")
    real_install = rotation._install
    monkeypatch.setattr(rotation, "_install", failing_install)
    with pytest.raises(OSError):
        rotation.rotate(current())
    assert vault.master_key(settings=current()) == old
    assert {key: vault.get(*key, settings=current()) for key in VALUES} == VALUES


def test_an_interrupted_rotation_is_recovered_by_the_next(monkeypatch):
    """The key file was replaced but the transaction never committed (a crash): the old key comes back."""
    _store_all()
    old = vault.master_key(settings=current())
    key_file = current().data_dir / "secret.key"
    os.link(key_file, key_file.with_name("secret.key.previous"))
    fresh = key_file.with_name("fresh")
    fresh.write_bytes(base64.b64encode(os.urandom(32)) + b"\n")
    os.replace(fresh, key_file)  # as the rotation does: the old file itself stays as .previous
    rotation.recover(current())
    assert vault.master_key(settings=current()) == old
    assert {key: vault.get(*key, settings=current()) for key in VALUES} == VALUES


def test_an_existing_key_out_file_is_never_overwritten(monkeypatch, tmp_path):
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    out = tmp_path / "taken"
    out.write_text("the operator's\n")
    with pytest.raises(rotation.RotationError, match="exists"):
        rotation.rotate(current(), out)
    assert out.read_text() == "the operator's\n"


def test_the_packed_cli_homes_and_the_stored_github_app_open_under_the_new_key_only():
    """Not only the secrets table: every sealed value the bot keeps is re-encrypted."""
    _store_all()
    context = session_home._context("octo/app#1", "codex")
    db = connect(settings=current())
    try:
        db.execute("INSERT INTO session_homes (conversation, agent, version, sealed, size, packed_by, updated_at) "
                   "VALUES (?, ?, 1, ?, 6, 'test', 0)", ["octo/app#1", "codex", vault.seal(context, b"packed", settings=current())])
    finally:
        db.close()
    app = {"id": 42, "pem": "-----BEGIN RSA PRIVATE KEY-----", "webhook_secret": "whsec", "client_id": "Iv1.x",
           "client_secret": "cs", "slug": "my-bot", "html_url": "https://github.com/apps/my-bot"}
    manifest.store(app, current())
    old = vault.master_key(settings=current())
    assert keys.main(["rotate"]) == 0
    new = vault.master_key(settings=current())
    db = connect(settings=current())
    try:
        [row] = db.query("SELECT sealed FROM session_homes")
    finally:
        db.close()
    assert rotation.unseal_with(new, context, bytes(row["sealed"])) == b"packed"
    assert not _opens(old, {"scope": "x", "name": "y", "sealed": bytes(row["sealed"])})
    sealed_app = (current().data_dir / manifest.FILE).read_bytes()
    assert json.loads(rotation.unseal_with(new, manifest.CONTEXT, sealed_app))["GITHUB_APP_ID"] == "42"
    with pytest.raises(rotation.RotationError):
        rotation.unseal_with(old, manifest.CONTEXT, sealed_app)
    assert not list(current().data_dir.glob("*.previous"))


def test_a_rotation_failing_at_a_sealed_file_leaves_key_and_file_as_they_were(monkeypatch):
    _store_all()
    manifest.store({"id": 7, "pem": "pem", "webhook_secret": "w", "client_id": "c", "client_secret": "s",
                    "slug": "b"}, current())
    path = current().data_dir / manifest.FILE
    before_key, before_file = vault.master_key(settings=current()), path.read_bytes()
    real_install = rotation._install

    def failing_at_the_file(target, data, keep_previous):
        real_install(target, data, keep_previous)
        if target == path:
            raise OSError("disk full")
    monkeypatch.setattr(rotation, "_install", failing_at_the_file)
    with pytest.raises(OSError):
        keys.main(["rotate"])
    assert vault.master_key(settings=current()) == before_key and path.read_bytes() == before_file
    assert {key: vault.get(*key, settings=current()) for key in VALUES} == VALUES
    assert not list(current().data_dir.glob("*.previous"))


def test_the_key_rotated_is_the_one_of_the_data_dir_it_is_handed(monkeypatch, tmp_path):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "handed"))
    _store_all()
    old, handed = vault.master_key(settings=current()), current()
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "elsewhere"))
    assert rotation.rotate(handed).key_file == tmp_path / "handed" / "secret.key"
    assert vault.master_key(handed) != old
    assert not (tmp_path / "elsewhere" / "secret.key").exists()
