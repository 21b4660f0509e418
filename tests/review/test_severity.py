"""Severity on review findings: given through the review tools, kept through the merge, shown on
each comment, and the repository's threshold and cap on what is posted."""
from __future__ import annotations

import pytest

from bot.bridge.admission import Refusal
from bot.bridge.catalog import check_arguments, find
from bot.review.diff_lines import DiffLines
from bot.review.findings import Collector, Finding, Scope
from bot.review.merge import merge
from bot.review.render import AgentOutcome, review_payload
from bot.workspace.repo_config import ConfigError, parse

PATCH = "@@ -1,3 +1,30 @@\n" + "".join(f"+line {n}\n" for n in range(1, 31))
FILES = [{"filename": "app.py", "patch": PATCH}]
COMMENT = {"path": "app.py", "line": 2, "side": "RIGHT", "body": "sign"}


def f(agent, line, body, severity, suggestion=None):
    return Finding(agent, "app.py", line, "RIGHT", body, None, suggestion, severity)


def payload(findings, agents=("codex",), **options):
    outcomes = [AgentOutcome(name, True) for name in agents]
    return review_payload(merge(findings, list(agents)), outcomes, Scope(["app.py", "b.py"]), commit="c" * 40,
                          **options)


@pytest.mark.parametrize("tool", ["comment_on_line", "suggest_change"])
def test_the_review_tools_require_a_severity_from_important_nit_and_pre_existing(tool):
    schema = find(tool).schema
    severity = schema["properties"]["severity"]
    assert "severity" in schema["required"] and severity["enum"] == ["important", "nit", "pre-existing"]
    assert all(word in severity["description"] for word in ("important", "nit", "pre-existing"))


def test_a_review_comment_without_a_severity_is_refused_naming_it():
    with pytest.raises(Refusal, match="missing \\['severity'\\]"):
        check_arguments("comment_on_line", COMMENT)


def test_the_collector_keeps_the_severity_the_agent_gave():
    collector = Collector("codex", DiffLines.from_files(FILES))
    collector.comment({**COMMENT, "severity": "nit"})
    collector.suggest({"path": "app.py", "start_line": 3, "end_line": 3, "replacement": "x", "body": "b",
                       "severity": "pre-existing"})
    assert [finding.severity for finding in collector.findings] == ["nit", "pre-existing"]


@pytest.mark.parametrize(("severity", "label"), [("important", "**Important:** "), ("nit", "Nit: "),
                                                 ("pre-existing", "Pre-existing: ")])
def test_each_posted_comment_opens_with_its_severity_label(severity, label):
    [comment] = payload([f("codex", 2, "add() subtracts.", severity)])["comments"]
    assert comment["body"].startswith(label + "add() subtracts.")


def test_agreeing_findings_on_one_line_take_the_highest_severity():
    merged = merge([f("claude", 2, "add() subtracts instead of adding", "nit"),
                    f("codex", 2, "add() subtracts instead of adding", "important")], ["claude", "codex"])
    assert [(m.agents, m.severity) for m in merged] == [(["claude", "codex"], "important")]


def test_differing_views_on_one_line_take_the_highest_severity():
    merged = merge([f("claude", 2, "Fix the sign.", "nit", "    return a + b"),
                    f("codex", 2, "Use sum().", "pre-existing", "    return sum((a, b))")], ["claude", "codex"])
    assert [m.severity for m in merged] == ["pre-existing"]


def test_findings_below_the_minimum_severity_are_not_posted_and_are_counted():
    review = payload([f("codex", 2, "real bug", "important"), f("codex", 5, "naming", "nit")],
                     min_severity="important")
    assert [c["line"] for c in review["comments"]] == [2]
    assert "1 finding below important not posted" in review["body"]


def test_comments_over_the_cap_are_summarised_one_line_each_in_the_body():
    findings = [f("codex", line, f"problem on line {line}\nmore detail", "nit") for line in range(1, 6)]
    review = payload(findings, max_comments=3)
    assert [c["line"] for c in review["comments"]] == [1, 2, 3]
    assert "- also: `app.py`:4 — problem on line 4 (nit)" in review["body"]
    assert "- also: `app.py`:5 — problem on line 5 (nit)" in review["body"]
    assert "more detail" not in review["body"]


def test_the_cap_keeps_the_most_severe_findings_as_comments():
    findings = [f("codex", 1, "style", "nit"), f("codex", 2, "old bug", "pre-existing"), f("codex", 3, "bug", "important")]
    review = payload(findings, max_comments=2)
    assert [c["line"] for c in review["comments"]] == [2, 3]
    assert "- also: `app.py`:1 — style (nit)" in review["body"]


def test_a_review_with_nothing_at_or_above_the_threshold_says_no_issues_found_at_or_above_it():
    review = payload([f("codex", 5, "naming", "nit")], min_severity="important")
    assert review["comments"] == []
    assert "No issues found at or above important in 2 files" in review["body"]


def test_reviews_severity_settings_default_to_everything_ten_comments_no_check_run_and_fail_on_important():
    reviews = parse("").reviews
    assert (reviews.min_severity, reviews.max_comments, reviews.check_run, reviews.fail_on) == (
        "nit", 10, False, "important")


def test_reviews_severity_settings_are_read_from_bot_yml():
    reviews = parse("reviews:\n  min_severity: pre-existing\n  max_comments: 3\n  check_run: true\n"
                    "  fail_on: pre-existing\n").reviews
    assert (reviews.min_severity, reviews.max_comments, reviews.check_run, reviews.fail_on) == (
        "pre-existing", 3, True, "pre-existing")


def test_an_unknown_severity_in_bot_yml_is_refused_with_the_choices():
    with pytest.raises(ConfigError, match="important, pre-existing or nit"):
        parse("reviews:\n  min_severity: blocker\n")
