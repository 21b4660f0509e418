"""Tier 1 under the container's own cgroup, on this host's kernel: the bot runs in a memory and a
pids cgroup capped as a container runtime caps a container's, with /sys/fs/cgroup read-only in a
private mount namespace (as a container sees it), so no cgroup can be made per run. The kernel
enforces the caps on the run, the bot reports what its own cgroups would have (OOM kill, pids.max
hit) from the container's counters, and nothing the run started outlives it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import is_root
from tests.deploy.test_tier1_requirements import READ_ONLY_CGROUPS, worker_env

ROOT = Path(__file__).resolve().parents[2]
V1 = Path("/sys/fs/cgroup")
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(
    not is_root() or shutil.which("unshare") is None or not (V1 / "memory" / "cgroup.procs").exists(),
    reason="capping a cgroup and mounting the cgroups read-only needs root, unshare and a cgroup-v1 host")]
GIB = 1 << 30
FORK_UNTIL_REFUSED = """
import os, time
n = 0
while n < 1000:
    try:
        pid = os.fork()
    except OSError as exc:
        print(f"fork refused after {n}", flush=True)
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
"""


@contextmanager
def container_cgroup(memory: int, pids: int) -> Iterator[list[Path]]:
    """A memory and a pids cgroup capped like a container's (swap included where the host counts
    it); removed afterwards, which fails while any process is left in them."""
    name = f"bot-own-{uuid.uuid4().hex[:8]}"
    made = [V1 / "memory" / name, V1 / "pids" / name]
    for group in made:
        group.mkdir()
    (made[0] / "memory.limit_in_bytes").write_text(str(memory))
    if (made[0] / "memory.memsw.limit_in_bytes").exists():
        (made[0] / "memory.memsw.limit_in_bytes").write_text(str(memory))
    (made[1] / "pids.max").write_text(str(pids))
    try:
        yield made
    finally:
        for group in made:
            deadline = time.monotonic() + 10
            while group.exists():
                try:
                    group.rmdir()
                except OSError:  # busy for a few ms after its last task exits
                    assert time.monotonic() < deadline, f"{group} still holds {(group / 'cgroup.procs').read_text()}"
                    time.sleep(0.01)


def inside(groups: list[Path], *argv: str, env: dict[str, str] | None = None) -> list[str]:
    """The argv that runs `bot ARGV` in `groups` with the cgroups read-only, as in a container."""
    join = " && ".join(f"echo $$ > {group}/cgroup.procs" for group in groups)
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'{join} && {READ_ONLY_CGROUPS} && exec "$@"', "sh", sys.executable, "-m", "bot.cli", *argv]


def bot(groups: list[Path], tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    """`bot ARGV` inside the capped cgroup, from a folder of the test's own: `sandbox exec` runs over
    its working folder, which tier 1 (as root) hands to the sandbox's user, and the project's
    checkout must never be that folder."""
    env = dict(os.environ, BOT_DATA_DIR=str(tmp_path / "data"), PYTHONPATH=str(ROOT))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(inside(groups, *argv), cwd=work, env=env, capture_output=True, text=True, timeout=300)


def outcome(done: subprocess.CompletedProcess) -> dict:
    lines = [line for line in done.stderr.splitlines() if line.startswith("sandbox: {")]
    assert lines, done.stdout + done.stderr
    return json.loads(lines[-1].removeprefix("sandbox: "))


def test_sandbox_check_passes_under_the_containers_own_caps(tmp_path: Path) -> None:
    with container_cgroup(2 * GIB, 512) as groups:
        done = bot(groups, tmp_path, "sandbox", "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("ok   cgroup memory+pids caps: caps: the container's own cgroup (memory 2 GiB, pids 512), one "
            "episode at a time") in done.stdout.splitlines()
    assert any(line.startswith("ok   tier-1 sandbox starts") for line in done.stdout.splitlines()), done.stdout


def test_a_run_past_the_containers_memory_cap_is_oom_killed_and_the_bot_says_so(tmp_path: Path) -> None:
    with container_cgroup(256 << 20, 128) as groups:
        done = bot(groups, tmp_path, "sandbox", "exec", "--memory", str(256 << 20), "--pids", "128", "--",
                   "python3", "-c", "b = b'x' * (512 << 20); print('survived')")
    said = outcome(done)  # the bot outlived the OOM kill: the run's processes went first
    assert "survived" not in done.stdout
    assert said["oom_killed"] is True and said["cgroup_scope"] == "container", said


def test_a_fork_bomb_stops_at_the_containers_pids_cap_and_the_bot_says_so(tmp_path: Path) -> None:
    with container_cgroup(2 * GIB, 64) as groups:
        done = bot(groups, tmp_path, "sandbox", "exec", "--pids", "64", "--", "python3", "-c", FORK_UNTIL_REFUSED)
    assert "fork refused after" in done.stdout, done.stdout + done.stderr
    assert int(done.stdout.split("after ")[1].split()[0]) < 64
    assert outcome(done)["pids_max_hit"] is True


def test_a_run_that_hit_no_cap_reports_none(tmp_path: Path) -> None:
    with container_cgroup(2 * GIB, 512) as groups:
        done = bot(groups, tmp_path, "sandbox", "exec", "--", "true")
    said = outcome(done)
    assert done.returncode == 0 and (said["oom_killed"], said["pids_max_hit"]) == (False, False), said


def test_nothing_a_run_started_outlives_it_under_the_containers_caps(tmp_path: Path) -> None:
    """A double-forked setsid daemon alive when the run's command exits is gone with it: the
    container's cgroups hold no process once the bot has exited (their removal fails otherwise)."""
    script = ("setsid sh -c 'nohup sleep 300 >/dev/null 2>&1 &'; "
              "until pgrep -x sleep >/dev/null; do sleep 0.01; done; echo detached")
    with container_cgroup(2 * GIB, 512) as groups:
        done = bot(groups, tmp_path, "sandbox", "exec", "--", "sh", "-c", script)
        left = [(group / "cgroup.procs").read_text().split() for group in groups]
    assert done.stdout == "detached\n", done.stderr
    assert left == [[], []]


def test_the_worker_runs_one_episode_at_a_time_under_the_containers_caps(tmp_path: Path) -> None:
    with container_cgroup(2 * GIB, 512) as groups:
        proc = subprocess.Popen(inside(groups, "worker"), cwd=ROOT, env=dict(worker_env(tmp_path), BOT_WORKERS="2"),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        said = []
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                said.append(line)
                if " at once, database" in line:
                    break
        finally:
            proc.terminate()
            proc.wait(60)
    log = "".join(said)
    assert ("caps: the container's own cgroup (memory 2 GiB, pids 512), one episode at a time: 1 at once, not 2 "
            "(BOT_WORKERS)") in log, log
    assert ": 1 at once, database" in log, log


@pytest.mark.parametrize("writable", [False, True], ids=["read-only worktree", "writable worktree (layers)"])
def test_a_run_killed_at_its_time_limit_leaves_nothing_under_the_containers_caps(tmp_path: Path,
                                                                                   writable: bool) -> None:
    """Killed mid-run (the wall clock), a daemon it started and its foreground command are gone:
    the kill reaches them through bwrap's PID namespace alone, no cgroup kill."""
    work = tmp_path / "work"
    work.mkdir()
    script = "setsid sh -c 'nohup sleep 300 >/dev/null 2>&1 &'; echo started; sleep 60"
    with container_cgroup(2 * GIB, 512) as groups:
        done = bot(groups, tmp_path, "sandbox", "exec", "--timeout", "3", "--workdir", str(work),
                   *(["--writable"] if writable else []), "--", "sh", "-c", script)
        left = [(group / "cgroup.procs").read_text().split() for group in groups]
    assert done.stdout == "started\n" and outcome(done)["timed_out"] is True, done.stderr
    assert left == [[], []]
