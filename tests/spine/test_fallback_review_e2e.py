"""End to end: `@bot claude review` while Anthropic's API answers 529, with `fallback: [codex]` in
`.github/bot.yml`: the real Codex CLI reviews in Claude's place, and the one review posted says so
in its body; the answer's provenance shows Claude's failed attempt and what it spent."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call, fail, say
from tests.review.world import BUG_LINE, open_world

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
FIX = {"path": "app.py", "start_line": BUG_LINE, "end_line": BUG_LINE, "replacement": "    return a + b",
       "body": "add() subtracts: it must add.", "severity": "important"}


def test_a_review_by_an_overloaded_claude_is_posted_by_codex_and_says_so(tmp_path):
    with open_world(tmp_path, bot_yml="fallback: [codex]\n") as world:
        world.providers["claude"].outage(fail(529, "Overloaded", retry_after="30"), api="anthropic")
        world.providers["codex"].script(call("suggest_change", FIX), say("One bug: add() subtracts."))
        world.ask("@bot claude review")
        answer = world.answer()
        [review] = world.reviews()
    assert "### Review by codex\n\n↪️ Claude was overloaded; answered by Codex." in review["body"], review["body"]
    assert [(c["path"], c["line"]) for c in review["_comments"]] == [("app.py", BUG_LINE)]
    assert "before: claude overloaded (HTTP 529), 0 tokens, $0.00" in answer, answer
    assert "by codex." in answer, answer
