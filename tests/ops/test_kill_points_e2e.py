"""kill -9 of `bot serve` at each GitHub call a reply job makes (before it is carried out, and
after it took effect but before the answer reaches the bot): the next start answers the command
exactly once."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tests.ops.soak import JOB_MARKER, _comment_payload, _rows
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e

LAND = 4.0  # seconds after the kill that GitHub stores the killed service's comment
SETTLE = "8"  # set it to "0" to see the double answer this test is about
POINTS = [("POST", r"/access_tokens$"), ("POST", r"/issues/1/comments$")]


@pytest.fixture
def world(tmp_path):
    gh = seeded_github()
    env = service_env(tmp_path, gh, make_remote(tmp_path), "http://127.0.0.1:9", BOT_LEASE_SECONDS="1",
                      BOT_POST_SETTLE_SECONDS="2")
    services: list[Service] = []
    try:
        yield gh, env, services
    finally:
        for service in services:
            service.stop()
        gh.stop()


def killer(services: list[Service], killed: list[float]):
    """The kill hook: a kill -9 of the first service, noting when."""
    def kill() -> None:
        os.killpg(services[0].proc.pid, signal.SIGKILL)
        killed.append(time.monotonic())
    return kill


def mention_until_killed_then_restart(gh, env, tmp_path, services, killed, text: str, timeout: float) -> None:
    """Delivers the mention to the first service, waits for the kill hook to fire, then starts the
    next one on the same data dir."""
    comment = gh.add_comment(REPO, 1, text, user="Codertocat")
    assert services[0].deliver(_comment_payload(1, comment["id"], text)).status_code == 202
    gh.wait_for(lambda: killed, timeout=timeout)
    services[0].proc.wait()
    services.append(Service(env, tmp_path / "serve-1.log").start())


def jobs_finished(tmp_path) -> bool:
    """Every job is done, failed or cancelled: nothing is left in the queue that could answer again."""
    return bool(_rows(tmp_path, "SELECT 1 FROM jobs")) and not _rows(
        tmp_path, "SELECT 1 FROM jobs WHERE status IN ('queued', 'running')")


def late_calls_landed() -> None:
    """The fake GitHub carries out a killed service's in-flight call on a timer (`land_after`):
    once every such timer has run, the late write is in the thread."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.join(60)


def answers(gh) -> list[dict]:
    return [c for c in gh.comments(REPO, 1) if c["user"]["login"] == "bot[bot]" and JOB_MARKER.search(c["body"])]


@pytest.mark.parametrize("after", [False, True], ids=["before", "after"])
@pytest.mark.parametrize(("method", "path"), POINTS, ids=["token", "comment"])
def test_help_answered_once_when_killed_at_a_github_call(world, tmp_path, method, path, after):
    gh, env, services = world
    services.append(Service(env, tmp_path / "serve-0.log").start())
    killed: list[float] = []
    gh.kill_on(method, path, killer(services, killed), after=after)
    mention_until_killed_then_restart(gh, env, tmp_path, services, killed, "@bot help", timeout=60)
    gh.wait_for(lambda: _rows(tmp_path, "SELECT status FROM jobs")[0]["status"] == "done", timeout=60)
    gh.wait_for(lambda: jobs_finished(tmp_path), timeout=60)
    assert len(answers(gh)) == 1


def test_help_answered_once_when_the_killed_post_lands_late(world, tmp_path):
    """The window of the double answer: the killed service's POST was in flight and GitHub stored
    it only after the next start had looked for it. The next start waits for such a post to land
    (BOT_POST_SETTLE_SECONDS after it took the job over) before it looks and posts."""
    gh, env, services = world
    env = dict(env, BOT_POST_SETTLE_SECONDS=SETTLE)
    services.append(Service(env, tmp_path / "serve-0.log").start())
    killed: list[float] = []
    gh.kill_on("POST", r"/issues/1/comments$", killer(services, killed), land_after=LAND)
    mention_until_killed_then_restart(gh, env, tmp_path, services, killed, "@bot help", timeout=60)
    gh.wait_for(lambda: _rows(tmp_path, "SELECT status FROM jobs")[0]["status"] == "done", timeout=60)
    late_calls_landed()
    assert len(answers(gh)) == 1


EPISODE_POINTS = [("POST", r"/issues/comments/\d+/reactions$", False), ("POST", r"/issues/1/comments$", True),
                  ("PATCH", r"/issues/comments/\d+$", True)]


@pytest.mark.parametrize(("method", "path", "after"), EPISODE_POINTS, ids=["eyes", "tracking", "edit"])
def test_episode_answered_once_when_killed_at_a_github_call(tmp_path, method, path, after):
    """An agent run (the real Codex against the fake provider) killed at its 👀, its tracking
    comment's POST, or its first edit: the next start ends the same comment with the answer."""
    from tests.fakes.provider import FakeProvider, say

    gh = seeded_github()
    with FakeProvider() as provider:
        provider.script(say("first"), say("second"))
        env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url, BOT_LEASE_SECONDS="1",
                          BOT_POST_SETTLE_SECONDS="2")
        services = [Service(env, tmp_path / "serve-0.log").start()]
        killed: list[float] = []
        gh.kill_on(method, path, killer(services, killed), after=after)
        try:
            mention_until_killed_then_restart(gh, env, tmp_path, services, killed, "@bot codex say something",
                                              timeout=120)
            gh.wait_for(lambda: _rows(tmp_path, "SELECT status FROM jobs")[0]["status"] != "running", timeout=180)
            gh.wait_for(lambda: jobs_finished(tmp_path), timeout=180)
            finals = [c for c in answers(gh) if "<sub>working" not in c["body"]]
            assert len(answers(gh)) == 1 and len(finals) == 1
        finally:
            for service in services:
                service.stop()
            gh.stop()


def test_episode_answer_is_not_overwritten_by_the_killed_services_late_edit(tmp_path):
    """The killed service's progress edit was in flight and GitHub applied it only after the next
    start had already written the answer: the comment would say "working" for good. The next
    start waits for such a write to land before it touches the thread."""
    from tests.fakes.provider import FakeProvider, say

    gh = seeded_github()
    with FakeProvider() as provider:
        provider.script(say("first"), say("second"))
        env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url, BOT_LEASE_SECONDS="1",
                          BOT_POST_SETTLE_SECONDS=SETTLE)
        services = [Service(env, tmp_path / "serve-0.log").start()]
        killed: list[float] = []
        gh.kill_on("PATCH", r"/issues/comments/\d+$", killer(services, killed), land_after=LAND)
        try:
            mention_until_killed_then_restart(gh, env, tmp_path, services, killed, "@bot codex say something",
                                              timeout=120)
            gh.wait_for(lambda: _rows(tmp_path, "SELECT status FROM jobs")[0]["status"] != "running", timeout=180)
            late_calls_landed()
            [answer] = answers(gh)
            assert "<sub>working" not in answer["body"]
        finally:
            for service in services:
                service.stop()
            gh.stop()
