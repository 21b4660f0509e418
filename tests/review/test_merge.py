"""The deterministic merge of several agents' findings into one review's comments."""
from __future__ import annotations

import itertools

from bot.review.findings import Finding
from bot.review.merge import merge, tally

AGENTS = ("claude", "codex", "gemini")


def f(agent, line, body, path="app.py", start=None, suggestion=None, side="RIGHT"):
    return Finding(agent, path, line, side, body, start, suggestion)


def test_same_lines_and_similar_text_become_one_finding_attributed_to_both():
    merged = merge([f("claude", 2, "add() subtracts instead of adding"),
                    f("codex", 2, "Bug: add() subtracts b instead of adding it")], AGENTS)
    assert len(merged) == 1 and merged[0].agents == ["claude", "codex"] and not merged[0].contradiction


def test_same_suggestion_on_overlapping_lines_is_one_finding():
    merged = merge([f("claude", 2, "Fix the sign.", suggestion="    return a + b\n"),
                    f("codex", 3, "Use addition here", start=2, suggestion="    return a + b")], AGENTS)
    assert [m.agents for m in merged] == [["claude", "codex"]]


def test_different_suggestions_on_the_same_line_are_kept_side_by_side():
    merged = merge([f("claude", 2, "Fix the sign.", suggestion="    return a + b"),
                    f("codex", 2, "Fix the sign.", suggestion="    return sum((a, b))")], AGENTS)
    assert len(merged) == 1 and merged[0].agents == ["claude"]
    assert [o.agent for o in merged[0].others] == ["codex"]


def test_findings_on_different_lines_stay_apart():
    merged = merge([f("claude", 2, "add() subtracts"), f("codex", 22, "add() subtracts")], AGENTS)
    assert len(merged) == 2


def test_findings_in_different_files_stay_apart():
    merged = merge([f("claude", 2, "add() subtracts"), f("codex", 2, "add() subtracts", path="b.py")], AGENTS)
    assert len(merged) == 2


def test_two_findings_of_one_agent_are_never_merged():
    merged = merge([f("claude", 2, "add() subtracts"), f("claude", 2, "add() subtracts")], AGENTS)
    assert len(merged) == 2


def test_the_merge_does_not_depend_on_the_input_order():
    findings = [f("claude", 2, "add() subtracts instead of adding"), f("codex", 2, "add subtracts instead of adding"),
                f("gemini", 2, "rename the variable", suggestion="x"), f("codex", 22, "y should stay 2")]
    results = {repr([(m.finding, m.agents, m.others) for m in merge(list(order), AGENTS)])
               for order in itertools.permutations(findings)}
    assert len(results) == 1


def test_tally_says_who_found_what():
    merged = merge([f("claude", 2, "add() subtracts instead of adding"),
                    f("codex", 2, "add() subtracts instead of adding!"), f("codex", 22, "y changed")], AGENTS)
    counts = tally(merged, ("claude", "codex"))
    assert counts["claude"] == {"found": 1, "shared": 1, "differs": 0}
    assert counts["codex"] == {"found": 2, "shared": 1, "differs": 0}
