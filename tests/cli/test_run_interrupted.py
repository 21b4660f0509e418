"""A `bot run` that was interrupted (Ctrl-C) or killed never stays "running" in `bot runs list`:
Ctrl-C records it stopped at once, a killed one is found interrupted at the next start, and
either lists its request."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.cli.conftest import ROOT
from tests.fakes.provider import call, say

pytestmark = pytest.mark.e2e
WAITING = (call("run", {"command": "sleep 120"}), say("never"))


def interrupt(bot) -> str:
    bot.provider.script(*WAITING)
    code, shown = bot.on_terminal("run", "wait for me", "--agent", "codex", "--repo", str(bot.repo),
                                  interrupt_at="sleep 120")
    assert code == 130, shown
    return shown


def runs(bot) -> list[dict]:
    return json.loads(bot("runs", "list", "--json").stdout)


def running_rows(bot) -> int:
    try:
        with sqlite3.connect(bot.tmp / "data" / "bot.db") as db:
            return db.execute("select count(*) from runs where status = 'running'").fetchone()[0]
    except sqlite3.OperationalError:  # no database or no table yet
        return 0


def kill_while_running(bot) -> None:
    """SIGKILL to `bot run` (and its process group) once its agent was told to run a long command."""
    bot.provider.script(WAITING[0])
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run", "wait for me", "--agent", "codex",
                             "--repo", str(bot.repo)], env=bot.env, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not bot.provider.main_requests() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert running_rows(bot) == 1 and bot.provider.main_requests()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


def test_ctrl_c_records_the_run_as_stopped(bot):
    interrupt(bot)
    assert [run["status"] for run in runs(bot)] == ["stopped"]


def test_a_stopped_run_lists_its_request_not_its_thread(bot):
    interrupt(bot)
    row = bot("runs", "list", env={"COLUMNS": "200"}).stdout.splitlines()[1]
    assert row.endswith("  wait for me") and "local:" not in row


def test_a_killed_run_shows_as_interrupted_after_the_next_start(bot):
    kill_while_running(bot)
    bot.provider.script(say("back again"))
    assert bot.run("again").returncode == 0
    assert [(run["status"], run["request"]) for run in runs(bot)] == [("ok", "again"), ("interrupted", "wait for me")]
