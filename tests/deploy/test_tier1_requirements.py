"""What tier 1 needs from a container, named when it is missing: `bot sandbox check` says which
requirement failed, and `bot worker` refuses to start in one line rather than run no episode.
A masked /proc (what a container runtime does by default) is made here on the host: a private mount
namespace with /dev/null over /proc/keys, so bwrap cannot mount the sandbox's own /proc."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import is_root
from tests.spine.helpers import SECRET, app_key

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not is_root() or shutil.which("unshare") is None,
                                reason="masking /proc in a private mount namespace needs root and unshare")


MASK_PROC = "mount --bind /dev/null /proc/keys"
READ_ONLY_CGROUPS = ("for c in memory pids; do mount --bind /sys/fs/cgroup/$c /sys/fs/cgroup/$c && "
                     "mount -o remount,bind,ro /sys/fs/cgroup/$c; done")


def with_masked_proc(*argv: str, env: dict[str, str] | None = None, mask: str = MASK_PROC
                     ) -> subprocess.CompletedProcess:
    script = mask + ' && exec "$@"'
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                           sys.executable, "-m", "bot.cli", *argv], cwd=ROOT, env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=120)


def worker_env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, BOT_DATA_DIR=str(tmp_path / "data"), GITHUB_APP_ID="4242",
                GITHUB_PRIVATE_KEY=app_key()[0], GITHUB_WEBHOOK_SECRET=SECRET, PYTHONPATH=str(ROOT))


def test_sandbox_check_names_the_unmasked_proc_a_masked_proc_lacks() -> None:
    done = with_masked_proc("sandbox", "check")
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert done.returncode == 70
    assert failed and failed[0].startswith("FAIL tier-1 sandbox starts: needs a fresh /proc"), done.stdout
    assert "unmask=/proc/*" in failed[0] and "procMount: Unmasked" in failed[0]


@pytest.mark.skipif(not Path("/sys/fs/cgroup/memory/cgroup.procs").exists(), reason="a cgroup-v1 host")
def test_sandbox_check_names_both_ways_when_the_cgroups_are_read_only_and_the_container_uncapped() -> None:
    """Read-only cgroups and no caps on the bot's own: one line with the container's caps (one
    episode at a time) first, then the subtree mounted where BOT_CGROUP_ROOT points (several)."""
    done = with_masked_proc("sandbox", "check", mask=READ_ONLY_CGROUPS)
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert failed and failed[0].startswith(
        "FAIL cgroup memory+pids caps: needs the cgroup this process is in (the container's) capped at memory "
        "2 GiB and pids 512 or below, to run one episode at a time (it has memory: no cap, pids: no cap;"), done.stdout
    assert "or, to run several at once, a memory and a pids cgroup owned by the bot's user mounted where " \
           "BOT_CGROUP_ROOT points" in failed[0]


@pytest.mark.skipif(not Path("/sys/fs/cgroup/memory/cgroup.procs").exists(), reason="a cgroup-v1 host")
def test_the_read_only_cgroups_fix_names_one_variable_not_two() -> None:
    """A container's read-only cgroups are fixed by mounting subtrees where BOT_CGROUP_ROOT points;
    the host's way (a delegated subtree named in BOT_CGROUP_PARENT) is not offered next to it."""
    done = with_masked_proc("sandbox", "check", mask=READ_ONLY_CGROUPS)
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL cgroup")]
    assert failed and "BOT_CGROUP_PARENT" not in failed[0], done.stdout


def test_worker_refuses_to_start_in_one_line_when_tier_1_cannot_run(tmp_path: Path) -> None:
    done = with_masked_proc("worker", env=worker_env(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("bot worker: tier 1 cannot run here: needs a fresh /proc"), done.stderr


@pytest.mark.skipif(not Path("/sys/fs/cgroup/memory/cgroup.procs").exists(), reason="a cgroup-v1 host")
def test_worker_without_a_subtree_or_caps_of_its_own_refuses_naming_both_ways_in_one_line(tmp_path: Path) -> None:
    done = with_masked_proc("worker", env=worker_env(tmp_path), mask=READ_ONLY_CGROUPS)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("bot worker: tier 1 cannot run here: needs the cgroup this process is in (the "
                                  "container's) capped at memory 2 GiB and pids 512 or below"), done.stderr
    assert "mem_limit and pids_limit" in done.stderr and "podPidsLimit" in done.stderr
    assert "or, to run several at once" in done.stderr and "BOT_CGROUP_ROOT" in done.stderr


def test_worker_on_tier_0_starts_without_asking_for_tier_1(tmp_path: Path) -> None:
    env = dict(worker_env(tmp_path), BOT_SANDBOX_TIER="0")
    proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                             'mount --bind /dev/null /proc/keys && exec "$@"', "sh", sys.executable, "-m",
                             "bot.cli", "worker"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "worker " in line and "at once" in line:
                break
        else:
            pytest.fail("bot worker on tier 0 exited before it started")
    finally:
        proc.terminate()
        proc.wait(60)
