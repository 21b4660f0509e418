"""End to end: a real CLI gives severities through the review tools; the posted comments show them,
and over the repository's cap the rest are listed in the review body."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE, open_world

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
BUG = {"path": "app.py", "start_line": BUG_LINE, "end_line": BUG_LINE, "replacement": "    return a + b",
       "body": "add() subtracts: it must add.", "severity": "important"}
DOC = {"path": "app.py", "line": 1, "side": "RIGHT", "body": "Put a blank line after the docstring.", "severity": "nit"}


def test_the_posted_comments_open_with_the_severity_the_agent_gave(world):
    world.providers["codex"].script(call("suggest_change", BUG), call("comment_on_line", DOC), say("Two remarks."))
    world.ask("@bot codex review")
    world.answer()
    [review] = world.reviews()
    bodies = {c["line"]: c["body"] for c in review["_comments"]}
    assert bodies[BUG_LINE].startswith("**Important:** add() subtracts")
    assert bodies[1].startswith("Nit: Put a blank line")


def test_over_the_cap_the_least_severe_finding_is_listed_in_the_review_body(tmp_path):
    with open_world(tmp_path, bot_yml="reviews:\n  max_comments: 1\n") as world:
        world.providers["codex"].script(call("suggest_change", BUG), call("comment_on_line", DOC), say("Two."))
        world.ask("@bot codex review")
        answer = world.answer()
        [review] = world.reviews()
    assert [c["line"] for c in review["_comments"]] == [BUG_LINE]
    assert "- also: `app.py`:1 — Put a blank line after the docstring\\. (nit)" in review["body"]
    assert "1 comment and 1 more listed in it" in answer
