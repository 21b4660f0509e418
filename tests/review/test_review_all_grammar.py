"""`@bot review all`: a review that starts over (the whole pull request, in a fresh session)."""
from __future__ import annotations

from bot.intake.grammar import parse

AGENTS = ("claude", "codex", "gemini", "opencode")


def test_review_all_starts_over():
    command = parse("@bot review all", "bot", AGENTS)
    assert command.review and command.new_session and command.request == ""


def test_review_all_keeps_the_agents_and_the_focus_after_it():
    command = parse("@bot codex review all, the error handling", "bot", AGENTS)
    assert (command.agents, command.new_session, command.request) == (("codex",), True, "the error handling")


def test_a_focus_that_starts_with_the_word_all_later_is_only_a_focus():
    command = parse("@bot review allocation paths", "bot", AGENTS)
    assert command.review and not command.new_session and command.request == "allocation paths"
