"""The settings pages in a real browser: Debian's chromium, headless, driven by Playwright, against
the real uvicorn server and the fake GitHub. Found by their labels and roles, as a screen reader would."""
from __future__ import annotations

import pytest
from starlette.applications import Starlette

from bot.credentials import resolve as credentials
from bot.credentials import vault as secrets
from bot.settings import routes as settings
from tests.browser import serve, sign_in_with_github
from tests.entry_settings import current, handed
from tests.fakes.provider import FakeProvider, fail

pytestmark = pytest.mark.e2e
KEY = "sk-ant-api03-BrowserBrowserBrowser7Xy"


@pytest.fixture
def site(github):
    with serve(handed(Starlette(routes=settings.routes)), lifespan="off") as url:
        yield url


def test_login_with_github_in_a_browser(page, site, github):
    """Clicking Login with GitHub goes through GitHub's authorize step and lands signed in."""
    sign_in_with_github(page, site, github)
    assert "Signed in as octocat" in page.get_by_role("banner").inner_text()
    assert page.get_by_role("heading", level=1).inner_text() == "Your settings"


def test_connect_and_delete_a_personal_key(page, site, github):
    """A key typed into the labelled field is saved, shown by fingerprint only, then deleted."""
    sign_in_with_github(page, site, github)
    page.get_by_label("Credential").select_option("claude:api_key")
    page.get_by_label("Key, token or file content").fill(KEY)
    page.get_by_role("button", name="Save").click()
    assert page.get_by_role("status").inner_text() == "Saved claude: Anthropic API key."
    table = page.get_by_role("table", name="Your credentials")
    assert secrets.fingerprint(KEY) in table.inner_text()
    assert KEY not in page.content()
    assert credentials.resolve(current(), "claude", None, github.users["octocat"], None).env["ANTHROPIC_API_KEY"] == KEY
    page.get_by_role("button", name="Delete Anthropic API key for claude").click()
    assert page.get_by_role("status").inner_text() == "Deleted claude: Anthropic API key."
    assert secrets.listing(f"user:{github.users['octocat']}", settings=current()) == []


def test_maintainer_sets_a_repository_key(page, site, github):
    """From the list of administered repositories to a saved repository key."""
    github.add_repo("octo/app", octocat="maintain")
    sign_in_with_github(page, site, github)
    page.get_by_role("link", name="octo/app").click()
    page.get_by_label("Credential").select_option("gemini:api_key")
    page.get_by_label("Key, token or file content").fill("AIzaSy" + "BrowserBrowserBrowser" + "b" * 12)
    page.get_by_role("button", name="Save").click()
    assert "gemini" in page.get_by_role("table", name="Credentials of octo/app", exact=True).inner_text()
    assert credentials.resolve(current(), "gemini", github.repo_ids["octo/app"], 31337, None).source == "repository"


def test_sign_out_in_a_browser(page, site, github):
    """The Sign out button ends the session and shows the login page again."""
    sign_in_with_github(page, site, github)
    page.get_by_role("button", name="Sign out").click()
    assert page.get_by_role("link", name="Login with GitHub").is_visible()


@pytest.fixture
def provider(monkeypatch):
    with FakeProvider() as fake:
        monkeypatch.setenv("BOT_CLAUDE_BASE_URL", fake.url)
        yield fake


@pytest.fixture
def site_with_provider(github, provider):
    """The site handed the settings of the environment that names the fake provider."""
    with serve(handed(Starlette(routes=settings.routes)), lifespan="off") as url:
        yield url


def test_test_this_key_reports_success_then_rejection(page, site_with_provider, github, provider):
    """The Test button against the fake provider: accepted first, then a scripted 401 reads as rejected."""
    site = site_with_provider
    sign_in_with_github(page, site, github)
    page.get_by_label("Credential").select_option("claude:api_key")
    page.get_by_label("Key, token or file content").fill(KEY)
    page.get_by_role("button", name="Save").click()
    page.get_by_role("button", name="Test Anthropic API key for claude").click()
    assert page.get_by_role("status").inner_text() == "claude: The provider accepted this Anthropic API key."
    provider.script(fail(401, "invalid x-api-key"))
    page.get_by_role("button", name="Test Anthropic API key for claude").click()
    assert "rejected this Anthropic API key (HTTP 401)" in page.get_by_role("alert").inner_text()
    assert [r.headers.get("x-api-key") for r in provider.requests] == [KEY, KEY]
