"""A setting every run depends on is refused at `bot serve`'s start, in one line: no traceback, and
no thread ever reads "**foo** is on it" for an agent that does not exist."""
from __future__ import annotations

import pytest

from bot.intake import grammar
from tests.cli.conftest import Bot


@pytest.mark.parametrize(("variable", "value"), [("BOT_SANDBOX_TIER", "7"), ("BOT_DEFAULT_AGENT", "foo")])
def test_serve_refuses_a_bad_setting_in_one_line(bot: Bot, variable, value):
    done = bot("serve", "--port", "0", env={variable: value})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().startswith(f"bot serve: {variable}={value!r}")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("body", ["@bot", "@bot   ", "@bot codex", "@bot codex new", "@bot new \t"])
def test_a_blank_request_in_a_thread_gets_the_usage(body):
    command = grammar.parse(body, "bot", ("claude", "codex"))
    assert command is not None and command.kind == "help"
