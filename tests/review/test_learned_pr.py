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


def rule(wording: str, folder: str = "tests", rule_id: int = 7) -> Learned:
    return Learned(rule_id, "o/r", folder, "x", wording, APPROVED, (Evidence(1, 11, "t"), Evidence(2, None, "t")),
                   "maint")


def test_a_folder_rule_goes_to_the_folders_review_md_and_a_repository_rule_to_the_roots():
    assert learned_pr.file_path(rule("r")) == "tests/REVIEW.md"
    assert learned_pr.file_path(rule("r", "")) == "REVIEW.md"


def test_the_rule_is_added_under_one_learned_rules_heading():
    once = learned_pr.file_text("# Review\n\nBe kind.\n", rule("No docstrings in tests."))
    twice = learned_pr.file_text(once, rule("Nothing else.", rule_id=8))
    assert once == f"# Review\n\nBe kind.\n\n## Learned rules\n- {render.words('No docstrings in tests.')} (learned rule 7)\n"
    assert twice.count("## Learned rules") == 1 and twice.endswith(f"- {render.words('Nothing else.')} (learned rule 8)\n")


def test_the_rule_goes_at_the_end_of_the_learned_rules_section_not_under_the_next_heading():
    text = learned_pr.file_text("## Learned rules\n- A rule.\n\n## Style\nShort lines.\n", rule("W"))
    assert text == f"## Learned rules\n- A rule.\n{learned_pr.line(rule('W'))}\n\n## Style\nShort lines.\n"


def test_an_edited_rules_line_takes_the_place_of_the_one_it_wrote():
    first = learned_pr.file_text("# Review\n", rule("Old words.")) + "- A person's own line.\n"
    edited = learned_pr.file_text(first, rule("New words."))
    assert edited == first.replace(render.words("Old words."), render.words("New words."))


def test_a_moved_rules_line_is_taken_out_and_the_rest_kept():
    first = learned_pr.file_text("# Review\n", rule("Words.", rule_id=8))
    both = learned_pr.file_text(first, rule("Words."))
    assert learned_pr.without(both, rule("Other words.")) == first


def test_a_learned_rules_section_left_empty_goes_with_the_rules_line():
    assert learned_pr.without(learned_pr.file_text("# Review\n\nBe kind.\n", rule("W")), rule("W")) == (
        "# Review\n\nBe kind.\n")
    assert learned_pr.emptied(learned_pr.without(learned_pr.file_text("", rule("Words.")), rule("W")))
    followed = learned_pr.file_text("## Learned rules\n\n## Style\nShort lines.\n", rule("W"))
    assert "## Learned rules" in followed and learned_pr.without(followed, rule("W")) == "## Style\nShort lines.\n"


LINES = st.lists(st.one_of(st.sampled_from(["## Learned rules", "- x (learned rule 7)", "- y (learned rule 8)",
                                            "- x (learned rule 7)\r", "(learned rule 7)", "- (learned rule 7) z", ""]),
                           st.text(alphabet=st.characters(blacklist_categories=["Cc", "Zl", "Zp"]), max_size=20)),
                 max_size=12)


@settings(max_examples=200, deadline=None)
@given(LINES, WORDING, WORDING)
def test_however_often_a_rule_is_edited_the_file_holds_its_line_once_and_every_other_line_as_it_was(
        lines, first, then):
    existing = "\n".join(lines)
    written = learned_pr.file_text(learned_pr.file_text(existing, rule(first)), rule(then))
    assert [t.rstrip("\r") for t in written.split("\n") if learned_pr.wrote(t, rule(then))] == [
        str(learned_pr.line(rule(then)))]
    others = [t for t in lines if not learned_pr.wrote(t, rule(then)) and t.strip()]
    shown = [t for t in learned_pr.without(written, rule(then)).split("\n") if t.strip()]
    assert [t for t in shown if t != learned_pr.HEADING] == [t for t in others if t != learned_pr.HEADING]


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
