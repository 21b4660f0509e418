"""Every REST call the bot makes names GitHub's API version and media type (the fake refuses one
that does not), as the settings pages' calls already did."""
from __future__ import annotations

import httpx

from bot.github.client import API_VERSION, MEDIA_TYPE, RetryingAPI, versioned
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub


def test_gidgethubs_default_media_type_becomes_githubs_with_the_version():
    headers = versioned({"accept": "application/vnd.github.v3+json", "user-agent": "x"})
    assert headers == {"accept": MEDIA_TYPE, "x-github-api-version": API_VERSION, "user-agent": "x"}


def test_a_call_asking_for_another_representation_keeps_it():
    assert versioned({"accept": "application/vnd.github.diff"})["accept"] == "application/vnd.github.diff"


async def test_a_call_through_the_client_reaches_github_with_version_and_media_type(monkeypatch):
    seen = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(200, json={"ok": True})

    monkeypatch.setenv("GITHUB_API_URL", "https://api.github.test")
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        await RetryingAPI(client, oauth_token="t", base_url=current().github_api_url).getitem("/repos/o/r")
    assert (seen[0]["x-github-api-version"], seen[0]["accept"]) == (API_VERSION, MEDIA_TYPE)


def test_the_fake_github_refuses_a_call_without_the_version():
    with FakeGitHub(require_auth=False) as github:
        reply = httpx.get(f"{github.url}/repos/octo/app", headers={"accept": MEDIA_TYPE,
                                                                    "user-agent": "github-agent-bot/0.1"})
    assert reply.status_code == 400 and "X-GitHub-Api-Version" in reply.json()["message"]
