"""A request refused 421 for its Host is said in the service's log: the Host received (bounded and
quoted, it is a request header), the hosts this service answers to, and the fix (BOT_PUBLIC_URL);
once per Host a minute, so that a client retrying in a loop cannot flood the log."""
from __future__ import annotations

import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from bot.web import host_check
from bot.web.app import create_app

PUBLIC = "https://bot.example.org"


def _refusals(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.web.host_check"]


@pytest.fixture
def local_site(monkeypatch):
    monkeypatch.delenv("BOT_PUBLIC_URL", raising=False)
    with TestClient(create_app(start_workers=False), base_url="http://127.0.0.1:8000") as client:
        yield client


@pytest.fixture
def public_site(monkeypatch):
    monkeypatch.setenv("BOT_PUBLIC_URL", PUBLIC)
    with TestClient(create_app(start_workers=False), base_url=PUBLIC) as client:
        yield client


def test_a_container_published_on_another_port_is_told_to_set_the_public_url(local_site, caplog):
    caplog.set_level(logging.INFO)
    assert local_site.get("/", headers={"Host": "localhost:8080"}).status_code == 421
    [line] = _refusals(caplog)
    assert "'localhost:8080'" in line and "port 8000" in line and "BOT_PUBLIC_URL" in line


def test_with_a_public_url_the_refusal_names_the_public_host(public_site, caplog):
    caplog.set_level(logging.INFO)
    assert public_site.get("/", headers={"Host": "bot.internal:8000"}).status_code == 421
    [line] = _refusals(caplog)
    assert "'bot.internal:8000'" in line and "bot.example.org" in line


def test_the_same_host_refused_again_is_logged_once(local_site, caplog):
    caplog.set_level(logging.INFO)
    for _ in range(5):
        local_site.get("/", headers={"Host": "localhost:8080"})
    local_site.get("/", headers={"Host": "localhost:9090"})
    assert len(_refusals(caplog)) == 2


def test_a_host_refused_a_minute_later_is_logged_again(caplog):
    caplog.set_level(logging.INFO)
    now = [1000.0]
    refusals = host_check.RefusalLog(clock=lambda: now[0])
    refusals.note(["localhost:8080"], "localhost on port 8000", "set BOT_PUBLIC_URL")
    now[0] += host_check.LOG_EVERY_S / 2
    refusals.note(["localhost:8080"], "localhost on port 8000", "set BOT_PUBLIC_URL")
    now[0] += host_check.LOG_EVERY_S
    refusals.note(["localhost:8080"], "localhost on port 8000", "set BOT_PUBLIC_URL")
    assert len(_refusals(caplog)) == 2


def test_the_hosts_remembered_are_bounded():
    refusals = host_check.RefusalLog(clock=lambda: 0.0)
    for n in range(host_check.MAX_REMEMBERED * 3):
        refusals.note([f"h{n}.example"], "x", "y")
    assert len(refusals.remembered) <= host_check.MAX_REMEMBERED


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hosts=st.lists(st.one_of(st.text(max_size=3000), st.from_regex(r"[a-z.]{1,30}(:[0-9]{1,6})?", fullmatch=True)),
                      max_size=3))
def test_whatever_the_host_the_log_line_is_one_bounded_line(hosts, caplog):
    caplog.clear()
    caplog.set_level(logging.INFO)
    host_check.RefusalLog(clock=lambda: 0.0).note(hosts, "localhost on port 8000", "set BOT_PUBLIC_URL")
    [line] = _refusals(caplog)
    assert "\n" not in line and "\r" not in line and len(line) < 600
