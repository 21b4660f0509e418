"""Text a user (or a repository) wrote comes back in the bot's comments inert: shown as written,
nothing live. GitHub's view is taken from a CommonMark/GFM parse of the comment: a mention or a
bare URL counts where it is rendered text, a link, image or HTML wherever the parser makes one."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.job import replies
from bot.record import inert
from bot.workspace.repo_config import ConfigError
from bot.workspace.repo_config import parse as parse_repo_config
from tests.markdown_view import code_spans, live, parts

AGENTS = ("claude", "codex")


def test_the_unknown_agent_reply_leaves_a_team_mention_and_a_link_inert():
    word = "copilot`@org/team`[see](https://evil.example)`"
    reply = replies.unknown_agent(word, AGENTS)
    assert live(reply) == [] and code_spans(reply)[0] == word


def test_a_word_of_backticks_only_is_quoted_whole():
    assert code_spans(f"a {inert.code('```')} b") == ["```"]


def test_a_word_starting_and_ending_with_backticks_keeps_them():
    assert code_spans(f"a {inert.code('`x`')} b") == ["`x`"]


def test_a_quoted_word_loses_its_newlines_and_shows_its_html_as_text():
    quoted = inert.code("x\n\n<img src=x onerror=alert(1)>\n@org/team")
    assert "\n" not in quoted and live(f"a {quoted} b") == []
    assert code_spans(f"a {quoted} b") == ["x <img src=x onerror=alert(1)> @org/team"]


def test_a_quoted_word_loses_its_bidi_controls():
    assert code_spans(inert.code("abc\u202edcb")) == ["abcdcb"]


def test_a_long_word_is_cut():
    assert len(code_spans(inert.code("x" * 5000))[0]) == inert.MAX_CHARS


def test_prose_keeps_its_words_and_loses_its_mentions_links_and_html():
    said = "look at @org/team, <!-- hidden --> [this](https://evil.example) and www.evil.example *now*"
    assert live(f"Focus: {inert.text(said)}") == []


def test_prose_renders_as_it_was_written_apart_from_zero_width_spaces():
    said = "fix *this* `now` <b>here</b> [x](y) #12"
    rendered = "".join(content for kind, content in parts(inert.text(said)) if kind == "text")
    assert rendered.replace(inert.ZWSP, "") == said


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("`@/:.w <>![]()*_~\\|#-\nab"), max_size=40))
def test_any_word_is_one_code_span_holding_it_and_nothing_live(word):
    reply = f"I don't know {inert.code(word)} here."
    shown = [span.replace(inert.ZWSP, "") for span in code_spans(reply)]
    assert live(reply) == [] and shown == [" ".join(word.split()) or " "]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("`@/:.w <>![]()*_~\\|#-=\n&;ab"), max_size=40))
def test_any_prose_is_one_line_of_plain_text(said):
    reply = f"Focus: {inert.text(said)}"
    assert live(reply) == [] and [kind for kind, _ in parts(reply) if kind not in ("text",)] == \
        ["paragraph_open", "paragraph_close"]


def test_a_repository_value_quoted_in_a_configuration_error_comes_back_inert():
    with pytest.raises(ConfigError) as refused:
        parse_repo_config('default_agent: "x`@org/team`[see](https://evil.example)`"\n')
    assert live(refused.value.comment()) == []


def test_an_unknown_key_named_in_a_configuration_error_comes_back_inert():
    with pytest.raises(ConfigError) as refused:
        parse_repo_config('"x`@org/team`": 1\n')
    assert live(refused.value.comment()) == []


def test_a_session_id_the_cli_reported_comes_back_inert_in_the_status_reply():
    session = SimpleNamespace(agent="codex", session_id="x`@org/tm`y", turns=1)
    text = replies.status("octo/repo#1", [session], [])
    assert live(text) == [] and "x`@org/tm`y" in code_spans(text)
