"""Quiet when there is nothing to say: the tracking comment of a review with nothing at or above the
threshold is taken back (DELETE, as GitHub documents it), and the terminal edit that would follow is
skipped; a surface that cannot take a comment back keeps it for the one-line answer."""
from __future__ import annotations

import httpx

from bot.github.client import RetryingAPI, Thread
from bot.job.tracking import GitHubSurface, TrackingComment
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"


def fake(monkeypatch) -> FakeGitHub:
    gh = FakeGitHub(require_auth=False).start()
    gh.add_repo(REPO)
    gh.add_pull(REPO, 2)
    monkeypatch.setenv("GITHUB_API_URL", gh.url)
    return gh


def test_the_fake_deletes_an_issue_comment_as_github_documents(monkeypatch):
    gh = fake(monkeypatch)
    try:
        comment = gh.add_comment(REPO, 2, "working…", user="bot[bot]")
        url = f"{gh.url}/repos/{REPO}/issues/comments/{comment['id']}"
        assert httpx.delete(url).status_code == 204 and gh.comments(REPO, 2) == []
        assert httpx.delete(url).status_code == 404
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
