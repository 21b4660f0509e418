"""The live transcript's event stream answers to the viewer's session and GitHub access while it
is open, not only when it opens, and one viewer holds a bounded number of streams."""
from __future__ import annotations

import pytest
from sse_starlette.sse import AppStatus

from bot.settings.session import SESSION_COOKIE, end_session
from bot.web import run_page
from tests.entry_settings import current
from tests.ops_run_page.conftest import REPO, record_run
from tests.settings.conftest import sign_in


@pytest.fixture(autouse=True)
def recheck_every_poll(monkeypatch):
    monkeypatch.setattr(run_page, "ACCESS_RECHECK_S", 0.0)
    monkeypatch.setattr(run_page, "POLL_S", 0.01)
    # a uvicorn server an earlier test ran in this process flags every later stream to end at once
    monkeypatch.setattr(AppStatus, "should_exit", False)


def _events_until_closed(response) -> list[str]:
    return [line.removeprefix("event:").strip() for line in response.iter_lines() if line.startswith("event:")]


def test_the_stream_ends_when_the_viewer_signs_out(client, github):
    run_id = record_run(status=None)
    sign_in(client, github, "octocat")
    with client.stream("GET", f"/settings/runs/{run_id}/events") as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        assert next(line for line in lines if line.startswith("event:")) == "event: transcript"
        end_session(current(), client.cookies.get(SESSION_COOKIE))
        rest = [line for line in lines if line.startswith("event:")]
    assert rest[-1] == "event: revoked"


def test_the_stream_ends_when_github_revokes_the_viewers_read_access(client, github):
    run_id = record_run(status=None)
    sign_in(client, github, "octocat")
    with client.stream("GET", f"/settings/runs/{run_id}/events") as response:
        lines = response.iter_lines()
        assert next(line for line in lines if line.startswith("event:")) == "event: transcript"
        github.roles.pop((REPO, "octocat"))
        rest = [line for line in lines if line.startswith("event:")]
    assert rest[-1] == "event: revoked"


def test_one_viewer_may_hold_only_a_few_streams_at_once(client, github, monkeypatch):
    monkeypatch.setattr(run_page, "MAX_STREAMS_PER_VIEWER", 0)
    run_id = record_run(status=None)
    sign_in(client, github, "octocat")
    response = client.get(f"/settings/runs/{run_id}/events")
    assert response.status_code == 429 and "streams" in response.text


def test_a_closed_stream_frees_its_place(client, github, monkeypatch):
    monkeypatch.setattr(run_page, "MAX_STREAMS_PER_VIEWER", 1)
    run_id = record_run(status=None)
    sign_in(client, github, "octocat")
    for _ in range(2):
        with client.stream("GET", f"/settings/runs/{run_id}/events") as response:
            assert response.status_code == 200
            next(line for line in response.iter_lines() if line.startswith("event:"))
