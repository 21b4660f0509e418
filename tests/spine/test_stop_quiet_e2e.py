"""`@bot stop` is an ordinary end, not a crash: through a real `bot serve` and the real Codex CLI,
the service's log says the job stopped and holds no traceback, whether the agent was in a tool
call (the bridge has a request open) or waiting on its model (the relay has one open)."""
from __future__ import annotations

import pytest

from bot.service import store
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, call
from tests.spine.helpers import payload
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env
from tests.spine.stalling import StallingProvider

pytestmark = pytest.mark.e2e
CRASH_WORDS = ("Traceback", "Exception in ASGI application", "CancelledError")


def _mention(gh, body: str, comment_id: int) -> dict:
    gh.add_comment(REPO, 1, body, user="Codertocat", comment_id=comment_id)
    data = payload("issue_comment.created", body)
    data["comment"]["id"] = comment_id
    return data


def _in_the_run_tool() -> bool:
    return bool(store.connect(settings=current()).query(
        "SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"))


def _stop_and_read_the_log(gh, service: Service, mid_run) -> str:
    service.deliver(_mention(gh, "@bot codex run the slow check", 1))
    mid_run()
    service.deliver(_mention(gh, "@bot stop", 2))
    gh.wait_for(lambda: any("Stopped" in (c["body"] or "") for c in gh.comments(REPO, 1)), timeout=60)
    gh.wait_for(lambda: ("episode", "cancelled") in
                [(j["kind"], j["status"]) for j in store.jobs(store.connect(settings=current()))], timeout=30)
    # the worker logs the job's outcome just after it marks the job finished
    gh.wait_for(lambda: f"for {REPO}#1 stopped" in service.log_path.read_text(), timeout=30)
    return service.log_path.read_text()


@pytest.fixture
def world(tmp_path, monkeypatch):
    gh = seeded_github()
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    services: list[Service] = []
    try:
        yield gh, services
    finally:
        for service in services:
            service.stop()
        gh.stop()


def test_a_stop_during_a_tool_call_leaves_no_traceback_in_the_log(world, tmp_path):
    gh, services = world
    with FakeProvider() as provider:
        provider.script(call("run", {"command": "sleep 20"}))
        env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url)
        services.append(Service(env, tmp_path / "serve.log").start())
        log = _stop_and_read_the_log(gh, services[0], lambda: gh.wait_for(_in_the_run_tool, timeout=120))
        services[0].stop()
    assert "stopped by @Codertocat" in log
    assert not [word for word in CRASH_WORDS if word in log], log


def test_a_stop_while_the_model_answers_leaves_no_traceback_in_the_log(world, tmp_path):
    gh, services = world
    provider = StallingProvider().start()
    try:
        env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url)
        services.append(Service(env, tmp_path / "serve.log").start())
        log = _stop_and_read_the_log(gh, services[0], lambda: provider.asked.wait(120))
        services[0].stop()
    finally:
        provider.release.set()
        provider.stop()
    assert "stopped by @Codertocat" in log
    assert not [word for word in CRASH_WORDS if word in log], log
