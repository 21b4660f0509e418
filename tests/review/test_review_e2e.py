"""End to end: `bot serve`, real agent CLIs in the sandbox against fake providers, the fake GitHub
receiving ONE review whose comments sit on the right path, line and side."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE
from tests.spine.helpers import payload
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
FIX = {"path": "app.py", "start_line": BUG_LINE, "end_line": BUG_LINE, "replacement": "    return a + b",
       "body": "add() subtracts: it must add.", "severity": "important"}


@scenario
def test_one_agent_review_posts_one_review_with_a_suggestion_on_the_buggy_line(world):
    world.providers["codex"].script(call("suggest_change", FIX), say("One bug: add() subtracts."))
    world.ask("@bot codex review")
    answer = world.answer()
    reviews = world.reviews()
    assert len(reviews) == 1, answer
    review = reviews[0]
    assert review["state"] == "COMMENTED" and "Review by codex" in review["body"]
    [comment] = review["_comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("app.py", BUG_LINE, "RIGHT")
    assert "```suggestion\n    return a + b\n```" in comment["body"]
    assert review["html_url"] in answer


def test_comment_outside_the_diff_is_refused_and_the_corrected_retry_lands(world):
    outside = {"path": "app.py", "line": 40, "side": "RIGHT", "body": "add() subtracts.", "severity": "important"}
    world.providers["codex"].script(call("comment_on_line", outside),
                                    call("comment_on_line", {**outside, "line": BUG_LINE}), say("Done."))
    world.ask("@bot codex review the arithmetic")
    world.answer()
    second = world.providers["codex"].main_requests()[1]
    assert "refused: line 40 of app.py" in (second.tool_result or "")
    [review] = world.reviews()
    assert [(c["path"], c["line"]) for c in review["_comments"]] == [("app.py", BUG_LINE)]
    assert "Focus: the arithmetic" in review["body"]


def test_review_on_an_issue_says_it_needs_a_pull_request(world):
    world.gh.add_comment(REPO, 1, "@bot review", user="Codertocat", comment_id=7002)
    data = payload("issue_comment.created", "@bot review")
    data["comment"]["id"] = 7002
    world.service.deliver(data)
    said = world.gh.wait_for(lambda: [c for c in world.gh.comments(REPO, 1) if "needs a pull request" in c["body"]],
                             timeout=120)
    assert len(said) == 1 and world.providers["codex"].requests == []


def test_an_operator_key_the_agent_writes_into_a_comment_is_redacted(world):
    leak = {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "key: sk-test-operator-key-0123456789",
            "severity": "nit"}
    world.providers["codex"].script(call("comment_on_line", leak), say("sk-test-operator-key-0123456789"))
    world.ask("@bot codex review")
    world.answer()
    [review] = world.reviews()
    assert "sk-test-operator-key-0123456789" not in review["body"] + review["_comments"][0]["body"]
