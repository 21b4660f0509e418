"""Quiet when there is nothing to say: the tracking comment of a review with nothing at or above the
threshold is taken back (DELETE, as GitHub documents it), and the terminal edit that would follow is
skipped; a surface that cannot take a comment back keeps it for the one-line answer."""
from __future__ import annotations

from types import SimpleNamespace

import httpx

from bot.github.client import RetryingAPI, Thread
from bot.job.review_quiet import nothing_to_say, thumbs_up
from bot.job.tracking import GitHubSurface, TrackingComment
from bot.review.findings import Finding
from bot.review.merge import Merged
from bot.review.selection import Selection
from bot.workspace.repo_config import ReviewsSection
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"


def fake(monkeypatch) -> FakeGitHub:
    gh = FakeGitHub(require_auth=False).start()
    gh.add_repo(REPO)
    gh.add_pull(REPO, 2)
    monkeypatch.setenv("GITHUB_API_URL", gh.url)
    return gh


def test_the_fake_deletes_an_issue_or_review_comment_as_github_documents(monkeypatch):
    gh = fake(monkeypatch)
    try:
        comment = gh.add_comment(REPO, 2, "working…", user="bot[bot]")
        url = f"{gh.url}/repos/{REPO}/issues/comments/{comment['id']}"
        assert httpx.delete(url).status_code == 204 and gh.comments(REPO, 2) == []
        assert httpx.delete(url).status_code == 404
        reply = gh.add_review_comment(REPO, 2, "working…", user="bot[bot]", path="a.py", line=1)
        assert httpx.delete(f"{gh.url}/repos/{REPO}/pulls/comments/{reply['id']}").status_code == 204
        assert gh.review_comments_of(REPO, 2) == []
        assert gh.conformance_errors == []
    finally:
        gh.stop()


async def test_a_withdrawn_tracking_comment_is_deleted_and_the_terminal_edit_skipped(monkeypatch):
    gh = fake(monkeypatch)
    try:
        async with httpx.AsyncClient() as client:
            thread = Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2)
            tracking = TrackingComment(GitHubSurface(thread, marker="<!-- bot:job 1 -->"), list)
            await tracking.start("**codex** reviewing.")
            assert len(gh.comments(REPO, 2)) == 1
            assert await tracking.withdraw()
            await tracking.finish("✅ nothing to say")
        assert gh.comments(REPO, 2) == [] and gh.calls_to("PATCH", r"/issues/comments/\d+$") == []
    finally:
        gh.stop()


class Terminal:
    """A surface that shows text but cannot take it back (the terminal, an Action's recorder)."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    async def post(self, body: str) -> int:
        self.shown.append(body)
        return 1

    async def edit(self, handle: int | None, body: str) -> None:
        self.shown.append(body)


async def test_a_surface_that_cannot_take_a_comment_back_keeps_it_for_the_answer():
    surface = Terminal()
    tracking = TrackingComment(surface, list)
    await tracking.start("**codex** reviewing.")
    assert not await tracking.withdraw()
    await tracking.finish("✅ codex reviewed `abc1234`: no issues found in 1 file.")
    assert surface.shown[-1].startswith("✅ codex reviewed")


def selection(posted: int = 0, summarised: int = 0, below: int = 0) -> Selection:
    item = Merged(Finding("codex", "app.py", 3, "RIGHT", "x", severity="nit"), ["codex"])
    return Selection([item] * posted, [item] * summarised, [item] * below)


def test_a_review_with_nothing_at_or_above_the_threshold_has_nothing_to_say():
    quiet = ReviewsSection()
    assert nothing_to_say(quiet, selection(below=3), all_finished=True, event="COMMENT")
    assert not nothing_to_say(quiet, selection(posted=1), all_finished=True, event="COMMENT")
    assert not nothing_to_say(quiet, selection(summarised=1), all_finished=True, event="COMMENT")


def test_a_failed_agent_a_verdict_or_quiet_false_is_always_said():
    quiet = ReviewsSection()
    assert not nothing_to_say(quiet, selection(), all_finished=False, event="COMMENT")
    assert not nothing_to_say(quiet, selection(), all_finished=True, event="APPROVE")
    assert not nothing_to_say(ReviewsSection(quiet=False), selection(), all_finished=True, event="COMMENT")


async def test_the_thumbs_up_goes_only_on_a_comment_that_asked():
    reacted: list[tuple[dict, str]] = []

    class Thread:
        async def react(self, target: dict, content: str) -> None:
            reacted.append((target, content))

    for target, placed in [({"type": "issue_comment", "id": 7}, True), ({"type": "review_comment", "id": 8}, True),
                           ({"type": "issue", "id": 2}, False), ({"type": "review", "id": 9}, False), (None, False)]:
        assert await thumbs_up(SimpleNamespace(target=target, thread=Thread())) is placed
    assert reacted == [({"type": "issue_comment", "id": 7}, "+1"), ({"type": "review_comment", "id": 8}, "+1")]
