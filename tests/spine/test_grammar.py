"""The comment grammar (bot/intake/grammar.py)."""
from __future__ import annotations

from bot.intake.grammar import Command, parse

AGENTS = ("claude", "codex", "gemini", "opencode")


def cmd(body: str) -> Command | None:
    return parse(body, "bot", AGENTS)


def test_agent_and_request_on_one_line():
    """`@bot codex explain this` picks codex and keeps the request."""
    assert cmd("@bot codex explain this") == Command("run", "codex", False, "explain this")


def test_request_without_agent_uses_the_default():
    """No agent word: agent is None so the repository default applies."""
    assert cmd("@bot explain this file") == Command("run", None, False, "explain this file")


def test_new_starts_a_fresh_session():
    """`@bot claude new ...` asks for a fresh session."""
    assert cmd("@bot claude new start over") == Command("run", "claude", True, "start over")


def test_lines_after_the_mention_are_part_of_the_request():
    """The rest of the comment after the command line belongs to the request."""
    body = "Some context.\n@bot codex fix this\nThe stack trace:\n  File x"
    assert cmd(body).request == "fix this\nThe stack trace:\n  File x"


def test_mention_must_be_a_whole_word():
    """`@bot-x` and `email@bot` are not mentions."""
    assert cmd("@bot-x do it") is None and cmd("mail me at me@bot please") is None


def test_mention_inside_a_sentence_does_not_trigger():
    """The mention must start its own line."""
    assert cmd("ask @bot codex later") is None


def test_quoted_mention_does_not_trigger():
    """A quoted line (a reply quoting an earlier command) never triggers."""
    assert cmd("> @bot codex fix this\nI agree") is None


def test_mention_in_a_fenced_code_block_does_not_trigger():
    """Code blocks never trigger."""
    assert cmd("```\n@bot codex fix this\n```") is None


def test_control_words():
    """help, status and stop are commands of their own."""
    assert [cmd(f"@bot {w}").kind for w in ("help", "status", "stop")] == ["help", "status", "stop"]


def test_unknown_agent_is_reported_not_run():
    """A name that looks like another agent gets the agent list, not a run."""
    assert cmd("@bot copilot fix this") == Command("unknown_agent", unknown_name="copilot")


def test_misspelled_agent_is_reported_not_run():
    """A near miss of a known agent name is not silently sent to the default agent."""
    assert cmd("@bot cladue fix this").kind == "unknown_agent"


def test_bare_mention_asks_for_help():
    """`@bot` alone, or with only an agent, answers with usage."""
    assert cmd("@bot").kind == "help" and cmd("@bot codex").kind == "help"


def test_handle_is_case_insensitive():
    """GitHub logins are case-insensitive, so is the mention."""
    assert cmd("@Bot codex hi").agent == "codex"
