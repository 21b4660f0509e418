"""The review grammar: `@bot [agents] review [with agents] [focus]`."""
from __future__ import annotations

from bot.intake.grammar import Command, parse

AGENTS = ("claude", "codex", "gemini", "opencode")


def cmd(body: str) -> Command | None:
    return parse(body, "bot", AGENTS)


def test_bare_review_uses_the_default_agent():
    assert cmd("@bot review") == Command("run", None, False, "", review=True)


def test_agent_and_focus():
    assert cmd("@bot codex review the error handling") == Command(
        "run", "codex", False, "the error handling", review=True, agents=("codex",))


def test_review_with_several_agents():
    assert cmd("@bot review with claude, codex, gemini").agents == ("claude", "codex", "gemini")


def test_several_agents_before_review_with_a_focus():
    command = cmd("@bot claude, codex review the parser")
    assert (command.review, command.agents, command.request) == (True, ("claude", "codex"), "the parser")


def test_agents_joined_by_and():
    assert cmd("@bot review with claude and codex please").agents == ("claude", "codex")
    assert cmd("@bot review with claude and codex please").request == "please"


def test_review_with_an_agent_that_does_not_exist_names_it():
    assert cmd("@bot review with claude, copilot") == Command("unknown_agent", unknown_name="copilot")


def test_review_inside_a_sentence_is_an_ordinary_request():
    command = cmd("@bot codex please review the docs and fix typos")
    assert not command.review and command.request == "please review the docs and fix typos"


def test_reviewer_is_not_review():
    assert not cmd("@bot reviewer notes please").review


def test_alias_in_an_agent_list():
    assert cmd("@bot claude-code, codex review").agents == ("claude", "codex")
