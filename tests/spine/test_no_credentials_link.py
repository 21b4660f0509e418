"""The "no credentials" reply on GitHub links the settings page only where a person can sign in
there: with BOT_PUBLIC_URL but no GitHub login (GITHUB_CLIENT_ID/SECRET) it names the variables."""
from __future__ import annotations

from bot.service import store
from tests.entry_settings import current
from tests.spine.test_worker import REPO, drain, enqueue, gh, spec  # noqa: F401,F811 (gh: the fixture)

PUBLIC = "https://bot.example.org"


def _answer(fake) -> str:
    return fake.comments(REPO, 1)[-1]["body"]


async def test_no_credentials_reply_names_the_variables_when_github_login_is_not_configured(gh, monkeypatch):  # noqa: F811
    monkeypatch.setenv("BOT_PUBLIC_URL", PUBLIC)
    db = store.connect(settings=current())
    enqueue(db, "episode", f"{REPO}#1", spec())
    await drain(db, 1)
    assert "/settings" not in _answer(gh)
    assert _answer(gh).startswith("I have no credentials to run codex. Set `OPENAI_API_KEY` or "
                                  "`CODEX_API_KEY` in the bot's environment")


async def test_no_credentials_reply_links_the_settings_page_when_github_login_is_configured(gh, monkeypatch):  # noqa: F811
    monkeypatch.setenv("BOT_PUBLIC_URL", PUBLIC)
    monkeypatch.setenv("GITHUB_CLIENT_ID", "Iv1.client")
    monkeypatch.setenv("GITHUB_CLIENT_SECRET", "client-secret")
    db = store.connect(settings=current())
    enqueue(db, "episode", f"{REPO}#1", spec())
    await drain(db, 1)
    assert f"OpenAI API key at {PUBLIC}/settings, or a repository admin" in _answer(gh)
