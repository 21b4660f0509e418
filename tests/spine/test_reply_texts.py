"""Reply texts are written once (bot/service/reply_texts.py) for the service's reply jobs and the
Action's answers; they differ only where the medium does."""
from __future__ import annotations

from adapters import base
from bot.config import Settings
from bot.intake.grammar import USAGES, Command
from bot.intake.spec import JobSpec
from bot.job import replies
from bot.service.reply_texts import reply_text

SPEC = JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="help"))
SETTINGS = Settings({})


def test_help_reads_the_same_in_the_service_and_the_action():
    assert reply_text(None, SPEC, "help", "o/r#1", SETTINGS) == reply_text(None, SPEC, "help", "o/r#1", SETTINGS, in_actions=True)


def test_the_service_promises_the_not_allowed_note_once_and_the_action_does_not():
    assert reply_text(None, SPEC, "not_allowed", "o/r#1", SETTINGS) == replies.not_allowed_once()
    assert reply_text(None, SPEC, "not_allowed", "o/r#1", SETTINGS, in_actions=True) == replies.not_allowed()


def test_a_stop_in_the_action_says_to_cancel_the_workflow_run():
    assert reply_text(None, SPEC, "stop", "o/r#1", SETTINGS, in_actions=True) == replies.stop_in_actions()


def test_a_command_without_an_answer_says_nothing_was_done():
    assert reply_text(None, SPEC, "frobnicate", "o/r#1", SETTINGS, in_actions=True) == replies.unknown_command("frobnicate")


def test_help_names_the_handle_and_the_default_agent_it_is_handed(monkeypatch):
    monkeypatch.setenv("BOT_HANDLE", "from-the-environment")
    monkeypatch.setenv("BOT_DEFAULT_AGENT", "codex")
    handed = Settings({"BOT_HANDLE": "@handed", "BOT_DEFAULT_AGENT": "gemini"})
    assert reply_text(None, SPEC, "help", "o/r#1", handed) == replies.help_text("handed", base.names(), "gemini", USAGES)
