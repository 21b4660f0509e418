"""kill -9 of `bot serve` mid-run, then a restart: the killed attempt's run is recorded interrupted
(with a finish time), not left "running", and `bot runs` says so."""
from __future__ import annotations

import json

import pytest

from bot.cli import runs
from bot.record.recorder import INTERRUPTED, Recorder
from bot.service import store
from tests.entry_settings import current, database
from tests.fakes.provider import FakeProvider, call
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env
from tests.spine.test_crash_and_stop import MARKER, SLOW, in_the_run_tool, mention

pytestmark = pytest.mark.e2e


@pytest.fixture
def world(tmp_path, monkeypatch):
    gh = seeded_github()
    remotes = make_remote(tmp_path)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    with FakeProvider() as provider:
        env = service_env(tmp_path, gh, remotes, provider.url, BOT_LEASE_SECONDS="2")
        services: list[Service] = []
        try:
            yield gh, provider, env, services
        finally:
            for service in services:
                service.stop()
            gh.stop()


def test_the_run_of_a_killed_service_shows_interrupted_after_the_restart(world, tmp_path, capsys):
    gh, provider, env, services = world
    provider.script(call("run", {"command": SLOW}))
    services.append(Service(env, tmp_path / "serve1.log").start())
    services[0].deliver(mention(gh, "@bot codex run the slow check", 1))
    gh.wait_for(in_the_run_tool, timeout=180)  # mid-run: the sandbox writes files back only when it ends
    services[0].kill()
    services.append(Service(env, tmp_path / "serve2.log").start())
    gh.wait_for(lambda: any(MARKER.search(c["body"]) for c in gh.comments(REPO, 1)), timeout=240)
    gh.wait_for(lambda: all(j["status"] in ("done", "failed") for j in store.jobs(store.connect(settings=current()))), timeout=120)
    capsys.readouterr()
    assert runs.main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    statuses = sorted(run["status"] for run in listed)
    assert "running" not in statuses and "interrupted" in statuses
    killed = next(run for run in listed if run["status"] == "interrupted")
    assert killed["finished_at"] and Recorder(database()).run(killed["id"])["summary"] == {"error": INTERRUPTED}
