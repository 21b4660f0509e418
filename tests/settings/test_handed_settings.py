"""The service's pages take their addresses from the settings the app was handed (`app.state.settings`),
never from the process environment: its public URL, GitHub's API and the sign-in's web host."""
from __future__ import annotations

import os
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.config import Settings
from bot.settings import routes as settings_routes
from bot.web.app import create_app
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
