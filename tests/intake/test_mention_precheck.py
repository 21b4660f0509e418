"""The intake's cheap precheck (bot/intake/grammar.py: may_mention) before the CommonMark parse:
it may say "maybe" where no command is, never "no mention" where the full parser finds one."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.intake.grammar import may_mention, parse

AGENTS = ("claude", "codex")
HANDLES = ("bot", "kbot", "my-bot", "B0t")
# the mention spelled rightly and wrongly, in every case and with look-alikes the parser must not
# fold (the Kelvin sign, dotted and dotless i, the long s)
PIECES = ("@", "@bot", "@BOT", "@Bot", "@kbot", "@KBot", "@\u212abot", "@my-bot", "@MY-BOT", "@b0t", "@B0T",
          "@bot-x", "@bot/team", "mail@bot", "\u0130", "\u0131", "\u017f", "\r\n", "\r", "\n", "\0", " ", "\t",
          "    ", "> ", "```\n", "<!--", "-->", "`", "[", "]", "<pre>", "help", "codex", "review", "stop", "x")

bodies = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.text(max_size=60),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=10).map("".join),
)


@settings(max_examples=600, deadline=None)
@given(body=bodies, handle=st.sampled_from(HANDLES))
def test_the_precheck_never_says_no_mention_where_the_parser_finds_a_command(body, handle):
    if not may_mention(body, handle):
        assert parse(body, handle, AGENTS) is None


def test_a_body_without_the_handle_is_no_mention():
    assert not may_mention("thanks, looks good to me", "bot")


def test_the_handle_in_any_ascii_case_is_a_maybe():
    assert may_mention("hi\n@BoT codex explain", "bot")


def test_no_body_is_no_mention():
    assert not may_mention(None, "bot")
