"""`bot action` refuses an unknown BOT_DEFAULT_AGENT (the action's `agent` input) before it reads
the event or calls GitHub, in one error line with the fix, as `bot serve` and `bot run` do."""
from __future__ import annotations

from bot.cli import main as cli
from tests.action.conftest import payload


def test_an_unknown_default_agent_is_one_error_line_before_any_github_call(github, runner, monkeypatch,
                                                                           capsys):
    monkeypatch.setenv("BOT_DEFAULT_AGENT", "copilot")
    runner.event("issue_comment", payload("issue_comment.created", "@bot fix the typo"))
    assert cli.main(["action"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("::error::BOT_DEFAULT_AGENT='copilot': not an agent (claude, codex, opencode, gemini)")
    assert out.count("\n") == 1 and github.calls == []


def test_the_plan_step_refuses_an_unknown_default_agent_before_anything_is_installed(runner, monkeypatch,
                                                                                       capsys):
    monkeypatch.setenv("BOT_DEFAULT_AGENT", "copilot")
    runner.event("issue_comment", payload("issue_comment.created", "@bot fix the typo"))
    assert cli.main(["action", "plan"]) == 2
    assert capsys.readouterr().out.startswith("::error::BOT_DEFAULT_AGENT='copilot': not an agent")
    assert "agents" not in runner.outputs()
