"""What the browser tests share: the real uvicorn server on a free loopback port and Debian's
chromium, headless, through Playwright. The `browser` and `page` fixtures are offered by the
conftests of the folders with browser tests; each test module serves its own app as `site`."""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(app: Any, **options: Any) -> Iterator[str]:
    """Runs `app` in uvicorn on a thread; yields its base URL once it accepts connections."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield instance
        finally:
            instance.close()


@contextmanager
def new_page(browser: Any, **context_options: Any) -> Iterator[Any]:
    """A page in a fresh context (its own cookies), closed afterwards."""
    context = browser.new_context(**context_options)
    try:
        yield context.new_page()
    finally:
        context.close()


def sign_in_with_github(page: Any, site: str, github: Any, login: str = "octocat") -> None:
    """Signs in through the settings page's Login with GitHub link, as a user would."""
    github.sign_in_as(login)
    page.goto(f"{site}/settings")
    page.get_by_role("link", name="Login with GitHub").click()
    page.wait_for_url(f"{site}/settings")


@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


@pytest.fixture(name="page")
def page_fixture(browser: Any) -> Iterator[Any]:
    with new_page(browser) as fresh:
        yield fresh
