"""Threat model class 8: what the bot commits and opens closes nothing the bot did not mean.

An outsider's issue title and a requester's words go into the commit message and the pull request's
title and body; GitHub closes an issue named after a closing keyword when the commit or the pull
request is merged (a squash merge takes the title as the commit's subject), and notifies a team
mentioned in a title. Only the bot's own `Fixes #<the issue>` may act."""
from __future__ import annotations

from bot.workspace import effects
from bot.workspace import worktrees as workspace
from bot.workspace.effects import Request
from tests.entry_settings import current
from tests.record.github_view import acts, plain_acts
from tests.workspace.conftest import sh_git

TITLE = "Crash on start; closes #1, fixes #2 cc @octo-org/security"


async def opened(widget: str, token: str, api, text: str, title: str) -> effects.Outcome:
    wt = await workspace.prepare(widget, f"{widget}#9", current(), token=token)
    (wt.path / "app.py").write_text("print('hello')\n")
    request = Request(agent="codex", text=text, requester_login="alice", requester_id=4242, number=9, title=title)
    out = await effects.apply(wt, request, api, token)
    assert out.kind == "pull_request"
    return out


async def test_an_issue_title_with_closing_keywords_closes_nothing_from_the_commit_or_the_pull_request_title(
        remote, widget, github, api, token):
    out = await opened(widget, token, api, "fix it", TITLE)
    message = sh_git("log", "-1", "--format=%B", out.commit_sha, cwd=remote.path(widget))
    pull = github.pulls(widget)[-1]
    assert plain_acts(message) == [] and plain_acts(pull["title"]) == []
    assert "Crash on start" in pull["title"] and "#1" in message


async def test_a_requesters_words_naming_a_fix_close_nothing_from_the_commit_message(
        remote, widget, github, api, token):
    out = await opened(widget, token, api, "look at why the fix #12 regressed and resolve owner/repo#3", "Bug")
    message = sh_git("log", "-1", "--format=%B", out.commit_sha, cwd=remote.path(widget))
    assert plain_acts(message) == [] and plain_acts(github.pulls(widget)[-1]["title"]) == []


async def test_a_team_mention_in_the_issue_title_is_not_live_in_the_pull_request_title(
        remote, widget, github, api, token):
    await opened(widget, token, api, "fix it", TITLE)
    title = github.pulls(widget)[-1]["title"]
    assert not [found for found in plain_acts(title) if found.startswith("mention")]
    assert "octo-org/security" in title.replace("\u200b", "")


async def test_the_pull_request_body_closes_only_the_issue_it_was_asked_from(remote, widget, github, api, token):
    await opened(widget, token, api, f"please, this fixes #2 too: {TITLE}", TITLE)
    body = github.pulls(widget)[-1]["body"]
    assert [found for found in acts(body) if found.startswith("closing")] == ["closing Fixes #9"]
