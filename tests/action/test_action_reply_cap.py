"""`bot action`: a person without permission gets at most one answer per thread per
BOT_OUTSIDER_REPLY_WINDOW, whatever they ask (help, the agent list, a run); the bot finds its last
such answer in the thread by its marker, since workflow runs share no store."""
from __future__ import annotations

from bot.cli import main as cli
from tests.action.conftest import REPO, payload


def ask(runner, body: str, association: str = "NONE") -> str:
    runner.event("issue_comment", payload("issue_comment.created", body, author_association=association))
    assert cli.main(["action"]) == 0
    return runner.outputs()["status"]


def test_an_outsider_is_answered_once_per_thread_in_the_window(github, runner):
    statuses = [ask(runner, "@bot help"), ask(runner, "@bot copilot fix it"), ask(runner, "@bot fix the typo")]
    assert statuses == ["replied", "ignored", "ignored"] and len(github.comments(REPO, 1)) == 1


def test_an_outsider_is_answered_again_once_the_window_has_passed(github, runner, monkeypatch):
    ask(runner, "@bot help")
    monkeypatch.setenv("BOT_OUTSIDER_REPLY_WINDOW", "0")
    assert ask(runner, "@bot help") == "replied" and len(github.comments(REPO, 1)) == 2


def test_a_writer_is_answered_every_time(github, runner):
    assert [ask(runner, "@bot help", "OWNER") for _ in range(2)] == ["replied", "replied"]
