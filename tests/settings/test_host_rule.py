"""The Host rule in the service's app: BOT_PUBLIC_URL's host and port only, once it is set; and the URLs
the bot gives out (OAuth's redirect_uri) come from it or the listening address, never from Host."""
from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.settings import routes as settings
from bot.web.app import create_app
from tests.entry_settings import handed

PUBLIC = "https://bot.example.org"


@pytest.fixture
def public_site(monkeypatch):
    monkeypatch.setenv("BOT_PUBLIC_URL", PUBLIC)
    with TestClient(create_app(start_workers=False), base_url=PUBLIC) as client:
        yield client


@pytest.mark.parametrize("host", ["bot.example.org", "BOT.example.org", "bot.example.org:443"])
def test_the_public_host_is_served(public_site, host):
    assert public_site.get("/", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1:8000", "bot.example.org:8443", "bot.example.org.evil",
                                  "evil@bot.example.org", ""])
def test_with_a_public_url_any_other_host_is_refused(public_site, host):
    assert public_site.get("/", headers={"Host": host}).status_code == 421


def test_the_sign_in_redirect_never_follows_the_host_header(github):
    with TestClient(handed(Starlette(routes=settings.routes)), base_url="http://localhost", follow_redirects=False) as client:
        location = client.get("/settings/login", headers={"Host": "rebind.example"}).headers["location"]
    assert parse_qs(urlparse(location).query)["redirect_uri"] == ["http://localhost/settings/callback"]
