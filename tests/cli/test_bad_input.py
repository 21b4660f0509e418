"""Bad input never costs anything: refused before anything runs, with one line that says what to
do, and the thread's resumable session is never lost to it."""
from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from bot.job import conversations
from bot.job.pipeline import _session_lost
from bot.service import store
from tests.entry_settings import current
from tests.fakes.provider import fail, say

REPO_ARGS = ("--agent", "codex")


def sessions(bot) -> list[tuple]:
    with sqlite3.connect(bot.tmp / "data" / "bot.db") as db:
        return db.execute("select conversation, agent, session_id, turns from sessions").fetchall()


def one_line_refusal(done, *words: str) -> None:
    lines = [line for line in done.stderr.splitlines() if line.startswith("bot run:")]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and all(word in lines[0] for word in words), lines[0]


@pytest.mark.parametrize("request_text", ["", "   ", "\n\t ", "\u200b \u2060"])
def test_blank_request_is_refused_with_the_usage_before_anything_runs(bot, request_text):
    done = bot.run(request_text)
    one_line_refusal(done, "the request is empty")
    assert done.stderr.startswith("usage: bot run")
    assert bot.provider.requests == [] and not (bot.tmp / "data").exists()


@pytest.mark.e2e
def test_blank_request_keeps_the_session_and_the_next_run_resumes_it(bot):
    bot.provider.script(say("first"))
    assert bot.run("hello").returncode == 0
    before = sessions(bot)
    bot.run("  ")
    assert sessions(bot) == before and before[0][2]
    again = bot.run("second")
    assert "prior_assistant_turns=1" in again.stdout


@pytest.mark.e2e
def test_rejected_key_is_reported_once_at_once_naming_its_scope_and_keeps_the_session(bot):
    bot.provider.script(say("first"))
    assert bot.run("hello").returncode == 0
    before, asked = sessions(bot), len(bot.provider.main_requests())
    bot.provider.script(fail(401, "Incorrect API key provided"))
    done = bot.run("second")
    assert done.returncode == 1
    assert len(bot.provider.main_requests()) - asked == 1  # no retry of a rejected key
    assert done.stdout.count("was rejected") == 1 and "operator" in done.stdout
    assert "OPENAI_API_KEY" in done.stdout
    assert sessions(bot)[0][2] == before[0][2]


def test_sandbox_tier_out_of_range_is_one_line(bot):
    one_line_refusal(bot.run("hi", env={"BOT_SANDBOX_TIER": "7"}), "BOT_SANDBOX_TIER", "1")


def test_unknown_default_agent_is_refused_before_anything_is_announced(bot):
    done = bot("run", "hi", "--repo", str(bot.repo), env={"BOT_DEFAULT_AGENT": "foo"})
    one_line_refusal(done, "BOT_DEFAULT_AGENT", "'foo'", "codex")
    assert "is on it" not in done.stdout + done.stderr


def test_missing_cli_binary_names_the_fix(bot):
    done = bot.run("hi", env={"BOT_CODEX_BIN": str(bot.tmp / "no-such-codex")})
    one_line_refusal(done, "codex CLI is not installed", "make agents", "BOT_CODEX_BIN")
    assert "execvp" not in done.stderr


def test_missing_repo_path_says_it_does_not_exist(bot):
    done = bot("run", "hi", *REPO_ARGS, "--repo", str(bot.tmp / "nowhere"))
    one_line_refusal(done, "no such folder")


def test_folder_outside_any_repository_says_how_to_fix(bot):
    (bot.tmp / "plain").mkdir()
    done = bot("run", "hi", *REPO_ARGS, "--repo", str(bot.tmp / "plain"))
    one_line_refusal(done, "not inside a git repository", "git init")


@pytest.mark.e2e
def test_a_subfolder_means_its_repository(bot):
    bot.provider.script(say("from the subfolder"))
    done = bot("run", "hi", *REPO_ARGS, "--repo", str(bot.repo / "pkg"))
    assert done.returncode == 0, done.stderr
    assert "from the subfolder" in done.stdout
    assert [row[0] for row in sessions(bot)] == [f"local:{bot.repo}"]


@pytest.mark.parametrize("failure", [None, "exit", "auth", "provider", "missing", "refused", "timeout", "killed"])
def test_no_failure_but_an_unknown_session_drops_the_session(failure):
    assert _session_lost(SimpleNamespace(ok=False, text="", failure=failure)) is False


def test_the_cli_not_knowing_the_session_drops_it():
    assert _session_lost(SimpleNamespace(ok=False, text="", failure="session_unknown")) is True


def test_a_fresh_turn_that_failed_without_a_session_keeps_the_previous_one():
    db = store.connect(settings=current())
    conversations.ensure(db, "o/r#1")
    conversations.record_turn(db, "o/r#1", "codex", "s-1", fresh=True)
    conversations.record_turn(db, "o/r#1", "codex", None, fresh=True)
    assert conversations.session(db, "o/r#1", "codex").session_id == "s-1"
