"""The first-run form and the site's pages in Debian's chromium at both widths, through the real
server: a refused form keeps what was typed and says what to enter, one heading per page, the
loopback warning on the confirmation page too, and the site's own page for an unknown path."""
from __future__ import annotations

import pytest

from bot.web.app import create_app
from tests.browser import serve
from tests.settings.test_responsive import WIDTHS, _overflow

pytestmark = pytest.mark.e2e
NO_WEBHOOKS = "GitHub cannot deliver webhooks to this address"


@pytest.fixture
def first_run(monkeypatch, tmp_path):
    """The service with no App: its first-run pages are open; its URL and setup code."""
    from bot.settings import app_check
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")
    monkeypatch.setattr(app_check, "_cache", {})
    app = create_app(start_workers=False)
    with serve(app) as url:
        yield url, app.state.setup_code


@pytest.fixture(params=WIDTHS, ids=lambda width: f"{width}px")
def screen(browser, request):
    context = browser.new_context(viewport={"width": request.param, "height": 900})
    context.set_default_timeout(5000)  # a missing element fails in seconds, not half a minute
    yield context.new_page()
    context.close()


def _refused_organisation(screen, first_run) -> None:
    site, code = first_run
    screen.goto(f"{site}/?code={code}")
    screen.get_by_label("An organisation").check()
    screen.get_by_label("Organisation (if so)").fill("octo org!")
    screen.get_by_label("App name").fill("review-bot")
    screen.get_by_role("button", name="Create the GitHub App").click()


def test_a_refused_organisation_keeps_the_owner_and_the_name(screen, first_run):
    _refused_organisation(screen, first_run)
    assert screen.get_by_label("An organisation").is_checked()
    assert screen.get_by_label("Organisation (if so)").input_value() == "octo org!"
    assert screen.get_by_label("App name").input_value() == "review-bot"
    assert _overflow(screen) <= 0


def test_a_refused_organisation_says_what_to_enter(screen, first_run):
    _refused_organisation(screen, first_run)
    assert screen.get_by_role("alert").inner_text() == (
        "“octo org!” is not an organisation's login. Enter the name from its GitHub address, "
        "github.com/<login>: letters, digits and single dashes, e.g. octo-org.")


def test_the_refused_form_has_its_heading_once(screen, first_run):
    _refused_organisation(screen, first_run)
    assert screen.get_by_role("heading", name="Create the GitHub App").count() == 1


def test_the_confirmation_page_keeps_the_loopback_webhook_warning(screen, first_run):
    site, code = first_run
    screen.goto(f"{site}/setup/github-app?owner=personal&name=review-bot&setup_code={code}")
    assert screen.get_by_role("button", name="Continue on GitHub").count() == 1
    assert NO_WEBHOOKS in screen.get_by_role("main").inner_text()


@pytest.mark.parametrize("path", ["/no-such-page", "/settings/nothing/here", "/setup/else"])
def test_an_unknown_path_gets_the_sites_not_found_page(screen, first_run, path):
    site, _ = first_run
    response = screen.goto(f"{site}{path}")
    assert response.status == 404
    assert screen.get_by_role("heading", level=1).inner_text() == "Page not found"
    assert screen.get_by_role("main").inner_text() == (
        f"Page not found\n\nThere is no page at {path} on this bot.\n\nStart page · Settings")
    assert screen.get_by_role("navigation", name="Site").get_by_role("link", name="github-agent-bot").count() == 1
    assert _overflow(screen) <= 0
