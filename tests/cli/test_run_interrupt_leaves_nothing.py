"""Ctrl-C on `bot run` ends every process the run started (the layer launcher, bubblewrap and what
runs in it: the agent's CLI, a command it ran through the bridge) and removes the layers' scratch
folders: nothing of the run is left once `bot run` has exited. Nor once it was killed."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.cli.test_run_interrupt_quiet import _interrupted_once_asked
from tests.cli.test_run_interrupted import kill_while_running
from tests.fakes.provider import call, say
from tests.leftovers import left_running
from tests.spine.stalling import StallingProvider

pytestmark = pytest.mark.e2e


def interrupted_during_a_command(bot, scratch: Path) -> None:
    scratch.mkdir()
    bot = dataclasses.replace(bot, env=bot.env | {"TMPDIR": str(scratch)})
    bot.provider.script(call("run", {"command": "sleep 120"}), say("never"))
    code, shown = bot.on_terminal("run", "wait for me", "--agent", "codex", "--repo", str(bot.repo),
                                  interrupt_at="sleep 120")
    assert code == 130, shown


def test_ctrl_c_leaves_no_process_of_the_run_alive(bot):
    interrupted_during_a_command(bot, bot.tmp / "scratch")
    assert left_running(str(bot.tmp)) == []


def test_ctrl_c_removes_the_layers_scratch(bot):
    interrupted_during_a_command(bot, bot.tmp / "scratch")
    left_running(str(bot.tmp))
    assert sorted(path.name for path in (bot.tmp / "scratch").glob("bot-layers-*")) == []


def test_ctrl_c_while_the_model_answers_leaves_no_process_of_the_run_alive(bot):
    with StallingProvider() as provider:
        try:
            code, shown = _interrupted_once_asked(bot, provider)
        finally:
            provider.release.set()
    assert code == 130, shown
    assert left_running(str(bot.tmp)) == []


def test_a_killed_run_leaves_no_process_of_the_run_alive(bot):
    kill_while_running(bot)
    assert left_running(str(bot.tmp)) == []
