"""Every page at 1280 px and at a 390 px phone, in Debian's chromium through Playwright: nothing
scrolls sideways. With SCREENSHOTS_DIR set (`make screenshots`), each page is also saved there as
<page>-<width>.png."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.credentials import resolve as credentials
from bot.settings import app_check
from bot.web.app import create_app
from tests.browser import serve, sign_in_with_github
from tests.entry_settings import current, handed
from tests.fakes.provider import FakeProvider, fail
from tests.settings.conftest import use_fake_github
from tests.spine.helpers import configure_app

pytestmark = pytest.mark.e2e
WIDTHS = (1280, 390)
LONG_KEY = "sk-ant-api03-" + "W1i2D3e4K5e6Y7s8W9i0" * 5 + "-VeryLongAA"
CODEX_AUTH = '{"auth_mode": "chatgpt", "tokens": {"access_token": "' + "x" * 300 + '"}}'
PAGES = {  # name -> (path, signed in)
    "start": ("/", False),
    "setup": ("/setup/github-app?owner=organization&org=octo-org&name=my-agent-bot", False),
    "setup-refused": ("/setup/github-app?owner=organization&org=octo+org!&name=my-agent-bot", False),
    "sign-in": ("/settings", False),
    "settings": ("/settings", True),
    "rotate": ("/settings?rotate=claude:api_key", True),
    "repository": ("/settings/repos/octo-org/a-repository-with-a-rather-long-name", True),
    "installation": ("/settings/installations/42", True),
    "not-allowed": ("/settings/repos/octo-org/not-mine", True),
    "key-test-failed": ("/settings", True),  # after Test, which the provider refuses
    "not-found": ("/no-such-page", False),
}
FIRST_RUN = {"start", "setup", "setup-refused"}  # seen before the App exists; the other pages after


def _test_the_key(page) -> None:
    page.get_by_role("button", name="Test Anthropic API key for claude").click()
    page.get_by_role("alert").wait_for()


@pytest.fixture
def first_run(github, monkeypatch):
    """The service started without an App (so its first-run pages are open): its URL and setup code."""
    monkeypatch.delenv("GITHUB_CLIENT_ID")
    monkeypatch.delenv("GITHUB_CLIENT_SECRET")
    monkeypatch.setattr(app_check, "_cache", {})
    app = create_app(start_workers=False)
    with serve(app) as url:
        yield url, app.state.setup_code, app


def configure(github, monkeypatch, app) -> None:
    """The App and its OAuth client, set whole, as an operator configures them by hand (and starts
    the service again: its settings are read once, at the start)."""
    use_fake_github(github, monkeypatch)
    configure_app(monkeypatch)
    handed(app)


@pytest.fixture
def site(first_run, github, monkeypatch):
    configure(github, monkeypatch, first_run[2])
    return first_run[0]


def _world(github) -> None:
    """A maintainer with keys everywhere, long values, and history, as a real account has."""
    github.add_repo("octo-org/a-repository-with-a-rather-long-name", installation_id=42, octocat="admin")
    github.add_installation(42, "octo-org", octocat="admin")
    github.add_repo("octo-org/not-mine", installation_id=42, octocat="write")
    user = f"user:{github.users.setdefault('octocat', 1000)}"
    repo = f"repo:{github.repo_ids['octo-org/a-repository-with-a-rather-long-name']}"
    for scope in (user, repo, "installation:42"):
        credentials.connect(current(), scope, credentials.find_kind("claude:api_key"), LONG_KEY, actor="octocat")
    credentials.connect(current(), user, credentials.find_kind("codex:auth_json"), CODEX_AUTH, actor="octocat")


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.fixture
def rejecting_provider(monkeypatch):
    """The provider behind claude, refusing the key (the failed Test page)."""
    with FakeProvider() as provider:
        provider.script(fail(401, "invalid x-api-key"))
        monkeypatch.setenv("BOT_CLAUDE_BASE_URL", provider.url)
        yield provider


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_scrolls_sideways(browser, first_run, github, monkeypatch, rejecting_provider, width):
    _world(github)
    site, code, app = first_run
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    shots = os.environ.get("SCREENSHOTS_DIR")
    overflowing = {}
    signed_in = False
    for name, (path, needs_session) in PAGES.items():
        if name not in FIRST_RUN and app.state.settings.identity_source is None:
            configure(github, monkeypatch, app)
        if needs_session and not signed_in:
            sign_in_with_github(page, site, github)
            signed_in = True
        page.goto(f"{site}{path}" + (f"&setup_code={code}" if name.startswith("setup") else ""))
        if name == "key-test-failed":
            _test_the_key(page)
        overflowing[name] = _overflow(page)
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f"{name}-{width}.png"), full_page=True)
    context.close()
    assert {name: px for name, px in overflowing.items() if px > 0} == {}


def test_mistyped_key_is_refused_with_the_value_kept_in_the_browser(browser, site, github):
    """Typed into the real form: the refusal names the right kind and the field still holds the key."""
    context = browser.new_context(viewport={"width": 390, "height": 900})
    page = context.new_page()
    sign_in_with_github(page, site, github)
    page.get_by_label("Credential").select_option("claude:oauth_token")
    page.get_by_label("Key, token or file content").fill(LONG_KEY)
    page.get_by_role("button", name="Save").click()
    assert "looks like an Anthropic API key" in page.locator("#value-error").inner_text()
    assert page.get_by_label("Key, token or file content").input_value() == LONG_KEY
    assert _overflow(page) <= 0
    context.close()
