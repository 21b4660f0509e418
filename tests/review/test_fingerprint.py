"""bot/review/fingerprint.py: a finding's identity is its file and what it says, not its line."""
from __future__ import annotations

from bot.review.findings import Finding
from bot.review.fingerprint import fingerprint, normalised, of, same_finding


def finding(body: str, path: str = "app.py", line: int = 3, agent: str = "codex") -> Finding:
    return Finding(agent, path, line, "RIGHT", body)


def test_the_same_text_on_a_shifted_line_has_the_same_fingerprint():
    assert of(finding("add() subtracts: it must add.", line=3)) == of(finding("add() subtracts: it must add.", line=9))


def test_markdown_case_numbers_and_a_severity_opening_do_not_change_the_fingerprint():
    assert fingerprint("app.py", "**Nit:** `Add()` subtracts at 3!") == fingerprint("app.py", "add() subtracts at")
    assert normalised("Important: Add() subtracts") == "add subtracts"


def test_another_file_is_another_finding():
    assert of(finding("add() subtracts", path="a.py")) != of(finding("add() subtracts", path="b.py"))


def test_another_agents_alike_wording_is_the_same_finding():
    earlier = finding("add() subtracts instead of adding")
    other = finding("add() subtracts instead of adding the numbers", agent="claude", line=4)
    assert same_finding(earlier.path, of(earlier), normalised(earlier.body), other)
    assert not same_finding(earlier.path, of(earlier), normalised(earlier.body), finding("mul() has no test"))
