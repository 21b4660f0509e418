"""A thread whose CLI home retention collected resumes fresh, with a recap, and says why."""
from __future__ import annotations

import sqlite3
import time

import pytest

from tests.spine.local_cli import local_cli

pytestmark = pytest.mark.e2e


@pytest.fixture
def local(tmp_path):
    with local_cli(tmp_path) as cli:
        yield cli.bot, cli.run, cli.data


def test_a_thread_whose_home_was_collected_starts_fresh_and_says_so(local):
    bot, bot_run, data = local
    first = bot_run("Say hello")
    assert first.returncode == 0, first.stdout + first.stderr
    with sqlite3.connect(data / "bot.db") as conn:  # the thread has been idle for 20 days
        conn.execute("UPDATE conversations SET last_active_at = ?", [time.time() - 20 * 86_400])
        conn.execute("UPDATE sessions SET last_used_at = ?", [time.time() - 20 * 86_400])
    gc = bot("gc")
    assert gc.returncode == 0, gc.stderr
    assert "1 CLI home(s)" in gc.stdout
    again = bot_run("Are you there")
    assert again.returncode == 0, again.stderr
    assert "new session (the saved session was cleared after 20 days without activity)" in again.stdout
    assert "prior_assistant_turns=0" in again.stdout
    assert "no longer known to the CLI" not in again.stdout  # no resume was even tried
