"""The one intake decision (bot/intake/decide.py) answers the handle it is handed; the webhook hands
it the handle of the app's settings, not BOT_HANDLE read from the environment."""
from __future__ import annotations

import os

import pytest
from starlette.testclient import TestClient

from bot.config import Settings
from bot.intake.decide import Episode, Event, Ignore, decide
from bot.service import store
from bot.web.app import create_app
from tests.entry_settings import current
from tests.spine.helpers import configure_app, payload, signed


def comment(body: str) -> Event:
    return Event("issue_comment", payload("issue_comment.created", body, author_association="OWNER"), delivery="d-1")


def test_a_comment_addressed_to_the_handed_handle_is_an_episode():
    decision = decide(comment("@helper codex explain this"), "helper")
    assert isinstance(decision, Episode) and decision.spec.command.agent == "codex"


def test_a_comment_addressed_to_another_handle_names_the_handed_one_when_ignored():
    event = comment("@bot codex explain this")
    as_action = Event(event.name, event.payload, via_app=False)  # to the App it is an automation candidate
    assert decide(as_action, "helper") == Ignore("no @helper command")


def test_the_handed_handles_own_comment_is_a_bots():
    event = comment("@helper codex explain this")
    event.payload["comment"]["user"]["login"] = "helper"
    assert decide(event, "helper") == Ignore("the author is a bot")


def test_the_webhook_queues_a_command_to_the_handle_of_the_apps_settings(monkeypatch: pytest.MonkeyPatch):
    configure_app(monkeypatch)
    settings = Settings({**os.environ, "BOT_HANDLE": "helper"})
    with TestClient(create_app(start_workers=False, settings=settings), base_url="http://localhost") as client:
        body, headers = signed(payload("issue_comment.created", "@helper codex explain this"), "issue_comment")
        assert client.post("/webhook", content=body, headers=headers).status_code == 202
    assert [job["kind"] for job in store.jobs(store.connect(settings=current()))] == ["episode"]
