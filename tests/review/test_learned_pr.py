"""bot/review/learned_pr.py: the approved rule's REVIEW.md line and its pull request's title and body,
inert whatever the agents' wording (hypothesis)."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.record import render
from bot.record.render import Rendered
from bot.review import learned_pr
from bot.review.learned import APPROVED, Evidence, Learned

MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")
CLOSING = re.compile(r"(?i)\b(?:fix|fixes|fixed|close|closes|closed|resolve|resolves|resolved) #\d")
IMAGE = re.compile(r"(?<!\\)!\[|(?<!\\)<img", re.IGNORECASE)  # escaped (`\<img`) is text
HOSTILE = st.sampled_from(["@alice", "@org/team", "fixes #12", "Closes #3", "<img src=x>", "![x](http://e/x.png)",
                           "[y](javascript:alert(1))", "`code`", "\n## Heading", "<!-- hidden -->", "*", "_"])
WORDING = st.lists(st.one_of(HOSTILE, st.text(max_size=12)), min_size=1, max_size=6).map(" ".join)


def rule(wording: str, folder: str = "tests") -> Learned:
    return Learned(7, "o/r", folder, "x", wording, APPROVED, (Evidence(1, 11, "t"), Evidence(2, None, "t")), "maint")


def test_a_folder_rule_goes_to_the_folders_review_md_and_a_repository_rule_to_the_roots():
    assert learned_pr.file_path(rule("r")) == "tests/REVIEW.md"
    assert learned_pr.file_path(rule("r", "")) == "REVIEW.md"


def test_the_rule_is_added_under_one_learned_rules_heading():
    once = learned_pr.file_text("# Review\n\nBe kind.\n", rule("No docstrings in tests."))
    twice = learned_pr.file_text(once, rule("Nothing else."))
    assert once == f"# Review\n\nBe kind.\n\n## Learned rules\n- {render.words('No docstrings in tests.')} (learned rule 7)\n"
    assert twice.count("## Learned rules") == 1 and twice.endswith(f"- {render.words('Nothing else.')} (learned rule 7)\n")


def test_the_body_links_every_declined_thread():
    text = learned_pr.body(rule("r"), "https://github.com")
    assert "https://github.com/o/r/pull/1#discussion_r11" in text and "https://github.com/o/r/pull/2\n" not in text
    assert text.endswith("https://github.com/o/r/pull/2")


@settings(max_examples=150, deadline=None)
@given(WORDING)
def test_the_wording_is_inert_in_the_file_title_and_body(wording):
    made = rule(wording)
    parts = [learned_pr.line(made), learned_pr.title(made), learned_pr.body(made, "https://github.com"),
             learned_pr.branch(made)]
    assert all(isinstance(part, Rendered) for part in parts)
    for part in parts:
        assert not MENTION.search(part) and not CLOSING.search(part)
    for markdown in parts[0], parts[2]:  # a title is plain text on GitHub: no markdown, no HTML
        assert not IMAGE.search(markdown)
    assert "\n" not in learned_pr.line(made)  # one line: the wording cannot open a heading of its own
