"""The image end to end: built here from a Debian trixie base made with mmdebstrap
(scripts/build-image, once per session), then an intake (`serve`, BOT_WORKERS=0) and workers from it
on the host's network, with the session's PostgreSQL (its socket mounted), the fake GitHub and the
fake provider on the host. A comment is answered by the real Codex CLI in tier 1 inside a worker
container started with compose.yaml's own options (no --privileged, no cgroup mounted: the
container's own caps hold the episode); a worker stopped mid-episode by a rolling restart, here
with a delegated cgroup subtree (several episodes per container), leaves the comment to the next
worker, answered once."""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot import db as bot_db
from bot.db.database import Database
from tests.conftest import is_root
from tests.deploy import container
from tests.deploy.container import TIER1_OPTIONS, Container, compose_worker_environment, delegated_cgroup, owned_by_bot
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub
from tests.fakes.provider import FakeProvider, call, say
from tests.spine.helpers import payload, signed
from tests.spine.service import REPO, free_port, make_remote, seeded_github, service_env
from tests.store.conftest import TEST_KEY
from tests.store.postgres import Cluster

pytestmark = [pytest.mark.container, pytest.mark.skipif(
    bool(container.missing_tools()) or not is_root() or not container.cgroup_v1(),
    reason=f"needs rootful podman, runc and mmdebstrap (missing: {container.missing_tools()}) on a cgroup-v1 "
           "host (make test installs them)")]
MARKER = re.compile(r"<!-- bot:run (\{.*?\}) -->")
SLOW = "touch .started && sleep 20"
PASSED = ("BOT_PORT", "GITHUB_API_URL", "GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET",
          "BOT_GIT_BASE_URL", "BOT_CODEX_BASE_URL", "OPENAI_API_KEY", "BOT_DEFAULT_AGENT", "BOT_PROGRESS_INTERVAL",
          "BOT_DATABASE_URL", "BOT_SECRET_KEY", "BOT_LEASE_SECONDS", "BOT_SHUTDOWN_GRACE")


@pytest.fixture(scope="session")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    tag = "localhost/github-agent-bot:test"
    container.build(tag, tmp_path_factory.mktemp("image") / "build.log")
    return tag


class World:
    def __init__(self, tmp: Path, image: str, url: str, gh: FakeGitHub, provider: FakeProvider, socket_dir: str):
        remotes = owned_by_bot(make_remote(tmp))
        env = service_env(tmp, gh, remotes, provider.url, BOT_DATABASE_URL=url, BOT_SECRET_KEY=TEST_KEY,
                          BOT_LEASE_SECONDS="3", BOT_SHUTDOWN_GRACE="1")
        self.env = {name: env[name] for name in PASSED} | {"BOT_HOST": "127.0.0.1"}
        self.tmp, self.image, self.gh = tmp, image, gh
        self.mounts = ["--volume", f"{remotes}:{remotes}:ro", "--volume", f"{socket_dir}:{socket_dir}"]
        self.containers: list[Container] = []

    def start(self, name: str, command: str, options: list[str], **env: str) -> Container:
        data = owned_by_bot(self.tmp / name)
        one = Container(self.image, f"bot-test-{name}-{os.getpid()}", {**self.env, **env}, self.tmp / f"{name}.log")
        self.containers.append(one)
        return one.start(command, [*self.mounts, "--volume", f"{data}:/var/lib/bot/data", *options])

    def intake(self) -> Container:
        port = free_port()
        return self.start("intake", "serve", [], BOT_WORKERS="0", BOT_PORT=str(port)).wait_healthy(port)

    def worker(self, name: str, db: Database, cgroup: list[str] | None = None) -> Container:
        """A worker as compose.yaml runs it; with `cgroup`, also a delegated subtree for 2 episodes."""
        env = compose_worker_environment() if cgroup is None else {
            "BOT_WORKERS": "2", "BOT_CGROUP_ROOT": container.CGROUP_IN_CONTAINER}
        one = self.start(name, "worker", [*TIER1_OPTIONS, *(cgroup or [])], **env)
        one.wait_until(lambda: db.query("SELECT 1 FROM workers WHERE host = ?", [one.name]), "a heartbeat")
        return one

    def stop_all(self) -> None:
        for one in self.containers:
            one.stop(grace=10)
            one.remove()


@pytest.fixture
def world(tmp_path: Path, image: str, pg_cluster: Cluster) -> Iterator[tuple[World, FakeProvider, Database]]:
    gh = seeded_github()
    url = pg_cluster.new_database()
    os.environ["BOT_SECRET_KEY"] = TEST_KEY  # this test process reads the database too
    with FakeProvider() as provider:
        built = World(tmp_path, image, url, gh, provider, str(pg_cluster.socket))
        try:
            yield built, provider, bot_db.connect(url, settings=current())
        finally:
            built.stop_all()
            gh.stop()
            os.environ.pop("BOT_SECRET_KEY", None)


def mention(world: World, body: str, comment_id: int) -> dict:
    world.gh.add_comment(REPO, 1, body, user="Codertocat", comment_id=comment_id)
    data = payload("issue_comment.created", body)
    data["comment"]["id"] = comment_id
    return data


def deliver(intake: Container, data: dict) -> int:
    body, headers = signed(data, "issue_comment", None)
    return httpx.post(f"http://127.0.0.1:{intake.env['BOT_PORT']}/webhook", content=body, headers=headers,
                      timeout=10).status_code


def bot_comments(world: World) -> list[dict]:
    return [c for c in world.gh.comments(REPO, 1) if c["user"]["login"] == "bot[bot]"]


def answers(world: World) -> list[str]:
    return [c["body"] for c in bot_comments(world) if MARKER.search(c["body"] or "")]


def test_a_comment_is_answered_by_a_real_cli_in_tier_1_inside_the_worker_container(world: tuple[World, FakeProvider, Database]) -> None:
    built, provider, db = world
    provider.script(say("The repository greets the world."))
    intake = built.intake()
    worker = built.worker("w1", db)
    assert deliver(intake, mention(built, "@bot codex what does this repository do?", 1)) == 202
    built.gh.wait_for(lambda: answers(built), timeout=600)
    answer = answers(built)[0]
    assert "greets the world" in answer and "sandbox tier 1" in answer, answer
    assert len(bot_comments(built)) == 1
    assert "caps: the container's own cgroup (memory 2 GiB, pids 512), one episode at a time" in worker.output()


def test_a_worker_stopped_mid_episode_by_a_rolling_restart_leaves_the_comment_answered_once(world: tuple[World, FakeProvider, Database]) -> None:
    built, provider, db = world
    provider.script(call("run", {"command": SLOW}))
    intake = built.intake()
    with delegated_cgroup() as first_cgroup, delegated_cgroup() as second_cgroup:
        first = built.worker("w1", db, first_cgroup)
        assert deliver(intake, mention(built, "@bot codex run the slow check", 2)) == 202
        first.wait_until(lambda: db.query("SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"),
                         "the episode in its bridged run", timeout=600)
        built.worker("w2", db, second_cgroup)  # the new replica is up before the old one stops
        assert first.stop() == 0
        built.gh.wait_for(lambda: answers(built), timeout=600)
        built.gh.wait_for(lambda: not db.query("SELECT 1 FROM jobs WHERE status IN ('queued', 'running')"),
                          timeout=300)
    assert len(bot_comments(built)) == 1 and len(built.gh.calls_to("POST", r"/issues/1/comments$")) == 1
    assert [(j["status"], j["attempts"]) for j in db.query("SELECT status, attempts FROM jobs")] == [("done", 2)]
    assert "sandbox tier 1" in answers(built)[0]


def test_sandbox_check_in_the_container_names_the_masked_proc(image: str) -> None:
    pairs = list(zip(TIER1_OPTIONS[::2], TIER1_OPTIONS[1::2], strict=True))
    masked = [part for pair in pairs if pair != ("--security-opt", "unmask=/proc/*") for part in pair]
    done = container.podman("run", "--rm", "--no-healthcheck", *masked, image, "sandbox", "check", check=False)
    assert done.returncode == 70, done.stdout + done.stderr
    assert "FAIL tier-1 sandbox starts: needs a fresh /proc" in done.stdout, done.stdout


def test_sandbox_check_in_the_container_as_compose_runs_it_passes_under_the_containers_own_caps(image: str) -> None:
    done = container.podman("run", "--rm", "--no-healthcheck", *TIER1_OPTIONS, image, "sandbox", "check", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("ok   cgroup memory+pids caps: caps: the container's own cgroup (memory 2 GiB, pids 512), one episode "
            "at a time") in done.stdout.splitlines(), done.stdout


def test_sandbox_check_in_the_container_prefers_a_delegated_subtree(image: str) -> None:
    with delegated_cgroup() as cgroup:
        done = container.podman("run", "--rm", "--no-healthcheck", *TIER1_OPTIONS, *cgroup, "--env",
                                f"BOT_CGROUP_ROOT={container.CGROUP_IN_CONTAINER}", image, "sandbox", "check",
                                check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (f"ok   cgroup memory+pids caps: cgroup v1: {container.CGROUP_IN_CONTAINER}/memory/bot-sandbox/preflight-"
            in done.stdout), done.stdout


def test_sandbox_check_in_an_uncapped_container_names_both_ways_in_one_line(image: str) -> None:
    uncapped = [part for flag, value in zip(TIER1_OPTIONS[::2], TIER1_OPTIONS[1::2], strict=True)
                if flag not in ("--memory", "--memory-swap", "--pids-limit") for part in (flag, value)]
    done = container.podman("run", "--rm", "--no-healthcheck", *uncapped, image, "sandbox", "check", check=False)
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL cgroup")]
    assert failed and "to run one episode at a time (it has memory: no cap" in failed[0], done.stdout
    assert "or, to run several at once" in failed[0] and "BOT_CGROUP_ROOT" in failed[0], done.stdout


FORK_UNTIL_REFUSED = """
import os, time
n = 0
while n < 1000:
    try:
        pid = os.fork()
    except OSError:
        print(f"fork refused after {n}", flush=True)
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
"""


def test_a_fork_bomb_in_the_container_as_compose_runs_it_stops_at_its_pids_cap_and_is_reported(image: str) -> None:
    done = container.podman("run", "--rm", "--no-healthcheck", *TIER1_OPTIONS, image, "sandbox", "exec", "--",
                            "python3", "-c", FORK_UNTIL_REFUSED, check=False)
    assert "fork refused after" in done.stdout, done.stdout + done.stderr
    assert int(done.stdout.split("after ")[1].split()[0]) < 512
    said = [line for line in done.stderr.splitlines() if line.startswith("sandbox: {")]
    assert said and '"pids_max_hit": true' in said[-1] and '"cgroup_scope": "container"' in said[-1], done.stderr
