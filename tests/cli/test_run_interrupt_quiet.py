"""Ctrl-C in `bot run` is an ordinary stop, not a crash: what the terminal shows after it holds no
traceback from the episode's servers, whether the bridge had a tool call open or the relay a model
call."""
from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys

import pytest

from tests.cli.conftest import ROOT, Bot
from tests.fakes.provider import call, say
from tests.spine.stalling import StallingProvider

pytestmark = pytest.mark.e2e
CRASH_WORDS = ("Traceback", "Exception in ASGI application", "CancelledError")


def test_ctrl_c_during_a_tool_call_shows_no_traceback(bot):
    bot.provider.script(call("run", {"command": "sleep 120"}), say("never"))
    code, shown = bot.on_terminal("run", "wait for me", "--agent", "codex", "--repo", str(bot.repo),
                                  interrupt_at="sleep 120")
    assert code == 130
    assert not [word for word in CRASH_WORDS if word in shown], shown


def test_ctrl_c_while_the_model_answers_shows_no_traceback(bot):
    with StallingProvider() as provider:
        try:
            code, shown = _interrupted_once_asked(bot, provider)
        finally:
            provider.release.set()
    assert code == 130
    assert not [word for word in CRASH_WORDS if word in shown], shown


def _interrupted_once_asked(bot: Bot, provider: StallingProvider) -> tuple[int, str]:
    """`bot run` on a terminal, Ctrl-C once the model was asked; what the terminal showed."""
    leader, follower = pty.openpty()
    env = bot.env | {"BOT_CODEX_BASE_URL": provider.url, "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run", "wait for me", "--agent", "codex",
                             "--repo", str(bot.repo)], env=env, stdin=follower, stdout=follower,
                            stderr=follower, cwd=ROOT, close_fds=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(follower)
    assert provider.asked.wait(120)
    proc.send_signal(signal.SIGINT)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return proc.wait(timeout=240), shown.decode("utf-8", "replace")
