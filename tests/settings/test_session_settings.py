"""The settings pages' cookies and sessions use the key and the database of the settings they are
handed (the app's), not the environment's."""
from __future__ import annotations

from bot.config import Settings
from bot.settings import session


def _in(tmp_path, name: str) -> Settings:
    return Settings({"BOT_DATA_DIR": str(tmp_path / name)})


def test_a_cookie_opens_only_with_the_key_of_the_settings_that_signed_it(tmp_path):
    signed_by, other = _in(tmp_path, "a"), _in(tmp_path, "b")
    cookie = session.sign(signed_by, {"state": "s"}, 60)
    assert (session.unsign(signed_by, cookie) or {}).get("state") == "s"
    assert session.unsign(other, cookie) is None


def test_a_session_is_kept_in_the_database_of_the_settings_it_is_handed(tmp_path):
    handed = _in(tmp_path, "handed")
    cookie, _ = session.start_session(handed, "alice", 1, "gho_user_token_0123456789")
    found = session.load_session(handed, cookie)
    assert found is not None and found.login == "alice" and found.token == "gho_user_token_0123456789"
    assert not (tmp_path / "data" / "bot.db").exists()
