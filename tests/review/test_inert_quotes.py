"""What a user or a pull request's author wrote comes back in the review inert: the focus typed
after `review`, file names in the skipped list and in the body's list of refused comments."""
from __future__ import annotations

from bot.review.findings import Scope
from bot.review.post import inline_in_body
from bot.review.render import AgentOutcome, review_payload
from tests.markdown_view import code_spans, live

HOSTILE = "x`@org/team`[see](https://evil.example)`<img src=y>"


def body(scope: Scope, focus: str = "") -> str:
    return review_payload([], [AgentOutcome("codex", True)], scope, commit="c" * 40, focus=focus)["body"]


def test_a_focus_with_a_mention_a_link_and_html_comes_back_inert():
    assert live(body(Scope(["app.py"]), focus=f"the parser {HOSTILE} <!-- hidden -->")) == []


def test_a_skipped_file_name_with_a_link_comes_back_inert_and_whole():
    text = body(Scope(["app.py"], [(HOSTILE, "over the budget")]))
    assert live(text) == [] and code_spans(text) == [HOSTILE]


def test_a_file_name_listed_in_the_body_when_github_refused_its_comments_comes_back_inert():
    payload = {"body": "Review", "comments": [{"path": HOSTILE, "line": 3, "side": "RIGHT", "body": "a finding"}]}
    text = inline_in_body(payload)["body"]
    assert live(text) == [] and code_spans(text) == [HOSTILE]
