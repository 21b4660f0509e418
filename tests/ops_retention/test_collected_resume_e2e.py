"""A thread whose CLI home retention collected resumes fresh, with a recap, and says why."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.fakes.provider import FakeProvider
from tests.spine.service import ROOT

pytestmark = pytest.mark.e2e


@pytest.fixture
def local(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "hello.py").write_text("print('hello')\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "i"],
                   check=True)
    with FakeProvider() as provider:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "GITHUB_"))}
        env.update(BOT_DATA_DIR=str(tmp_path / "data"), BOT_CODEX_BASE_URL=provider.url,
                   OPENAI_API_KEY="sk-local-test-0123456789", PYTHONPATH=str(ROOT))

        def bot(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-m", "bot.cli", *args], env=env, capture_output=True,
                                  text=True, timeout=180, cwd=ROOT)

        def bot_run(request: str) -> subprocess.CompletedProcess:
            return bot("run", request, "--agent", "codex", "--repo", str(repo))
        yield bot, bot_run, tmp_path / "data"


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
