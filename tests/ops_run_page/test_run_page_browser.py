"""The live run page in a real browser (Debian's chromium, headless, Playwright) against the real
uvicorn server: events recorded while the run goes arrive in the page as they happen; a user
GitHub does not let read the repository sees none of it."""
from __future__ import annotations

import socket
import threading
import time

import pytest
import uvicorn

from bot.record.recorder import Recorder
from tests.ops_run_page.conftest import app, record_run

pytestmark = pytest.mark.e2e
CHROMIUM = "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def site(github):
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app(), host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    yield context.new_page()
    context.close()


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
    recorder = Recorder()
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
