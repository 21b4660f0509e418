"""Where `bot run` keeps its data when BOT_DATA_DIR is unset, and what it counts as changed."""
from __future__ import annotations

import json

import pytest

from tests.fakes.provider import call, say

pytestmark = pytest.mark.e2e


def test_without_bot_data_dir_a_run_writes_to_the_per_user_data_dir_not_the_checkout(bot):
    bot.provider.script(say("ok"))
    xdg = bot.tmp / "xdg"
    done = bot.run("say ok", env={"BOT_DATA_DIR": "", "XDG_DATA_HOME": str(xdg)}, cwd=bot.repo)
    assert done.returncode == 0, done.stderr
    assert (xdg / "github-agent-bot" / "bot.db").is_file()
    assert not (bot.repo / ".bot-data").exists()
    listed = bot("runs", "list", env={"BOT_DATA_DIR": "", "XDG_DATA_HOME": str(xdg)}, cwd=bot.tmp)
    assert "say ok" in listed.stdout


def test_python_run_in_the_checkout_leaves_no_pycache_counted_as_changed(bot):
    bot.provider.script(call("run", {"command": "python3 -c 'import pkg.mod' && ls pkg"}), say("Imported."))
    done = bot.run("import the module", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["provenance"]["files_changed"] == []


def test_python_run_by_the_agent_writes_no_bytecode_into_the_checkout(bot):
    bot.provider.script(call("run", {"command": "python3 -c 'import pkg.mod'"}), say("Imported."))
    assert bot.run("import the module").returncode == 0
    assert not (bot.repo / "pkg" / "__pycache__").exists()
