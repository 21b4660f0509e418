"""The GitHub client is handed its API URL and its App: it never asks the environment for them."""
from __future__ import annotations

import httpx
import pytest

from bot.config import Settings
from bot.github import client as github
from tests.fakes.github import FakeGitHub
from tests.spine.helpers import app_key

REPO = "octo/repo"
ELSEWHERE = "http://127.0.0.1:9"  # nothing listens: a call that read the environment fails


KEY = app_key()


@pytest.fixture
def gh(monkeypatch):
    with FakeGitHub(app_id="4242", public_key=KEY[1]) as fake:
        fake.add_repo(REPO)
        fake.add_issue(REPO, 1)
        for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("GITHUB_API_URL", ELSEWHERE)
        yield fake


def handed(fake: FakeGitHub) -> Settings:
    return Settings({"GITHUB_API_URL": fake.url, "GITHUB_APP_ID": "4242", "GITHUB_PRIVATE_KEY": KEY[0],
                     "GITHUB_WEBHOOK_SECRET": "s"})


async def test_a_token_cache_mints_with_the_app_and_at_the_api_url_of_its_settings(gh):
    async with httpx.AsyncClient() as client:
        token = await github.TokenCache.of(handed(gh)).token(client, 7)
    assert token and len(gh.calls_to("POST", r"/app/installations/7/access_tokens$")) == 1


async def test_an_installation_thread_talks_to_the_api_url_of_its_token_cache(gh):
    async with httpx.AsyncClient() as client:
        thread = await github.installation_thread(client, github.TokenCache.of(handed(gh)), 7, REPO, 1)
        await thread.create_comment("hello")
    assert [c["body"] for c in gh.comments(REPO, 1)] == ["hello"]


async def test_a_client_cannot_be_built_without_the_api_it_talks_to(gh):
    """No default host: a caller that forgot its settings' API (GitHub Enterprise Server) would send
    the installation's token to github.com."""
    async with httpx.AsyncClient() as client:
        with pytest.raises(TypeError):
            github.RetryingAPI(client)  # type: ignore[call-arg]


async def test_a_client_handed_a_base_url_with_a_trailing_slash_talks_to_it_without_the_slash(gh):
    async with httpx.AsyncClient() as client:
        assert github.RetryingAPI(client, base_url=gh.url + "/").base_url == gh.url


def test_the_graphql_endpoint_is_beside_the_rest_api_it_is_given():
    assert github.graphql_url("https://ghe.example.com/api/v3") == "https://ghe.example.com/api/graphql"
    assert github.graphql_url("https://api.github.com") == "https://api.github.com/graphql"


async def test_a_thread_finds_the_marked_comment_of_the_bot_logins_it_is_handed(gh, monkeypatch):
    monkeypatch.setenv("BOT_HANDLE", "someone-else")
    posted = gh.add_comment(REPO, 1, "answer <!-- bot:job 5 -->", user="helper[bot]", user_type="Bot")
    gh.tokens["t"] = 7
    async with httpx.AsyncClient() as client:
        thread = github.Thread(github.RetryingAPI(client, oauth_token="t", base_url=gh.url), REPO, 1,
                               own_logins=frozenset({"helper[bot]"}))
        assert await thread.find_comment("<!-- bot:job 5 -->") == posted["id"]


def test_a_comment_is_the_bots_own_when_a_bot_posted_it_under_one_of_the_logins_handed(monkeypatch):
    monkeypatch.setenv("BOT_HANDLE", "someone-else")
    comment = {"user": {"type": "Bot", "login": "Helper[bot]"}}
    assert github.is_own_comment(comment, {"helper[bot]"})
    assert github.is_own_login("helper", {"helper[bot]"})


def test_the_bot_logins_of_an_action_are_its_app_and_the_workflow_token():
    settings = Settings({"BOT_HANDLE": "helper", "GITHUB_ACTIONS": "true"})
    assert github.bot_logins(settings) == {"helper[bot]", "github-actions[bot]"}
    assert github.bot_logins(Settings({"BOT_HANDLE": "helper"})) == {"helper[bot]"}
