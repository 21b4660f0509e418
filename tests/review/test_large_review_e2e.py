"""End to end: a pull request over the repository's review budget is reviewed in part, and the
review says what was not reviewed; the agent cannot comment on a file left out."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE, open_world

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]


@pytest.fixture
def large(tmp_path):
    with open_world(tmp_path, bot_yml="reviews:\n  budget: 1000\n", extra={"big.py": "x = 1\n" * 300}) as world:
        yield world


def test_files_over_the_budget_are_listed_and_refused(large):
    codex = large.providers["codex"]
    codex.script(call("comment_on_line", {"path": "big.py", "line": 1, "side": "RIGHT", "body": "why?", "severity": "nit"}),
                 call("comment_on_line", {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "sign", "severity": "important"}),
                 say("Done."))
    large.ask("@bot codex review")
    answer = large.answer()
    [review] = large.reviews()
    assert "Reviewed 1 of 2 files; skipped: `big.py` (over the budget)." in review["body"], answer
    assert [c["path"] for c in review["_comments"]] == ["app.py"]
    assert "big.py is not part of this review (over the budget)" in codex.main_requests()[1].tool_result
    assert "Not part of this review: big.py (over the budget)" in codex.main_requests()[0].last_user_text
