"""A `bot worker` on a machine of its own keeps its own data dir within the retention windows, as
`bot serve` does: worktrees, mirrors, CLI homes and scratch folders live where episodes run, and a
deployment's intake never sees a worker's disk."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.fakes.github import FakeGitHub
from tests.spine.helpers import app_key
from tests.spine.service import ROOT, service_env

pytestmark = pytest.mark.sandbox
DAY = 86_400


def test_a_worker_sweeps_the_scratch_folders_of_its_own_data_dir(tmp_path):
    gh = FakeGitHub(app_id="4242", public_key=app_key()[1]).start()
    try:
        env = service_env(tmp_path, gh, tmp_path / "remotes", "http://127.0.0.1:9", BOT_GC_INTERVAL="0.2")
        old = tmp_path / "data" / "runs" / "0123456789abcdef0123456789abcdef"
        old.mkdir(parents=True)
        (old / "out.txt").write_text("scratch of a run finished 40 days ago")
        os.utime(old, (time.time() - 40 * DAY, time.time() - 40 * DAY))
        worker = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker"], cwd=ROOT, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while old.exists() and worker.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not old.exists(), worker.stdout.read().decode() if worker.poll() is not None else "still there"
        finally:
            worker.terminate()
            worker.wait(60)
    finally:
        gh.stop()
