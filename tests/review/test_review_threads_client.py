"""The GitHub client's review threads (GraphQL): listing a pull request's threads and resolving one,
against the fake GitHub."""
from __future__ import annotations

import httpx

from bot.github.client import RetryingAPI, Thread, graphql_url
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"


def fake(monkeypatch) -> tuple[FakeGitHub, int]:
    gh = FakeGitHub(require_auth=False).start()
    gh.add_repo(REPO)
    gh.add_pull(REPO, 2)
    top = gh.add_review_comment(REPO, 2, "Nit: rename", user="bot[bot]", user_type="Bot", path="app.py", line=3)
    gh.add_review_comment(REPO, 2, "won't fix", user="alice", path="app.py", line=3, in_reply_to=top["id"],
                          association="MEMBER")
    monkeypatch.setenv("GITHUB_API_URL", gh.url)
    return gh, top["id"]


async def test_the_threads_of_a_pull_request_list_each_comment_with_its_author_and_association(monkeypatch):
    gh, top = fake(monkeypatch)
    try:
        async with httpx.AsyncClient() as client:
            [node] = await Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2).review_threads()
        first, reply = node["comments"]["nodes"]
        assert (first["databaseId"], first["author"]["login"]) == (top, "bot")
        assert (reply["body"], reply["authorAssociation"], node["isResolved"]) == ("won't fix", "MEMBER", False)
    finally:
        gh.stop()


async def test_resolving_a_thread_is_the_resolveReviewThread_mutation(monkeypatch):
    gh, top = fake(monkeypatch)
    try:
        async with httpx.AsyncClient() as client:
            await Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2).resolve_review_thread(f"PRRT_{top}")
        assert gh.thread_resolved(REPO, top) == (True, None)
        assert "resolveReviewThread" in gh.calls_to("POST", r"/graphql$")[0].body["query"]
    finally:
        gh.stop()


def test_the_graphql_endpoint_of_enterprise_server_is_api_graphql(monkeypatch):
    monkeypatch.setenv("GITHUB_API_URL", "https://ghe.example.com/api/v3")
    assert graphql_url(current().github_api_url) == "https://ghe.example.com/api/graphql"
    monkeypatch.setenv("GITHUB_API_URL", "https://api.github.com")
    assert graphql_url(current().github_api_url) == "https://api.github.com/graphql"
