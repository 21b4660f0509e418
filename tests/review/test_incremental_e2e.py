"""End to end, with real CLIs against the fakes: a review, a push, and the re-review that covers only
what changed, re-posts nothing, answers and resolves what was fixed, falls back to a whole review
after a force-push, and skips what a maintainer declined, whichever agent finds it again."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE, HEAD_APP, PR, open_world
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
BUG = {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "add() subtracts: it must add.",
       "severity": "important"}
UTIL = "def double(x):\n    return 2 * x\n"


@pytest.fixture
def world(tmp_path):
    # these re-reviews are read for what their body says of the earlier findings: posted even with nothing new
    with open_world(tmp_path, bot_yml="reviews:\n  quiet: false\n", extra={"util.py": UTIL}) as opened:
        yield opened


def first_review(world) -> dict:
    world.providers["codex"].script(call("comment_on_line", BUG), say("One bug."))
    world.ask("@bot codex review")
    world.answer()
    [review] = world.reviews()
    return review


@scenario
def test_a_review_after_a_push_covers_only_the_changed_file_and_reposts_nothing(world):
    first = first_review(world)
    world.push({"util.py": UTIL + "\n\ndef triple(x):\n    return 3 * x\n"})
    world.providers["codex"].script(call("comment_on_line", BUG), say("The bug is still there."))
    world.ask("@bot codex review", comment_id=7002)
    world.answer(nth=2)
    second = world.reviews()[1]
    assert second["_comments"] == [], second["body"]
    assert f"Since `{first['commit_id'][:7]}`: 1 file (of 2 files in the pull request)." in second["body"]
    assert "1 earlier finding is still open (not posted again)." in second["body"]
    asked = world.providers["codex"].main_requests()[2].last_user_text
    assert "Files to review (1 of 1): util.py." in asked and "1: app.py:3 (important)" in asked


def test_a_fixed_finding_is_answered_fixed_in_the_new_head_and_its_thread_resolved(world):
    first = first_review(world)
    [comment] = first["_comments"]
    head = world.push({"app.py": HEAD_APP.replace("return a - b\n\n\ndef sub", "return a + b\n\n\ndef sub")})
    world.providers["codex"].script(call("resolve_finding", {"finding": 1, "status": "fixed", "reason": "adds"}),
                                    say("Fixed."))
    world.ask("@bot codex review", comment_id=7002)
    answer = world.answer(nth=2)
    replies = [c for c in world.gh.review_comments_of(REPO, PR) if c.get("in_reply_to_id") == comment["id"]]
    assert [r["body"].split("\n")[0] for r in replies] == [f"Fixed in `{head[:7]}`."]
    assert world.gh.thread_resolved(REPO, comment["id"]) == (True, None)
    assert "1 earlier finding fixed in" in world.reviews()[1]["body"] and "1 earlier finding fixed" in answer


def test_a_force_push_that_dropped_the_reviewed_commit_gives_a_whole_review_that_says_why(world):
    first = first_review(world)
    world.push({"util.py": UTIL + "# rewritten\n"}, rewrite=True)
    world.providers["codex"].script(say("Looks fine."))
    world.ask("@bot codex review", comment_id=7002)
    world.answer(nth=2)
    body = world.reviews()[1]["body"]
    assert (f"Whole review: the commit reviewed last, `{first['commit_id'][:7]}`, is no longer in the pull "
            f"request's history (a force-push rewrote it).") in body
    assert "Reviewed 2 files." in body


def test_a_declined_finding_is_not_raised_again_by_another_agent(world):
    nit = {**BUG, "body": "Name the helper `plus` instead.", "severity": "nit"}
    world.providers["codex"].script(call("comment_on_line", nit), say("A nit."))
    world.ask("@bot codex review")
    world.answer()
    [comment] = world.reviews()[0]["_comments"]
    world.gh.add_review_comment(REPO, PR, "Won't fix: the name is on purpose.", user="Codertocat",
                                path="app.py", line=BUG_LINE, in_reply_to=comment["id"], association="MEMBER")
    world.providers["claude"].script(call("comment_on_line", {**nit, "line": BUG_LINE}), say("A nit."))
    world.ask("@bot claude review", comment_id=7002)
    world.answer(nth=2)
    second = world.reviews()[1]
    assert second["_comments"] == [] and "1 finding skipped as declined earlier" in second["body"]
    assert "declined these earlier findings" in world.providers["claude"].main_requests()[0].last_user_text
