"""The live run page in a real browser (Debian's chromium, headless, Playwright) against the real
uvicorn server: events recorded while the run goes arrive in the page as they happen; a user
GitHub does not let read the repository sees none of it."""
from __future__ import annotations

import pytest

from bot.record.recorder import Recorder
from tests.browser import serve
from tests.entry_settings import database
from tests.ops_run_page.conftest import app, record_run

pytestmark = pytest.mark.e2e


@pytest.fixture
def site(github):
    with serve(app(), lifespan="off") as url:
        yield url


def _sign_in(page, site, github, login):
    github.sign_in_as(login)
    page.goto(f"{site}/settings/login")
    page.wait_for_url(f"{site}/settings")


def test_a_browser_receives_the_transcript_as_it_is_recorded(page, site, github):
    run_id = record_run(status=None)  # running: four events so far
    _sign_in(page, site, github, "octocat")
    page.goto(f"{site}/runs/{run_id}")
    assert page.url == f"{site}/settings/runs/{run_id}"
    events = page.locator("#events li")
    events.nth(3).wait_for()
    recorder = Recorder(database())
    recorder.record(run_id, "enforced", "tool_call", tool="edit_file", args={"path": "hello.py"},
                    outcome="ok", duration_ms=2.0)
    events.nth(4).wait_for()
    assert "edit_file" in events.nth(4).inner_text()
    recorder.record(run_id, "attested", "text", raw='{"text":"Done: hello.py now greets the world."}')
    events.nth(5).wait_for()
    assert "Done: hello.py now greets the world." in events.nth(5).inner_text()
    recorder.finish_run(run_id, "ok")  # the page turns into the whole record
    page.get_by_role("heading", name="Provenance").wait_for()
    assert "sess-4242" in page.content()


def test_a_user_without_read_access_sees_nothing_of_the_run(page, site, github):
    run_id = record_run(status=None)
    _sign_in(page, site, github, "mallory")
    response = page.goto(f"{site}/runs/{run_id}")
    assert response.status == 403
    assert page.get_by_role("heading", level=1).inner_text() == "Not yours to see"
    assert "sess-4242" not in page.content() and page.locator("#events").count() == 0
