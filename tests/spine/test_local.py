"""`bot run`: the same pipeline on a local repository, answer and provenance in the terminal."""
from __future__ import annotations

import re
import shutil
import sqlite3

import pytest

from tests.fakes.provider import call, say
from tests.spine.local_cli import local_cli

pytestmark = pytest.mark.e2e
MARKER = re.compile(r"<!-- bot:run (\{.*?\}) -->")


@pytest.fixture
def local(tmp_path):
    with local_cli(tmp_path) as cli:
        yield cli.run, tmp_path, cli.provider


def test_prints_answer_with_provenance_and_progress(local):
    """The answer and its provenance go to stdout, the live checklist to stderr."""
    bot_run, *_ = local
    done = bot_run("Say hello")
    assert done.returncode == 0, done.stderr
    assert "MOCK_ANSWER[responses]" in done.stdout and "bot runs show" in done.stdout
    assert "· workspace ready" in done.stderr


def test_second_run_resumes_and_new_starts_fresh(local):
    """A second `bot run` in the repository resumes; `--new` starts a fresh session."""
    bot_run, *_ = local
    bot_run("Say hello")
    resumed = bot_run("Second turn please")
    fresh = bot_run("Start over", "--new")
    assert "prior_assistant_turns=1" in resumed.stdout and "resumed session" in resumed.stdout
    assert "prior_assistant_turns=0" in fresh.stdout and "new session (`new` was asked)" in fresh.stdout


def test_session_unknown_to_the_cli_starts_fresh_and_says_why(local):
    """When the CLI lost the session, the run starts fresh and the provenance explains it."""
    bot_run, tmp_path, _ = local
    bot_run("Say hello")
    for home in (tmp_path / "data" / "homes").glob("*/codex/.codex"):
        shutil.rmtree(home / "sessions", ignore_errors=True)
        for state in home.glob("state_*.sqlite*"):
            state.unlink()
    again = bot_run("Are you there")
    assert again.returncode == 0, again.stderr
    assert "no longer known to the CLI" in again.stdout and "prior_assistant_turns=0" in again.stdout


def test_files_the_agent_changed_in_the_checkout_are_counted(local):
    """Local mode edits the user's checkout through the bridge; the provenance counts that file."""
    bot_run, tmp_path, provider = local
    provider.script(call("save_file", {"path": "notes.md", "content": "hi\n"}), say("Saved."))
    done = bot_run("write a note")
    assert (tmp_path / "repo" / "notes.md").read_text() == "hi\n"
    assert "1 file changed: notes.md" in done.stdout


def test_a_local_run_is_recorded_without_a_job(local):
    """`bot run` has no queued job: the run's job_id is NULL, not the text "None"."""
    bot_run, tmp_path, _ = local
    assert bot_run("Say hello").returncode == 0
    with sqlite3.connect(tmp_path / "data" / "bot.db") as db:
        assert db.execute("select job_id from runs").fetchall() == [(None,)]
