"""The data dir on a full filesystem (a 4 MB tmpfs this test mounts and removes): deliveries that
cannot be stored are refused with 503, nothing stored is corrupted, and once space returns the
service takes deliveries again without a restart. Intake only (BOT_WORKERS=0): no job runs."""
from __future__ import annotations

import sqlite3
import subprocess
import uuid

import pytest

from tests.ops.soak import _comment_payload
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e
REQUEST = "@bot codex " + "please look at this part of the code again " * 400  # ~17 kB a job


@pytest.fixture
def small_disk(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(data)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield data
    finally:
        subprocess.run(["umount", "-l", str(data)], check=True)


@pytest.fixture
def served(tmp_path, small_disk):
    gh = seeded_github()
    env = service_env(tmp_path, gh, make_remote(tmp_path), "http://127.0.0.1:9", BOT_WORKERS="0")
    service = Service(env, tmp_path / "serve.log").start()
    try:
        yield gh, service
    finally:
        service.stop()
        gh.stop()


def fill(data) -> None:
    """Write a filler file until the filesystem says it is full."""
    with open(data / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError:
            pass


def deliver(gh, service) -> tuple[str, int]:
    comment = gh.add_comment(REPO, 1, REQUEST, user="Codertocat")
    delivery = str(uuid.uuid4())
    return delivery, service.deliver(_comment_payload(1, comment["id"], REQUEST), delivery=delivery).status_code


def stored(data) -> set[str]:
    conn = sqlite3.connect(data / "bot.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {row[0] for row in conn.execute("SELECT delivery_id FROM jobs")}
    finally:
        conn.close()


def test_full_disk_refuses_with_503_then_recovers(served, small_disk):
    gh, service = served
    fill(small_disk)
    answers = dict(deliver(gh, service) for _ in range(60))
    assert set(answers.values()) <= {202, 503} and 503 in answers.values()
    (small_disk / "filler").unlink()
    after = dict(deliver(gh, service) for _ in range(3))
    assert set(after.values()) == {202}
    accepted = {d for d, status in {**answers, **after}.items() if status == 202}
    assert stored(small_disk) == accepted  # every 202 kept, no 503 half-stored, the file intact
