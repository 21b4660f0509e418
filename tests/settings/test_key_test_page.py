"""'Test' on the settings page in Debian's chromium at both widths: the post redirects to the page
with the result shown once (a reload repeats no call), and "Usable now" does not say yes under a
failed test of the key it would use."""
from __future__ import annotations

import pytest
from starlette.applications import Starlette

from bot.settings import routes as settings
from tests.browser import serve, sign_in_with_github
from tests.entry_settings import handed
from tests.fakes.provider import FakeProvider, fail
from tests.settings.test_responsive import WIDTHS, _overflow

pytestmark = pytest.mark.e2e
KEY = "sk-ant-api03-KeyTestKeyTestKeyTest7Xy"
REJECTED = "claude: The provider rejected this Anthropic API key (HTTP 401). Connect a new one: rotate it below."


@pytest.fixture
def site(github, provider):
    """After the provider: the app is handed the settings of the environment that names it."""
    with serve(handed(Starlette(routes=settings.routes)), lifespan="off") as url:
        yield url


@pytest.fixture
def provider(monkeypatch):
    with FakeProvider() as fake:
        monkeypatch.setenv("BOT_CLAUDE_BASE_URL", fake.url)
        yield fake


@pytest.fixture(params=WIDTHS, ids=lambda width: f"{width}px")
def screen(browser, request):
    context = browser.new_context(viewport={"width": request.param, "height": 900})
    context.set_default_timeout(5000)
    yield context.new_page()
    context.close()


def _test_a_rejected_key(screen, site, github, provider) -> None:
    provider.script(fail(401, "invalid x-api-key"))
    sign_in_with_github(screen, site, github)
    screen.get_by_label("Credential").select_option("claude:api_key")
    screen.get_by_label("Key, token or file content").fill(KEY)
    screen.get_by_role("button", name="Save").click()
    screen.get_by_role("button", name="Test Anthropic API key for claude").click()
    screen.get_by_role("alert").wait_for()


def test_a_key_test_lands_on_the_settings_page_with_its_result(screen, site, github, provider):
    _test_a_rejected_key(screen, site, github, provider)
    assert screen.url == f"{site}/settings"
    assert screen.get_by_role("alert").inner_text() == REJECTED
    assert _overflow(screen) <= 0


def test_reloading_after_a_key_test_does_not_test_again(screen, site, github, provider):
    _test_a_rejected_key(screen, site, github, provider)
    screen.reload()
    assert screen.get_by_role("heading", level=1).inner_text() == "Your settings"
    assert screen.get_by_role("alert").count() == 0
    assert len(provider.requests) == 1


def test_usable_now_says_no_under_a_failed_test_of_that_key(screen, site, github, provider):
    _test_a_rejected_key(screen, site, github, provider)
    table = screen.get_by_role("table", name="Your effective credentials")
    claude = table.get_by_role("row").filter(has=screen.get_by_role("rowheader", name="claude"))
    assert claude.get_by_role("cell").last.inner_text().removeprefix("Usable now: ") == (
        "no: the test above failed")
