"""The renderer's edge, property-checked: random user and agent text, generated from the grammar of
what acts on GitHub (links, images, autolinks, www and http addresses, mentions, team mentions,
closing keywords with every kind of reference, entities, raw HTML) mixed with code spans and blocks,
markdown structure and punctuation noise, rendered, then read as GitHub would
(tests/record/github_view.py): nothing in it acts, and its code is still there to read."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.record import render
from tests.record.github_view import acts, code_texts, plain_acts, visible

WORD = st.text("abcxyzABC0189-_.", min_size=1, max_size=8)
URL = st.builds(lambda scheme, host, path: f"{scheme}{host}.example/{path}",
                st.sampled_from(["https://", "http://", "HTTPS://", "ftp://", "www.", "https://www."]),
                WORD, st.text("abc/_-.()?=&#%~*", max_size=10))
REFERENCE = st.one_of(st.integers(1, 999).map(lambda n: f"#{n}"), st.integers(1, 99).map(lambda n: f"GH-{n}"),
                      st.builds(lambda o, n: f"{o}/repo#{n}", WORD, st.integers(1, 99)),
                      st.builds(lambda n, kind: f"https://github.com/o/r/{kind}/{n}", st.integers(1, 99),
                                st.sampled_from(["issues", "pull"])),
                      st.integers(1, 99).map(lambda n: f"&#35;{n}"), st.integers(1, 99).map(lambda n: f"**#{n}**"))
KEYWORD = st.sampled_from(["close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves",
                           "resolved", "Fixes", "CLOSES", "Resolved"])
ACTING = st.one_of(
    st.builds(lambda t, u: f"[{t}]({u})", WORD, URL),
    st.builds(lambda t, u: f"[{t}]({u} \"title\")", WORD, URL),
    st.builds(lambda a, u: f"![{a}]({u})", WORD, URL),
    st.builds(lambda u: f"<{u}>", URL),
    URL,
    st.builds(lambda t, u: f"[{t}][r]\n\n[r]: {u}", WORD, URL),
    st.builds(lambda u: f'<img src="{u}">', URL),
    st.builds(lambda u, t: f'<a href="{u}">{t}</a>', URL, WORD),
    st.builds(lambda w: f"@{w[0].replace('-', 'a').replace('_', 'b').replace('.', 'c')}{w}", WORD),
    st.builds(lambda o, t: f"@o{o}/t{t}", WORD, WORD),
    st.builds(lambda w: f"&#64;a{w}", WORD),
    st.builds(lambda k, gap, r: f"{k}{gap}{r}", KEYWORD, st.sampled_from([" ", ": ", "  ", "\n", " \\"]), REFERENCE),
    st.sampled_from(["<!-- bot:run {} -->", "<details><summary></summary>x</details>", "\\", "`", "``", "[", "]",
                     "(", ")", "<", ">", "&", "!", "*", "_", "~~", "|", "#", "@", ":", "/"]),
)
CODE = st.one_of(st.builds(lambda c: f"`{c}`", st.text("ab @#:/.<>[]()!", min_size=1, max_size=12)
                           .filter(lambda c: c.strip() and "`" not in c)),
                 st.builds(lambda c: f"\n```\n{c}\n```\n", st.text("ab @#:/.<>[]()!\n", max_size=20)
                           .filter(lambda c: "`" not in c)))
PIECE = st.one_of(ACTING, CODE, WORD)
SEPARATOR = st.sampled_from([" ", " ", "\n", "\n\n", "\n> ", "\n- ", "\n1. ", " | ", "\n    ", "**", "_"])
TEXT = st.builds(lambda pieces, seps: "".join(p + s for p, s in zip(pieces, seps, strict=False)),
                 st.lists(PIECE, max_size=12), st.lists(SEPARATOR, min_size=12, max_size=12))
MUTATED = st.one_of(TEXT, st.builds(lambda t, noise, at: t[:at] + noise + t[at:], TEXT,
                                    st.text("[]()<>`\\!@#&*_:/w. \n", max_size=6), st.integers(0, 200)))
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(MUTATED)
def test_nothing_an_agent_or_a_user_wrote_acts_once_rendered(text):
    assert acts(render.markdown(text)) == []


@PROPERTY
@given(MUTATED)
def test_the_code_in_what_they_wrote_is_still_there_to_read(text):
    seen = visible(render.markdown(text))  # a code span's line ending reads as a space
    lines = [" ".join(line.split()) for code in code_texts(text) for line in code.split("\n") if line.strip()]
    assert [line for line in lines if line not in seen] == []


@PROPERTY
@given(MUTATED)
def test_rendering_rendered_text_again_changes_nothing(text):
    once = render.markdown(text)
    assert render.markdown(str(once)) == once


@PROPERTY
@given(MUTATED)
def test_a_title_or_a_commit_message_made_of_their_words_closes_and_notifies_no_one(text):
    assert plain_acts(render.title(text)) == [] and plain_acts(render.plain(text)) == []


@PROPERTY
@given(MUTATED)
def test_their_words_quoted_or_inline_in_the_bots_markdown_act_on_nothing(text):
    assert acts(render.words(text)) == [] and acts(render.quote(text)) == []


@PROPERTY
@given(MUTATED)
def test_the_last_gate_leaves_no_closing_keyword_team_mention_or_image_in_what_the_bot_composed(text):
    """`outgoing` sees the bot's own markdown, whose links and mentions it keeps: what it must
    never let through are the things the bot never means in a comment."""
    left = [found for found in acts(render.outgoing(text))
            if found.startswith(("closing", "image")) or (found.startswith("mention") and "/" in found)]
    assert left == []
