"""Tier 1 when the bot runs as an unprivileged user (uid `nobody`) with a delegated cgroup subtree.

The project's sandbox code is copied to a world-readable folder and run with the system
python3 (the sandbox needs only the standard library), so the test does not depend on
where the checkout lives.
"""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import is_root

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]
ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534


@pytest.fixture
def delegated_cgroup():
    """A cgroup subtree per controller, chowned to nobody (what an operator does once)."""
    name = f"bot-test-{secrets.token_hex(4)}"
    made = []
    for controller in ("memory", "pids"):
        path = Path("/sys/fs/cgroup") / controller / name
        path.mkdir()
        made.append(path)
        for entry in [path, *path.iterdir()]:
            os.chown(entry, NOBODY, -1)
    yield name
    for path in made:
        for child in sorted(path.glob("*/*/"), reverse=True) + sorted(path.glob("*/")):
            if child.is_dir():
                child.rmdir()
        path.rmdir()


@pytest.fixture
def world_readable_tree():
    """The sandbox, bot and adapters packages plus a workdir, readable by nobody."""
    folder = Path(tempfile.mkdtemp(prefix="bot-unpriv-"))
    os.chmod(folder, 0o755)
    for package in ("sandbox", "bot", "adapters"):
        shutil.copytree(ROOT / package, folder / "code" / package,
                        ignore=shutil.ignore_patterns("__pycache__", "templates"))
    for sub in ("work", "data"):
        (folder / sub).mkdir()
        os.chown(folder / sub, NOBODY, NOBODY)
    (folder / "work" / "input.txt").write_text("from the host\n")
    yield folder
    shutil.rmtree(folder)


@pytest.mark.skipif(not is_root(), reason="needs root to delegate a cgroup subtree to nobody")
def test_unprivileged_bot_runs_tier1_with_caps(delegated_cgroup, world_readable_tree):
    """As uid nobody: the sandbox starts, writes are owned by nobody, the memory cap kills."""
    tree = world_readable_tree
    script = ('cat input.txt; echo made > out.txt; '
              'python3 -c "b = b\\"x\\" * (400 << 20)"; echo "alloc-exit=$?"')
    done = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         "/usr/bin/python3", "-m", "bot.cli", "sandbox", "exec", "--writable",
         "--workdir", str(tree / "work"), "--memory", str(128 << 20), "--", "sh", "-c", script],
        cwd=tree / "code", capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree / "code"), "HOME": str(tree / "data"),
             "BOT_DATA_DIR": str(tree / "data"), "BOT_CGROUP_PARENT": delegated_cgroup})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "from the host"
    assert "alloc-exit=137" in done.stdout
    assert '"oom_killed": true' in done.stderr
    assert (tree / "work" / "out.txt").stat().st_uid == NOBODY
    assert "could not apply" not in done.stderr  # the bot applied the writes, not its launcher's fallback
