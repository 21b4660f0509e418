"""The pull request the bot opens quotes the request inert: no mention in it notifies anyone."""
from __future__ import annotations

from bot.record import inert, live_mentions
from bot.workspace import effects
from bot.workspace import worktrees as workspace
from bot.workspace.effects import Request
from tests.entry_settings import current
from tests.markdown_view import live, parts

REQUEST = "@bot fix the greeting, cc @octo-org/security\n@mallory please look, see <b>this</b>"


def rendered_text(markdown: str) -> str:
    return " ".join(content for kind, content in parts(markdown) if kind == "text").replace(inert.ZWSP, "")


async def test_a_request_naming_a_user_and_a_team_gives_a_pull_request_body_with_no_live_mention(
        widget, github, api, token):
    """The body quotes the request readably, but no @user, @team or @bot in it is live."""
    wt = await workspace.prepare(widget, f"{widget}#1", current(), token=token)
    (wt.path / "app.py").write_text("print('hello')\n")
    request = Request(agent="codex", text=REQUEST, requester_login="alice", requester_id=4242,
                      number=1, title="Greeting is wrong")
    out = await effects.apply(wt, request, api, token)
    assert out.kind == "pull_request"
    body = github.pulls(widget)[-1]["body"]
    assert list(live_mentions.live_mentions(live_mentions.normalised(body), "bot")) == []
    assert live(body) == []
    shown = rendered_text(body)
    assert "fix the greeting, cc @octo-org/security" in shown and "@mallory please look" in shown
    assert "Fixes #1" in body and "alice" in shown


def test_a_quoted_request_keeps_its_lines_and_blank_lines_inside_one_blockquote():
    quoted = inert.quote("first @alice\n\nsecond <!-- x -->")
    assert quoted.split("\n") == ["> first \\@\u200balice", ">", "> second \\<\\!\\-\\- x \\-\\-\\>"]
    assert [kind for kind, _ in parts(quoted)].count("blockquote_open") == 1 and live(quoted) == []


def test_a_request_longer_than_the_quote_allows_ends_with_an_ellipsis_line():
    quoted = inert.quote("\n".join(f"line {n}" for n in range(inert.MAX_QUOTE_LINES + 5)))
    lines = quoted.split("\n")
    assert len(lines) == inert.MAX_QUOTE_LINES + 1 and lines[-1] == "> …"
