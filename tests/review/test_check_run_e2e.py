"""End to end: with `reviews.check_run: true`, each review is also a check run on the head commit,
failing on an important finding and passing once a review finds none."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call, fail, say
from tests.review.world import BUG_LINE, PR, open_world
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
BUG = {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "add() subtracts.", "severity": "important"}


@pytest.fixture
def checked(tmp_path):
    with open_world(tmp_path, bot_yml="reviews:\n  check_run: true\n") as world:
        yield world


def runs(world) -> list[dict]:
    return world.gh.check_runs_of(REPO)


@scenario
def test_a_review_with_an_important_finding_is_a_failing_check_run_on_the_head_commit(checked):
    checked.providers["codex"].script(call("comment_on_line", BUG), say("One bug."))
    checked.ask("@bot codex review")
    checked.answer()
    [review] = checked.reviews()
    [run] = runs(checked)
    assert run["head_sha"] == review["commit_id"] and run["name"] == "bot review"
    assert [(h["status"], h["conclusion"]) for h in run["_history"]] == [("in_progress", None), ("completed", "failure")]
    [note] = run["_annotations"]
    assert (note["path"], note["start_line"], note["annotation_level"]) == ("app.py", BUG_LINE, "failure")


def test_the_next_review_without_the_finding_passes_the_check(checked):
    checked.providers["codex"].script(call("comment_on_line", BUG), say("One bug."))
    checked.ask("@bot codex review")
    checked.answer()
    checked.providers["codex"].script(say("The bug is gone; looks good."))
    checked.ask("@bot codex review", comment_id=7002)
    checked.gh.wait_for(lambda: len([r for r in runs(checked) if r["status"] == "completed"]) == 2, timeout=240)
    assert [r["conclusion"] for r in runs(checked)] == ["failure", "success"]
    assert runs(checked)[1]["output"]["title"] == "No findings at or above important"


def test_a_review_whose_every_agent_fails_concludes_the_check_neutral_with_the_reason(checked):
    checked.providers["codex"].script(*[fail(500, "mock provider outage (FAIL_500)")] * 30)
    checked.ask("@bot codex review")
    checked.answer()
    [run] = runs(checked)
    assert run["conclusion"] == "neutral" and "Every agent failed" in run["output"]["summary"]
    assert checked.reviews() == [] and PR == 2


def test_the_answer_names_the_check_run_and_its_conclusion(checked):
    checked.providers["codex"].script(call("comment_on_line", BUG), say("One bug."))
    checked.ask("@bot codex review")
    answer = checked.answer()
    assert "Check run `bot review`: failure (1 finding at or above important)." in answer
