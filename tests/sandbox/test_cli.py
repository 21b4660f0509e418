"""`bot sandbox exec` and `bot sandbox check` as an operator runs them (a real subprocess)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[2]


def bot(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, env={**os.environ, **(env or {})})


def test_exec_prints_output_and_exits_with_command_code(tmp_path):
    """exec prints the command's output and exits with its exit code."""
    (tmp_path / "hello.txt").write_text("hi there\n")
    done = bot("sandbox", "exec", "--workdir", str(tmp_path), "--", "sh", "-c", "cat hello.txt; exit 7")
    assert done.returncode == 7
    assert done.stdout == "hi there\n"


def test_exec_reports_egress_decisions_and_outcome(tmp_path):
    """exec lists each egress decision and the outcome as JSON lines on stderr."""
    done = bot("sandbox", "exec", "--workdir", str(tmp_path), "--allow", "api.openai.com", "--",
               "curl", "-s", "-o", "/dev/null", "https://example.com/")
    egress = [json.loads(line[8:]) for line in done.stderr.splitlines() if line.startswith("egress: ")]
    outcome = [json.loads(line[9:]) for line in done.stderr.splitlines() if line.startswith("sandbox: ")]
    assert [(e["host"], e["reason"]) for e in egress] == [("example.com", "blocked-by-allowlist")]
    assert outcome[0]["tier"] == 1 and outcome[0]["egress"] == {"allowed": 0, "denied": 1}


def test_exec_writable_worktree(tmp_path):
    """--writable lets the command write the workdir; without it the write fails."""
    assert bot("sandbox", "exec", "--workdir", str(tmp_path), "--", "touch", "a").returncode != 0
    assert bot("sandbox", "exec", "--workdir", str(tmp_path), "--writable", "--", "touch", "a").returncode == 0
    assert (tmp_path / "a").exists()


def test_exec_timeout_kills(tmp_path):
    """--timeout kills the command; the exit code says it was killed (128+9)."""
    done = bot("sandbox", "exec", "--workdir", str(tmp_path), "--timeout", "1", "--", "sleep", "30")
    assert done.returncode == 137
    assert '"timed_out": true' in done.stderr


def test_exec_refused_exits_70_and_runs_nothing(tmp_path):
    """Without bwrap on PATH, exec exits 70 with the reason and fix, and runs nothing."""
    done = bot("sandbox", "exec", "--workdir", str(tmp_path), "--writable", "--", "/usr/bin/touch", "ran",
               env={"PATH": str(tmp_path / "nothing")})
    assert done.returncode == 70
    assert "refused: bubblewrap (bwrap) was not found on PATH" in done.stderr
    assert "fix: install bubblewrap" in done.stderr
    assert not (tmp_path / "ran").exists()


def test_check_lists_floor_verdicts():
    """`bot sandbox check` prints one verdict per floor check and exits 0 on this host."""
    done = bot("sandbox", "check")
    assert done.returncode == 0
    assert "ok   bubblewrap installed" in done.stdout
    assert "ok   cgroup memory+pids caps" in done.stdout


def test_check_verifies_the_sandboxed_command_is_not_host_root():
    """`bot sandbox check` starts a sandbox and reports the command's host uid and that
    kernel.core_pattern refused an open for writing."""
    done = bot("sandbox", "check")
    line = next(line for line in done.stdout.splitlines() if "sandboxed command is not host root" in line)
    assert line.startswith("ok ") and "host uid 0;" not in line and "core_pattern refused" in line


@pytest.mark.parametrize("script", ["true", "echo made > a"], ids=["wrote nothing", "wrote"])
def test_a_one_shot_exec_leaves_no_scratch_folder_when_it_ends(tmp_path, script):
    """The run is over for the bot at its launcher's word, before the launcher's exit: a command
    that ends right after still removes the run's scratch folder (and cgroups) once the launcher
    is gone, before the process ends."""
    work, temporary = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    temporary.mkdir()
    done = bot("sandbox", "exec", "--workdir", str(work), "--writable", "--", "sh", "-c", script,
               env={"TMPDIR": str(temporary)})
    assert done.returncode == 0, done.stderr
    assert [p.name for p in temporary.iterdir() if p.name.startswith("bot-layers-")] == []
