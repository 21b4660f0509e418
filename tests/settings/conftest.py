"""Settings-page fixtures: a fake GitHub (OAuth + user API) and the settings routes on TestClient."""
from __future__ import annotations

from urllib.parse import urlparse

import httpx
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.settings import routes as settings
from tests.browser import browser_fixture, page_fixture  # noqa: F401 (the browser tests' fixtures)
from tests.entry_settings import handed
from tests.settings.fake_github_oauth import FakeGitHubOAuth


def use_fake_github(fake: FakeGitHubOAuth, monkeypatch: pytest.MonkeyPatch) -> None:
    """Points the bot's GitHub API and its OAuth app at the fake."""
    monkeypatch.setenv("GITHUB_API_URL", fake.url)
    monkeypatch.setenv("BOT_GITHUB_OAUTH_URL", fake.url)
    monkeypatch.setenv("GITHUB_CLIENT_ID", fake.client_id)
    monkeypatch.setenv("GITHUB_CLIENT_SECRET", fake.client_secret)


@pytest.fixture
def github(monkeypatch):
    with FakeGitHubOAuth() as fake:
        use_fake_github(fake, monkeypatch)
        yield fake


@pytest.fixture
def client(github):
    with TestClient(handed(Starlette(routes=settings.routes)), follow_redirects=False) as test_client:
        yield test_client


def sign_in(client: TestClient, github: FakeGitHubOAuth, login: str = "octocat") -> None:
    """The whole web flow: our /settings/login → GitHub authorize → our callback."""
    github.sign_in_as(login)
    to_github = client.get("/settings/login").headers["location"]
    back = httpx.get(to_github, follow_redirects=False).headers["location"]
    url = urlparse(back)
    done = client.get(f"{url.path}?{url.query}")
    assert done.status_code == 303, done.text


def csrf_of(client: TestClient, path: str = "/settings") -> str:
    page = client.get(path).text
    marker = 'name="csrf" value="'
    return page[page.index(marker) + len(marker):].split('"', 1)[0]
