"""Fire tokens (bot/automations/fire_tokens.py): shown once, stored only as a digest, naming one
repository and one automation; rotating replaces the old one, revoking ends it."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot import db as bot_db
from bot.automations import fire_tokens
from tests.entry_settings import current


def _db():
    return bot_db.connect(settings=current())


def test_a_token_opens_its_own_automation_only(backend):
    db = _db()
    token = fire_tokens.issue(db, "o/r", "nightly", repo_id=1, installation_id=2, by="alice")
    other = fire_tokens.issue(db, "o/r", "weekly", repo_id=1, installation_id=2, by="alice")
    assert fire_tokens.check(db, "o/r", "nightly", token).created_by == "alice"
    assert fire_tokens.check(db, "o/r", "weekly", token) is None
    assert fire_tokens.check(db, "o/other", "nightly", token) is None
    assert fire_tokens.check(db, "o/r", "weekly", other) is not None


def test_only_the_digest_is_stored(backend):
    db = _db()
    token = fire_tokens.issue(db, "o/r", "nightly", repo_id=1, installation_id=2, by="alice")
    stored = db.query("SELECT * FROM automation_tokens")
    assert token not in repr(stored) and stored[0]["digest"] == fire_tokens.digest(token)


def test_rotating_ends_the_old_token(backend):
    db = _db()
    old = fire_tokens.issue(db, "o/r", "nightly", repo_id=1, installation_id=2, by="alice")
    new = fire_tokens.issue(db, "o/r", "nightly", repo_id=1, installation_id=2, by="bob")
    assert fire_tokens.check(db, "o/r", "nightly", old) is None
    assert fire_tokens.check(db, "o/r", "nightly", new).created_by == "bob"


def test_a_revoked_token_opens_nothing(backend):
    db = _db()
    token = fire_tokens.issue(db, "o/r", "nightly", repo_id=1, installation_id=2, by="alice")
    assert fire_tokens.revoke(db, "o/r", "nightly") and not fire_tokens.revoke(db, "o/r", "nightly")
    assert fire_tokens.check(db, "o/r", "nightly", token) is None


def test_the_listing_names_who_made_each_token_never_the_token(backend):
    db = _db()
    token = fire_tokens.issue(db, "o/r", "nightly", repo_id=1, installation_id=2, by="alice")
    listed = fire_tokens.listed(db, "o/r")
    assert list(listed) == ["nightly"] and token not in repr(listed)


@settings(max_examples=60)
@given(st.text(max_size=80))
def test_no_presented_text_but_the_token_opens_the_automation(presented):
    db = bot_db.connect(settings=current())
    token = fire_tokens.issue(db, "o/r", "nightly", repo_id=1, installation_id=2, by="alice")
    assert (fire_tokens.check(db, "o/r", "nightly", presented) is not None) == (presented == token)


def test_the_operator_makes_and_revokes_a_token_with_the_command(backend, capsys):
    from bot.cli import automations

    assert automations.main(["token", "o/r", "nightly"]) == 0
    token = capsys.readouterr().out.strip()
    assert fire_tokens.check(_db(), "o/r", "nightly", token).created_by == "operator"
    assert automations.main(["token", "o/r", "nightly", "--revoke"]) == 0
    assert fire_tokens.check(_db(), "o/r", "nightly", token) is None


@given(st.text(max_size=60))
def test_only_a_bearer_header_names_a_token(header):
    from bot.web.fire_route import _bearer

    found = _bearer(header)
    assert found == "" or (header.lower().startswith("bearer ") and header[7:] == found)
