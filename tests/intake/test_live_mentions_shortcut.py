"""The plain-text shortcut of bot/record/live_mentions.py: a comment of plain paragraphs is not
parsed, and what it finds live is exactly what the CommonMark parse finds."""
from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bot.record import live_mentions
from bot.record.live_mentions import normalised, plain

HANDLE = "kbot"
# lines that keep a comment plain, and lines that open each block or inline construct
PLAIN_LINES = ("", "   ", "\t", "prose words", "  more prose, with punctuation!", "a | b", "x = 1 * 2 - 3",
               "@kbot codex fix it", "   @kbot", "@KBot review", "@kbotx", "@someone else", "Z~~struck~~ text",
               "a line ending in two spaces  ", "an _emphasis\\", "accents inside: é", "@kbot*em*", "b *open")
OPENING_LINES = ("```", "~~~", "    @kbot indented", "\t@kbot", "> @kbot", ">", "- @kbot", "* x", "+ y",
                 "1. @kbot", "2) z", "# @kbot", "===", "---", "***", "___", "| a | b |", "--- | ---", ":--",
                 "<!--", "<pre>", "see <a href=x>", "[ref]: https://example.com", "see [a link",
                 "`@kbot` span", "see `a span", "its end` @kbot", "\u00a0@kbot",
                 "&#96; entity", "\\@kbot", "@kbot <b>", "Ⓐ@kbot")
CLOSING_LINES = ("its end](x) here", "@kbot codex](x)", "@kbot codex` end", "@kbot -->", "@kbot</a>")
lines = st.sampled_from(PLAIN_LINES + OPENING_LINES + CLOSING_LINES) | st.text(
    alphabet=st.sampled_from("ab @kbot`<[]>#-=*_|~:\\ \t\n1.)(x"), max_size=30)


def parsed(text: str) -> list[int]:
    """The line indexes the CommonMark parse finds live (the path the shortcut skips)."""
    candidates = [index for index, line in enumerate(text.split("\n"))
                  if (match := live_mentions._LINE_START.match(line)) and match.group(1).lower() == HANDLE]
    return list(live_mentions._live_lines(text, candidates)) if candidates else []


@settings(max_examples=1500, deadline=None)
@given(st.lists(lines, max_size=8))
@example(["prose words", "@kbot codex fix it"])
@example(["> quoted", "@kbot lazy continuation"])
@example(["```", "@kbot inside a fence"])
@example(["see [a link", "@kbot codex](x)"])
@example(["see `a span", "@kbot codex` end"])
@example(["see <a href=x>", "@kbot codex"])
@example(["a note <!--", "@kbot codex"])
@example(["    @kbot indented"])
def test_what_the_shortcut_finds_live_is_what_the_parser_finds(document: list[str]) -> None:
    text = normalised("\n".join(document))
    found = [index for index, _ in live_mentions.live_mentions(text, HANDLE)]
    assert found == parsed(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PLAIN_LINES), min_size=1, max_size=8))
def test_a_comment_of_plain_lines_takes_the_shortcut(document: list[str]) -> None:
    assert plain("\n".join(document))


@given(st.lists(st.sampled_from(PLAIN_LINES), max_size=4), st.sampled_from(OPENING_LINES),
       st.lists(st.sampled_from(PLAIN_LINES), max_size=4))
def test_a_comment_with_a_line_that_may_open_a_construct_is_parsed(before: list[str], opening: str,
                                                                   after: list[str]) -> None:
    assert not plain("\n".join([*before, opening, *after]))


def test_a_mention_a_fence_hides_stays_hidden() -> None:
    text = "```\n@kbot codex hidden\n```\n@kbot codex live"
    assert [index for index, _ in live_mentions.live_mentions(text, HANDLE)] == [3]
