"""End to end on one PostgreSQL: one intake (`bot serve`, BOT_WORKERS=0) and `bot worker`
processes with separate data dirs, as separate machines would have, the fake GitHub, the fake
provider and the real Codex CLI in the sandbox.

Twenty threads with two turns each: the first turns on one worker, the second turns on the two
others (the first is stopped in between, so "another machine" is certain, not likely).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot import db as bot_db
from bot.job import conversations
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, call
from tests.spine.helpers import payload
from tests.spine.service import REPO, ROOT, Service, make_remote, seeded_github, service_env
from tests.store.conftest import TEST_KEY

pytestmark = pytest.mark.e2e
MARKER = re.compile(r"<!-- bot:run (\{.*?\}) -->")
THREADS = 20
SLOW = "sleep 30"


class Worker(Service):
    """`bot worker` in its own process group, with its own data dir; `kill()` is a kill -9. Ready
    when it heartbeats in the database (it serves no HTTP), so `start` takes the database."""

    stop_seconds = 60

    def __init__(self, env: dict[str, str], data: Path, log: Path):
        super().__init__(dict(env, BOT_DATA_DIR=str(data)), log)
        self.data, self.log = data, log

    def start(self, db) -> Worker:  # type: ignore[override]
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker"], cwd=ROOT, env=self.env,
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if db.query("SELECT 1 FROM workers WHERE pid = ?", [self.proc.pid]):
                return self
            assert self.proc.poll() is None, self.log.read_text()[-3000:]
            time.sleep(0.1)
        raise AssertionError("bot worker did not heartbeat:\n" + self.log.read_text()[-3000:])


@pytest.fixture
def cluster_world(tmp_path, pg_cluster):
    gh = seeded_github()
    for number in range(3, 3 + THREADS):
        gh.add_issue(REPO, number, title=f"Thread {number}", user="Codertocat")
    remotes = make_remote(tmp_path)
    url = pg_cluster.new_database()
    with FakeProvider() as provider:
        env = service_env(tmp_path, gh, remotes, provider.url, BOT_DATABASE_URL=url, BOT_SECRET_KEY=TEST_KEY,
                          BOT_LEASE_SECONDS="3", BOT_WORKERS="2")
        os.environ["BOT_SECRET_KEY"] = TEST_KEY  # this test process reads the database too
        db = bot_db.connect(url, settings=current())
        intake = Service(dict(env, BOT_WORKERS="0", BOT_DATA_DIR=str(tmp_path / "intake")),
                         tmp_path / "intake.log").start()
        workers = {name: Worker(env, tmp_path / name, tmp_path / f"{name}.log") for name in ("w1", "w2", "w3")}
        try:
            yield gh, provider, intake, workers, db
        finally:
            for worker in workers.values():
                worker.stop()
            intake.stop()
            gh.stop()
            os.environ.pop("BOT_SECRET_KEY", None)


def mention(gh, number: int, body: str, comment_id: int) -> dict:
    gh.add_comment(REPO, number, body, user="Codertocat", comment_id=comment_id)
    data = payload("issue_comment.created", body)
    data["comment"]["id"] = comment_id
    data["issue"]["number"] = number
    return data


def answers(gh, number: int) -> list[str]:
    return [c["body"] for c in gh.comments(REPO, number) if MARKER.search(c["body"] or "")]


def bot_comments(gh, number: int) -> list[dict]:
    return [c for c in gh.comments(REPO, number) if c["user"]["login"] == "bot[bot]"]


def marker(worker: Worker, number: int) -> str | None:
    """The version of the thread's codex home this worker's machine last held (a marker is
    `version:digest of the sealed row`)."""
    found = worker.data / "session-versions" / f"{conversations.slug(f'{REPO}#{number}')}.codex"
    return found.read_text().partition(":")[0] if found.exists() else None


def jobs_finished(db) -> bool:
    return bool(db.query("SELECT 1 FROM jobs")) and not db.query(
        "SELECT 1 FROM jobs WHERE status IN ('queued', 'running')")


def in_the_run_tool(db) -> bool:
    """The episode's record holds the bridged `run` it is in (the sandbox writes a file back
    to the worktree only when the run has ended, too late to stop or kill it mid-run)."""
    return bool(db.query("SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"))


def running_worker(db, workers: dict[str, Worker]) -> Worker:
    """The worker holding the running episode's lease (its owner is `host:pid:nonce`)."""
    owners = [row["lease_owner"] for row in db.query("SELECT lease_owner FROM jobs WHERE status = 'running'")]
    pids = {int(owner.split(":")[1]) for owner in owners if owner}
    found = [worker for worker in workers.values() if worker.proc is not None and worker.proc.pid in pids]
    assert len(found) == 1, (owners, [w.proc.pid for w in workers.values() if w.proc is not None])
    return found[0]


def test_second_turns_run_on_other_workers_and_resume_the_session(cluster_world):
    gh, provider, intake, workers, db = cluster_world
    threads = range(3, 3 + THREADS)
    workers["w1"].start(db)
    for number in threads:
        assert intake.deliver(mention(gh, number, "@bot codex Say hello", 100 + number)).status_code == 202
    gh.wait_for(lambda: all(len(answers(gh, n)) == 1 for n in threads), timeout=600)
    workers["w1"].stop()  # the second turns can only run on the other machines
    workers["w2"].start(db)
    workers["w3"].start(db)
    for number in threads:
        intake.deliver(mention(gh, number, "@bot codex Second turn please", 200 + number))
    gh.wait_for(lambda: all(len(answers(gh, n)) == 2 for n in threads), timeout=600)
    for number in threads:
        second = answers(gh, number)[1]
        assert "prior_assistant_turns=1" in second and "resumed session" in second, second
        assert marker(workers["w1"], number) == "1"
        assert "2" in (marker(workers["w2"], number), marker(workers["w3"], number))
        assert len(bot_comments(gh, number)) == 2


def test_killed_worker_job_is_taken_over_after_the_lease_and_answered_once(cluster_world):
    gh, provider, intake, workers, db = cluster_world
    provider.script(call("run", {"command": SLOW}))
    for name in ("w1", "w2"):
        workers[name].start(db)
    intake.deliver(mention(gh, 3, "@bot codex run the slow check", 301))
    gh.wait_for(lambda: in_the_run_tool(db), timeout=300)
    running_worker(db, workers).kill()
    gh.wait_for(lambda: answers(gh, 3), timeout=300)
    gh.wait_for(lambda: jobs_finished(db), timeout=300)  # nothing is left in the queue that could answer again
    assert len(bot_comments(gh, 3)) == 1 and len(gh.calls_to("POST", r"/issues/3/comments$")) == 1
    assert [(j["status"], j["attempts"]) for j in db.query("SELECT status, attempts FROM jobs")] == [("done", 2)]


def test_stop_sent_to_the_intake_stops_the_run_on_the_worker_machine(cluster_world):
    gh, provider, intake, workers, db = cluster_world
    provider.script(call("run", {"command": SLOW}))
    workers["w1"].start(db)
    intake.deliver(mention(gh, 3, "@bot codex run the slow check", 401))
    gh.wait_for(lambda: in_the_run_tool(db), timeout=300)
    intake.deliver(mention(gh, 3, "@bot stop", 402))
    gh.wait_for(lambda: any("Stopped" in (c["body"] or "") for c in gh.comments(REPO, 3)), timeout=120)
    gh.wait_for(lambda: ("episode", "cancelled") in [(j["kind"], j["status"]) for j in
                                                     db.query("SELECT kind, status FROM jobs")], timeout=60)
