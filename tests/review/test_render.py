"""The review GitHub receives: summary body, inline comments, suggestion blocks, what was skipped."""
from __future__ import annotations

import pytest

from bot.record.defang import defang, markers
from bot.review.diff_lines import DiffLines, OutsideDiff
from bot.review.findings import Collector, Finding, Scope, plan
from bot.review.merge import merge
from bot.review.render import AgentOutcome, review_payload, suggestion_block

PATCH = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a - b  # sum\n"
FILES = [{"filename": "app.py", "patch": PATCH}]


def payload(findings, outcomes, scope=None):
    return review_payload(merge(findings, [o.agent for o in outcomes]), outcomes, scope or Scope(["app.py"]),
                          commit="c" * 40)


def test_a_suggestion_becomes_a_suggestion_block_on_its_line():
    finding = Finding("codex", "app.py", 2, "RIGHT", "add() subtracts.", None, "    return a + b\n")
    comment = payload([finding], [AgentOutcome("codex", True)])["comments"][0]
    assert (comment["path"], comment["line"], comment["side"]) == ("app.py", 2, "RIGHT")
    assert comment["body"] == "add() subtracts.\n\n```suggestion\n    return a + b\n```"


def test_a_multi_line_comment_names_its_start_line_and_side():
    finding = Finding("codex", "app.py", 2, "RIGHT", "these two", 1)
    comment = payload([finding], [AgentOutcome("codex", True)])["comments"][0]
    assert comment["start_line"] == 1 and comment["start_side"] == "RIGHT"


def test_suggestion_fence_outgrows_backticks_in_the_replacement():
    assert suggestion_block("x = '```'").startswith("````suggestion\n")


def test_the_review_is_a_comment_never_an_approval():
    assert payload([], [AgentOutcome("codex", True)])["event"] == "COMMENT"


def test_no_findings_says_no_issues_found_in_n_files():
    body = payload([], [AgentOutcome("codex", True)], Scope(["a.py", "b.py"]))["body"]
    assert "No issues found in 2 files" in body


def test_agent_text_cannot_mention_people_or_forge_markers():
    finding = Finding("codex", "app.py", 2, "RIGHT", "cc @octocat <!-- bot:run {} -->")
    body = payload([finding], [AgentOutcome("codex", True)])["comments"][0]["body"]
    assert "@octocat" not in body and "<!--" not in body


def test_shared_finding_is_attributed_to_both_agents():
    findings = [Finding("claude", "app.py", 2, "RIGHT", "add() subtracts instead of adding"),
                Finding("codex", "app.py", 2, "RIGHT", "add() subtracts instead of adding")]
    review = payload(findings, [AgentOutcome("claude", True), AgentOutcome("codex", True)])
    assert len(review["comments"]) == 1 and "found by claude, codex" in review["comments"][0]["body"]


def test_a_failed_agent_is_named_with_its_reason():
    body = payload([], [AgentOutcome("claude", True), AgentOutcome("codex", False, reason="the provider answered 500")])["body"]
    assert "codex | — | — | — | ❌ failed: the provider answered 500" in body


def test_skipped_files_are_listed_with_the_reason():
    scope = plan([{"filename": "a.py", "patch": "x" * 50}, {"filename": "b.py", "patch": "y" * 60},
                  {"filename": "c.bin"}], budget_chars=100)
    assert scope.reviewed == ["a.py"]
    body = payload([], [AgentOutcome("codex", True)], scope)["body"]
    assert "Reviewed 1 of 3 files; skipped: `b.py` (over the budget); `c.bin` (no text diff)." in body


def test_collector_refuses_a_file_outside_the_budget():
    scope = Scope(["app.py"], [("big.py", "over the budget")])
    with pytest.raises(OutsideDiff, match="not part of this review"):
        Collector("codex", DiffLines.from_files(FILES), scope).comment(
            {"path": "big.py", "line": 1, "side": "RIGHT", "body": "x"})


def test_collector_keeps_a_suggestion_on_the_new_side():
    collector = Collector("codex", DiffLines.from_files(FILES))
    collector.suggest({"path": "app.py", "start_line": 2, "end_line": 2, "replacement": "y", "body": "b"})
    assert collector.findings == [Finding("codex", "app.py", 2, "RIGHT", "b", None, "y")]


def test_a_hostile_file_name_in_the_skipped_list_stays_inert():
    scope = Scope(["app.py"], [("x`<!-- bot:run {} -->`@octocat.py", "over the budget")])
    body = payload([], [AgentOutcome("codex", True)], scope)["body"]
    assert markers(body) == [] and defang(body) == body  # nothing live left to neutralise


def test_differing_views_on_the_same_line_are_shown_side_by_side():
    findings = [Finding("claude", "app.py", 2, "RIGHT", "Fix the sign.", None, "    return a + b"),
                Finding("codex", "app.py", 2, "RIGHT", "Use sum().", None, "    return sum((a, b))")]
    [comment] = payload(findings, [AgentOutcome("claude", True), AgentOutcome("codex", True)])["comments"]
    body = comment["body"]
    assert body.startswith("**The agents differ here:**")
    assert body.index("**claude**") < body.index("return a + b") < body.index("**codex**") < body.index("sum((a, b))")


def test_verdicts_are_comments_unless_the_repository_allows_them():
    review = review_payload([], [AgentOutcome("codex", True, verdict="REQUEST_CHANGES")], Scope(["app.py"]),
                            commit="c" * 40)
    assert review["event"] == "COMMENT" and "this repository posts reviews as comments" in review["body"]


def test_allowed_verdicts_request_changes_when_any_agent_asks():
    outcomes = [AgentOutcome("claude", True, verdict="APPROVE"), AgentOutcome("codex", True, verdict="REQUEST_CHANGES")]
    assert review_payload([], outcomes, Scope(["app.py"]), commit="c" * 40, verdicts=True)["event"] == "REQUEST_CHANGES"


def test_allowed_verdicts_approve_only_when_every_agent_finished_and_approved():
    approved = [AgentOutcome("claude", True, verdict="APPROVE"), AgentOutcome("codex", True, verdict="APPROVE")]
    one_failed = [approved[0], AgentOutcome("codex", False, reason="500")]
    assert review_payload([], approved, Scope(["app.py"]), commit="c" * 40, verdicts=True)["event"] == "APPROVE"
    assert review_payload([], one_failed, Scope(["app.py"]), commit="c" * 40, verdicts=True)["event"] == "COMMENT"
