"""Crash recovery and `@bot stop`, through a real `bot serve` and the real Codex CLI.

The long-running step is a bridged `run` tool call the fake provider scripts: the command
touches a marker file in the worktree (so the test knows the job is mid-run) and then sleeps.
"""
from __future__ import annotations

import re
import signal

import pytest

from bot.service import store
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, call
from tests.spine.helpers import payload
from tests.spine.service import REPO, Service, make_remote, scenario, seeded_github, service_env

pytestmark = pytest.mark.e2e
MARKER = re.compile(r"<!-- bot:run (\{.*?\}) -->")
SLOW = "sleep 20"


def mention(gh, body: str, comment_id: int) -> dict:
    gh.add_comment(REPO, 1, body, user="Codertocat", comment_id=comment_id)
    data = payload("issue_comment.created", body)
    data["comment"]["id"] = comment_id
    return data


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


def test_killed_server_finishes_the_job_once_after_restart(world, tmp_path):
    """kill -9 mid-run, start again: the same tracking comment ends as the one answer."""
    gh, provider, env, services = world
    provider.script(call("run", {"command": SLOW}))
    services.append(Service(env, tmp_path / "serve1.log").start())
    services[0].deliver(mention(gh, "@bot codex run the slow check", 1))
    gh.wait_for(in_the_run_tool, timeout=120)  # mid-run: the sandbox writes files back only when it ends
    services[0].kill()
    services.append(Service(env, tmp_path / "serve2.log").start())
    gh.wait_for(lambda: any(MARKER.search(c["body"]) for c in gh.comments(REPO, 1)), timeout=120)
    gh.wait_for(jobs_finished, timeout=120)  # nothing is left in the queue that could answer again
    bot_comments = [c for c in gh.comments(REPO, 1) if c["user"]["login"] == "bot[bot]"]
    assert len(bot_comments) == 1 and MARKER.search(bot_comments[0]["body"])
    assert len(gh.calls_to("POST", r"/issues/1/comments$")) == 1
    assert [j["attempts"] for j in store.jobs(store.connect(settings=current()))] == [2]


def jobs_finished() -> bool:
    jobs = store.jobs(store.connect(settings=current()))
    return bool(jobs) and all(job["status"] in ("done", "failed", "cancelled") for job in jobs)


def in_the_run_tool() -> bool:
    """The episode's record holds the bridged `run` it is in."""
    return bool(store.connect(settings=current()).query("SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"))


def stop_mid_run(world, tmp_path) -> None:
    """Start a slow episode, then `@bot stop` it and wait for the tracking comment to say so."""
    gh, provider, env, services = world
    provider.script(call("run", {"command": SLOW}))
    services.append(Service(env, tmp_path / "serve.log").start())
    services[0].deliver(mention(gh, "@bot codex run the slow check", 1))
    gh.wait_for(in_the_run_tool, timeout=120)  # mid-run: the sandbox writes files back only when it ends
    services[0].deliver(mention(gh, "@bot stop", 2))
    gh.wait_for(lambda: any("Stopped" in (c["body"] or "") for c in gh.comments(REPO, 1)), timeout=60)


@scenario
def test_stop_kills_the_run_and_says_stopped(world, tmp_path):
    """`@bot stop` while the agent works: the tracking comment says stopped, the job is cancelled."""
    gh = world[0]
    stop_mid_run(world, tmp_path)
    gh.wait_for(lambda: ("episode", "cancelled") in [(j["kind"], j["status"]) for j in store.jobs(store.connect(settings=current()))])
    assert {"subject": "issue_comment", "comment_id": 2, "content": "+1"} in gh.reactions


def test_sigterm_leaves_the_running_job_for_the_next_start(world, tmp_path):
    """SIGTERM mid-run: after the grace period the job stays leased, the comment says it will run
    again, and the next start finishes it in the same tracking comment."""
    gh, provider, env, services = world
    provider.script(call("run", {"command": SLOW}))
    env = dict(env, BOT_SHUTDOWN_GRACE="1")
    services.append(Service(env, tmp_path / "serve1.log").start())
    services[0].deliver(mention(gh, "@bot codex run the slow check", 1))
    gh.wait_for(in_the_run_tool, timeout=120)  # mid-run: the sandbox writes files back only when it ends
    services[0].stop()
    assert services[0].proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it handled
    assert [(j["status"], j["finished_at"]) for j in store.jobs(store.connect(settings=current()))] == [("running", None)]
    assert any("shutting down" in (c["body"] or "") for c in gh.comments(REPO, 1))
    services.append(Service(env, tmp_path / "serve2.log").start())
    gh.wait_for(lambda: store.jobs(store.connect(settings=current()))[0]["status"] == "done", timeout=120)
    bot_comments = [c for c in gh.comments(REPO, 1) if c["user"]["login"] == "bot[bot]"]
    assert len(bot_comments) == 1 and MARKER.search(bot_comments[0]["body"])
    assert len(gh.calls_to("POST", r"/issues/1/comments$")) == 1


def test_stop_halts_the_bridge_and_the_record_shows_it(world, tmp_path):
    """`@bot stop` halts the episode's bridge: the run's record ends with an enforced halt."""
    from bot.record.recorder import Recorder

    stop_mid_run(world, tmp_path)
    recorder = Recorder(store.connect(settings=current()))
    run = recorder.recent(1)[0]
    halts = [e for e in recorder.events(run["id"]) if e["kind"] == "halt"]
    assert len(halts) == 1 and halts[0]["tier"] == "enforced"
