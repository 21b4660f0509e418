"""bot/review/reactions.py: writers' 👍 and 👎 on the bot's review comments, read through the GitHub
client from the fake GitHub (GET .../pulls/comments/{id}/reactions, held to GitHub's REST
description) and kept as signal; anyone else's, and anything but 👍 and 👎, dropped."""
from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.github.client import RetryingAPI, Thread
from bot.review import memory, reactions
from bot.review.memory import Posted
from bot.review.signals import Judge
from bot.service import store
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"


def writers(*logins: str):
    async def may(login: str) -> bool:
        return login in logins
    return may


async def test_a_writers_thumbs_are_kept_and_a_readers_and_other_reactions_are_not(monkeypatch, tmp_path):
    gh = FakeGitHub(require_auth=False).start()
    try:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 2)
        top = gh.add_review_comment(REPO, 2, "Nit: rename", user="bot[bot]", user_type="Bot", path="app.py", line=3)
        for content, login in (("+1", "alice"), ("-1", "alice"), ("heart", "alice"), ("-1", "reader")):
            gh.react_as(REPO, top["id"], content, login)
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        db = store.connect(tmp_path / "bot.db")
        memory.remember(db, REPO, 2, ["codex"], "a" * 40, 1,
                        [Posted("codex", top["id"], "app.py", 3, None, "RIGHT", "nit", "f", "rename")])
        async with httpx.AsyncClient() as client:
            thread = Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2)
            judge = Judge(writers("alice"), thread)
            assert await reactions.record(db, thread, memory.findings(db, REPO, 2), judge) == 2
            assert await reactions.record(db, thread, memory.findings(db, REPO, 2), judge) == 0  # kept once
        kept = db.query("SELECT login, content, agent FROM review_reactions ORDER BY content")
        assert [(r["login"], r["content"], r["agent"]) for r in kept] == [("alice", "+1", "codex"),
                                                                         ("alice", "-1", "codex")]
        assert judge.ignored == 2 and gh.conformance_errors == []
    finally:
        gh.stop()


REACTION = st.fixed_dictionaries({
    "content": st.sampled_from(["+1", "-1", "laugh", "heart", "+2", "", None, 1]),
    "user": st.one_of(st.none(), st.fixed_dictionaries({"login": st.sampled_from(
        ["alice", "reader", "bot[bot]", "bot", "", "x" * 40, None, 5])}))})


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.lists(REACTION, max_size=6), st.none(), st.just({"message": "Not Found"})))
def test_only_a_persons_thumbs_pass_the_allowlist(listed):
    allowed = reactions._allowed(listed, frozenset({"bot"}))
    expected = [(r["user"]["login"], r["content"]) for r in (listed if isinstance(listed, list) else [])
                if r["content"] in ("+1", "-1") and r["user"] and r["user"]["login"] in ("alice", "reader")]
    assert allowed == expected
