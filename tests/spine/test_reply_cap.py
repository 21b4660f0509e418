"""Replies to people without permission to run the bot (help, status, the agent list) are capped:
one per thread per BOT_OUTSIDER_REPLY_WINDOW, through the real webhook intake. The not-allowed
notice keeps its own once-per-thread claim."""
from __future__ import annotations

import itertools
import json

import pytest
from starlette.testclient import TestClient

from bot.service import reply_cap, store
from bot.web.app import create_app
from tests.entry_settings import current
from tests.spine.helpers import configure_app, payload, signed


@pytest.fixture
def client(monkeypatch):
    configure_app(monkeypatch)
    with TestClient(create_app(start_workers=False), base_url="http://localhost") as test_client:
        yield test_client


COMMENT_IDS = itertools.count(9_000_000)


def ask(client, body: str, association: str = "NONE", number: int = 1) -> int:
    """A new comment (its own id) in issue `number`; the webhook's status."""
    data = payload("issue_comment.created", body, author_association=association, id=next(COMMENT_IDS))
    data["issue"]["number"] = number
    request_body, headers = signed(data, "issue_comment")
    return client.post("/webhook", content=request_body, headers=headers).status_code


def replies() -> list[tuple[str, str]]:
    return [(job["conversation"], json.loads(job["spec"])["reply"]) for job in store.jobs(store.connect(settings=current()))
            if job["kind"] == "reply"]


def test_an_outsider_gets_one_reply_per_thread_in_the_window(client):
    assert [ask(client, "@bot help") for _ in range(3)] == [202, 200, 200]
    assert [reply for _, reply in replies()] == ["help"]


def test_an_outsiders_unknown_agent_and_status_replies_share_the_cap(client):
    for body in ("@bot copilot fix it", "@bot status", "@bot help"):
        ask(client, body)
    assert [reply for _, reply in replies()] == ["unknown_agent"]


def test_an_outsider_is_answered_again_once_the_window_has_passed(client):
    ask(client, "@bot help")
    with store.connect(settings=current()).transaction() as db:
        db.execute("UPDATE notices SET created_at = created_at - 3601")
    ask(client, "@bot help")
    assert [reply for _, reply in replies()] == ["help", "help"]


def test_the_cap_is_per_thread(client):
    ask(client, "@bot help", number=1)
    ask(client, "@bot help", number=2)
    assert len({conversation for conversation, _ in replies()}) == 2


def test_a_writer_is_never_capped(client):
    assert [ask(client, "@bot help", association="OWNER") for _ in range(2)] == [202, 202]
    assert [reply for _, reply in replies()] == ["help", "help"]


def test_the_not_allowed_notice_keeps_its_own_once_per_thread_claim(client):
    ask(client, "@bot help")
    ask(client, "@bot codex do it")
    ask(client, "@bot codex do it again")
    assert [reply for _, reply in replies()] == ["help", "not_allowed"]


def test_the_window_is_the_one_the_app_was_started_with(monkeypatch):
    configure_app(monkeypatch)
    monkeypatch.setenv("BOT_OUTSIDER_REPLY_WINDOW", "0")
    started_with = current()
    monkeypatch.setenv("BOT_OUTSIDER_REPLY_WINDOW", "3600")
    with TestClient(create_app(start_workers=False, settings=started_with), base_url="http://localhost") as client:
        assert [ask(client, "@bot help") for _ in range(2)] == [202, 202]


def test_a_claim_is_taken_again_once_its_window_has_passed():
    db = store.connect(settings=current())
    assert [store.write(db, lambda conn: reply_cap.claim(conn, "o/r#1", window_s=0)) for _ in range(2)] == [True, True]
