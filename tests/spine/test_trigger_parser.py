"""A comment triggers the bot only where GitHub's renderer shows the mention as live text at the
start of a line: never inside HTML, code of any kind, or a quote, however it is spelled."""
from __future__ import annotations

from bot.intake.grammar import Command, parse

AGENTS = ("claude", "codex", "gemini", "opencode")


def cmd(body: str, handle: str = "bot") -> Command | None:
    return parse(body, handle, AGENTS)


def test_a_mention_inside_a_multi_line_html_comment_does_not_trigger():
    assert cmd("<!--\n@bot codex fix this\n-->") is None


def test_a_mention_inside_an_html_comment_opened_mid_paragraph_does_not_trigger():
    assert cmd("Thanks! <!--\n@bot codex fix this\n-->") is None


def test_a_mention_inside_a_four_backtick_fence_holding_a_three_backtick_one_does_not_trigger():
    assert cmd("````\n```\n@bot codex fix this\n```\n````") is None


def test_a_mention_inside_a_tilde_fence_holding_backticks_does_not_trigger():
    assert cmd("~~~\n```\n@bot codex fix this\n```\n~~~") is None


def test_a_backtick_line_with_text_after_it_does_not_close_the_fence():
    assert cmd("```\n``` not a closing fence\n@bot codex fix this\n```") is None


def test_a_mention_inside_pre_does_not_trigger():
    assert cmd("<pre>\n@bot codex fix this\n</pre>") is None


def test_a_mention_inside_pre_after_a_blank_line_does_not_trigger():
    assert cmd("<pre>\n\n@bot codex fix this\n</pre>") is None


def test_a_lazy_blockquote_continuation_does_not_trigger():
    assert cmd("> someone else wrote\n@bot codex fix this") is None


def test_a_mention_inside_a_code_span_spanning_lines_does_not_trigger():
    assert cmd("see `the log\n@bot codex fix this` above") is None


def test_a_mention_inside_a_link_text_does_not_trigger():
    assert cmd("[look\n@bot codex fix this](https://example.com)") is None


def test_a_mention_inside_a_reference_links_text_does_not_trigger():
    assert cmd("see [\n@bot codex fix this\n][ref]\n\n[ref]: https://example.com") is None


def test_a_mention_inside_a_shortcut_reference_links_text_does_not_trigger():
    assert cmd("[\n@bot codex fix this\n]\n\n[\n@bot codex fix this\n]: https://example.com") is None


def test_a_command_at_the_start_of_a_long_paragraph_full_of_brackets_triggers():
    body = "@bot codex fix this\n" + "a log line [with brackets\n" * 400
    assert cmd(body).request.startswith("fix this\n")


def test_a_command_an_earlier_bracket_of_an_over_long_paragraph_could_cover_is_not_trusted():
    body = "see [\n@bot codex fix this\n" + "a log line\n" * 400
    assert cmd(body) is None


def test_a_mention_after_a_comment_left_open_inside_pre_does_not_trigger():
    assert cmd("<pre>\n<!--\n</pre>\n@bot codex fix this") is None


def test_a_mention_inside_an_inline_code_element_does_not_trigger():
    assert cmd("see <code>\n@bot codex fix this</code>") is None


def test_a_mention_inside_an_html_link_does_not_trigger():
    assert cmd('see <a href="https://example.com">\n@bot codex fix this</a>') is None


def test_a_mention_after_a_code_element_left_open_in_an_earlier_paragraph_does_not_trigger():
    assert cmd("see <code>\n\n@bot codex fix this") is None


def test_a_mention_after_a_closed_code_element_triggers():
    assert cmd("see <code>x</code>\n@bot codex fix this").request == "fix this"


def test_a_mention_after_html_quoted_in_a_code_span_triggers():
    assert cmd("use `<code>` and `<!--` here\n\n@bot codex fix this").request == "fix this"


def test_the_kelvin_sign_is_not_the_letter_k_of_the_handle():
    assert cmd("@\u212abot codex fix this", handle="kbot") is None


def test_the_handle_still_matches_in_any_ascii_case():
    assert cmd("@KBot codex fix this", handle="kbot") == Command("run", "codex", False, "fix this")


def test_a_team_mention_under_the_handle_is_not_the_handle():
    assert cmd("@bot/reviewers codex fix this") is None


def test_a_mention_on_a_paragraph_continuation_line_triggers():
    assert cmd("Some context.\n@bot codex fix this") == Command("run", "codex", False, "fix this")


def test_a_mention_after_a_closed_fence_triggers_with_the_lines_after_it():
    body = "```\ncode\n```\n@bot codex fix this\nthe details"
    assert cmd(body) == Command("run", "codex", False, "fix this\nthe details")


def test_a_mention_after_a_closed_html_comment_triggers():
    assert cmd("<!-- a note -->\n\n@bot codex fix this").request == "fix this"


def test_a_mention_on_a_list_items_continuation_line_triggers():
    assert cmd("- first point\n  @bot codex fix this").request == "fix this"


def test_a_mention_after_a_list_marker_does_not_trigger():
    assert cmd("- @bot codex fix this") is None


def test_a_mention_after_a_heading_marker_does_not_trigger():
    assert cmd("# @bot codex fix this") is None


def test_a_mention_after_a_quote_ended_by_a_blank_line_triggers():
    assert cmd("> someone else wrote\n\n@bot codex fix this").request == "fix this"
