"""GitHub Enterprise Server: every GitHub address the bot makes follows GITHUB_SERVER_URL and
GITHUB_API_URL, never github.com."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.settings import first_run, manifest
from bot.settings import routes as settings
from tests.entry_settings import current, handed

SERVER = "https://ghe.example.com"
API = f"{SERVER}/api/v3"


@pytest.fixture
def enterprise(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BOT_GIT_BASE_URL", "BOT_GITHUB_OAUTH_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_SERVER_URL", SERVER)
    monkeypatch.setenv("GITHUB_API_URL", API)


def test_repositories_are_cloned_from_the_enterprise_server(enterprise: None) -> None:
    assert current().clone_url("octo/repo") == f"{SERVER}/octo/repo.git"


def test_the_settings_sign_in_redirects_to_the_enterprise_server(enterprise: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_CLIENT_ID", "Iv1.enterprise")
    monkeypatch.setenv("GITHUB_CLIENT_SECRET", "enterprise-secret")
    with TestClient(handed(Starlette(routes=settings.routes)), follow_redirects=False) as client:
        target = urlsplit(client.get("/settings/login").headers["location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == f"{SERVER}/login/oauth/authorize"


def test_the_manifest_form_posts_to_the_enterprise_server(enterprise: None) -> None:
    assert manifest.github_form_action(current().oauth_url, "s", "octo-org") == f"{SERVER}/organizations/octo-org/settings/apps/new?state=s"


def test_the_first_run_page_lets_its_form_post_only_to_the_enterprise_server(enterprise: None) -> None:
    policy = first_run._headers(current().oauth_url)["Content-Security-Policy"]
    assert f"form-action 'self' {SERVER};" in policy


def test_an_explicit_oauth_url_still_wins_over_the_server_url(enterprise: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_GITHUB_OAUTH_URL", "https://sso.example.com/")
    assert current().oauth_url == "https://sso.example.com"


def test_an_enterprise_api_url_alone_names_its_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_SERVER_URL", "BOT_GIT_BASE_URL", "BOT_GITHUB_OAUTH_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_API_URL", API + "/")
    assert (current().server_url, current().oauth_url, current().clone_url("o/r")) == (SERVER, SERVER, f"{SERVER}/o/r.git")


def test_without_any_setting_the_addresses_are_github_com(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_SERVER_URL", "GITHUB_API_URL", "BOT_GIT_BASE_URL", "BOT_GITHUB_OAUTH_URL"):
        monkeypatch.delenv(name, raising=False)
    assert (current().server_url, current().oauth_url, current().git_base_url) == ("https://github.com",) * 3
