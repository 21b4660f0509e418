"""The service's pages take their addresses from the settings the app was handed (`app.state.settings`),
never from the process environment: its public URL, GitHub's API and the sign-in's web host."""
from __future__ import annotations

import os
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.config import Settings
from bot.settings import first_run
from bot.settings import routes as settings_routes
from bot.web.app import create_app
from tests.settings.conftest import sign_in
from tests.settings.fake_github_oauth import FakeGitHubOAuth

PUBLIC = "https://bot.example.org"


def _app_with(**variables: str) -> Starlette:
    app = Starlette(routes=settings_routes.routes)
    app.state.settings = Settings({**os.environ, **variables})
    return app


def _login_target(app: Starlette) -> tuple[str, dict[str, list[str]]]:
    with TestClient(app, follow_redirects=False) as client:
        location = urlsplit(client.get("/settings/login").headers["location"])
    return f"{location.scheme}://{location.netloc}{location.path}", parse_qs(location.query)


def test_the_app_serves_the_public_host_of_the_settings_it_was_handed(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("BOT_PUBLIC_URL", raising=False)
    settings = Settings({**os.environ, "BOT_PUBLIC_URL": PUBLIC})
    with TestClient(create_app(start_workers=False, settings=settings), base_url=PUBLIC) as client:
        assert client.get("/", headers={"Host": "bot.example.org"}).status_code == 200


def test_the_sign_in_comes_back_to_the_public_url_of_the_handed_settings(github: FakeGitHubOAuth):
    _, query = _login_target(_app_with(BOT_PUBLIC_URL=PUBLIC))
    assert query["redirect_uri"] == [f"{PUBLIC}/settings/callback"]


def test_the_sign_in_goes_to_the_web_host_of_the_handed_settings(github: FakeGitHubOAuth):
    target, _ = _login_target(_app_with(BOT_GITHUB_OAUTH_URL="https://sso.example.com/"))
    assert target == "https://sso.example.com/login/oauth/authorize"


def test_a_public_https_url_in_the_handed_settings_makes_the_cookies_secure(github: FakeGitHubOAuth):
    with TestClient(_app_with(BOT_PUBLIC_URL=PUBLIC), follow_redirects=False) as client:
        cookie = client.get("/settings/login").headers["set-cookie"]
    assert "secure" in cookie.lower()


def test_the_pages_ask_the_github_api_of_the_handed_settings(github: FakeGitHubOAuth,
                                                             monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # closed: only the handed URL answers
    with TestClient(_app_with(GITHUB_API_URL=github.url), follow_redirects=False) as client:
        sign_in(client, github, "octocat")
        assert "octocat" in client.get("/settings").text


def test_the_first_run_pages_let_their_form_post_only_to_the_web_host_of_the_handed_settings():
    app = Starlette(routes=first_run.routes)
    app.state.settings = Settings({**os.environ, "BOT_GITHUB_OAUTH_URL": "https://sso.example.com/"})
    app.state.setup_code = None  # no setup open: the page refuses, with the same headers
    with TestClient(app) as client:
        policy = client.get("/setup/github-app").headers["content-security-policy"]
    assert "form-action 'self' https://sso.example.com;" in policy
