"""The encrypted secret store against a real SQLite database in a per-test data dir."""
from __future__ import annotations

import base64
import os
import sqlite3
import stat

import pytest

from bot.credentials import vault as secrets
from tests.entry_settings import current

KEY = "sk-ant-api03-Zq8vN1xR4tY7uI0oP3aS6dF9gH2jK5lL"


def _db_bytes() -> bytes:
    return b"".join(p.read_bytes() for p in current().data_dir.glob("bot.db*"))


def test_round_trip_returns_the_stored_value():
    """A value put under a scope and name comes back unchanged."""
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    assert secrets.get("user:octocat", "claude:api_key", settings=current()) == KEY


def test_missing_secret_is_none():
    """Reading a row that was never set gives None, not an error."""
    assert secrets.get("repo:octo/app", "codex:api_key", settings=current()) is None


def test_value_never_appears_in_the_database_file():
    """The database holds only ciphertext: neither the key nor its base64 is in bot.db."""
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    raw = _db_bytes()
    assert KEY.encode() not in raw
    assert base64.b64encode(KEY.encode()) not in raw


def test_key_file_is_created_private_on_first_use():
    """Without BOT_SECRET_KEY the master key is created as secret.key with mode 0600."""
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    path = current().data_dir / "secret.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(base64.b64decode(path.read_text())) == 32


def test_env_key_is_used_instead_of_a_file(monkeypatch):
    """With BOT_SECRET_KEY set no secret.key file is written."""
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    assert not (current().data_dir / "secret.key").exists()
    assert secrets.get("user:octocat", "claude:api_key", settings=current()) == KEY


def test_other_master_key_cannot_decrypt(monkeypatch):
    """A database read with a different master key refuses instead of returning garbage."""
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    with pytest.raises(secrets.SecretError):
        secrets.get("user:octocat", "claude:api_key", settings=current())


def test_malformed_env_key_is_named_in_the_error(monkeypatch):
    """A BOT_SECRET_KEY that is not base64 of a valid AES key size is rejected clearly."""
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(b"short").decode())
    with pytest.raises(secrets.SecretError, match="BOT_SECRET_KEY"):
        secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())


def test_ciphertext_moved_to_another_row_fails_to_decrypt():
    """The scope is associated data: copying a user's ciphertext into a repo row does not open."""
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    secrets.put("repo:octo/app", "claude:api_key", "sk-other-value-0000000000", actor="octocat", settings=current())
    conn = sqlite3.connect(current().data_dir / "bot.db")
    with conn:
        conn.execute("update secrets set sealed = (select sealed from secrets where scope='user:octocat') "
                     "where scope='repo:octo/app'")
    conn.close()
    with pytest.raises(secrets.SecretError, match="repo:octo/app"):
        secrets.get("repo:octo/app", "claude:api_key", settings=current())


def test_ciphertext_moved_to_another_name_fails_to_decrypt():
    """The credential name is associated data too: a claude key copied to gemini does not open."""
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    secrets.put("user:octocat", "gemini:api_key", "AIzaSyExampleExampleExample", actor="octocat", settings=current())
    conn = sqlite3.connect(current().data_dir / "bot.db")
    with conn:
        conn.execute("update secrets set sealed = (select sealed from secrets where name='claude:api_key') "
                     "where name='gemini:api_key'")
    conn.close()
    with pytest.raises(secrets.SecretError):
        secrets.get("user:octocat", "gemini:api_key", settings=current())


def test_listing_shows_fingerprints_only():
    """The listing carries the last four characters and a hash prefix, never the value."""
    shown = secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    [info] = secrets.listing("user:octocat", settings=current())
    assert info.fingerprint == shown
    assert shown.startswith("…K5lL · sha256:")
    assert KEY not in repr(info)


def test_short_value_fingerprint_has_no_tail():
    """A short value is shown only by its hash prefix, so the tail cannot give most of it away."""
    assert secrets.fingerprint("abc123").startswith("sha256:")


def test_replace_keeps_one_row():
    """Setting the same scope and name twice replaces the value."""
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    secrets.put("user:octocat", "claude:api_key", KEY + "X", actor="octocat", settings=current())
    assert len(secrets.listing("user:octocat", settings=current())) == 1
    assert secrets.get("user:octocat", "claude:api_key", settings=current()) == KEY + "X"


def test_delete_removes_the_row():
    """After delete the secret reads as None and delete reports that it existed."""
    secrets.put("user:octocat", "claude:api_key", KEY, actor="octocat", settings=current())
    assert secrets.delete("user:octocat", "claude:api_key", actor="octocat", settings=current()) is True
    assert secrets.get("user:octocat", "claude:api_key", settings=current()) is None
    assert secrets.delete("user:octocat", "claude:api_key", actor="octocat", settings=current()) is False


def test_audit_rows_record_set_and_delete_without_values():
    """Every set and delete leaves an audit row with actor and fingerprint, never the value."""
    secrets.put("repo:octo/app", "codex:api_key", KEY, actor="hubot", settings=current())
    secrets.delete("repo:octo/app", "codex:api_key", actor="octocat", settings=current())
    rows = secrets.audit_log("repo:octo/app", settings=current())
    assert [(r["action"], r["actor"]) for r in rows] == [("set", "hubot"), ("delete", "octocat")]
    assert KEY not in repr(rows)


def test_invalid_scope_is_refused():
    """A scope outside user/repo/installation is refused before anything is written."""
    with pytest.raises(secrets.SecretError, match="invalid scope"):
        secrets.put("team:octo", "claude:api_key", KEY, actor="octocat", settings=current())


def test_empty_value_is_refused():
    """Whitespace is not a key."""
    with pytest.raises(secrets.SecretError, match="empty"):
        secrets.put("user:octocat", "claude:api_key", "  \n", actor="octocat", settings=current())


def test_scope_for_names_an_owner_by_its_github_id():
    """Names can be renamed and taken again on GitHub; ids cannot, so scopes hold ids."""
    assert secrets.scope_for("repo", 1296269) == "repo:1296269"
    assert secrets.scope_for("user", "583231") == "user:583231"
    assert secrets.scope_for("installation", 42) == "installation:42"
