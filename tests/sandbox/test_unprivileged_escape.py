"""The escape suite (tests/sandbox/test_escape_*.py) once more, run by an unprivileged user.

A bot that is not root gets a sandbox built differently (bwrap maps only the bot's own uid,
listeners are injected through a forked helper, cgroups come from a delegated subtree), so
`make test`, run as root in CI, also runs the whole escape suite as a user: the checkout's
owner when that is not root (CI's runner user, who can read the checkout), else nobody.
The user gets a delegated cgroup subtree (v1 or v2), as an operator would give it.
"""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sandbox.cgroup_set import v2_mount
from tests.conftest import is_root
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
REASON_ROOT_ONLY = "an unprivileged bot and its sandbox share one uid"


def _unprivileged_user() -> tuple[int, int]:
    owner = ROOT.stat()
    return (owner.st_uid, owner.st_gid) if owner.st_uid != 0 else (NOBODY, NOBODY)


def _chown_group(path: Path, uid: int) -> None:
    for entry in [path, *path.iterdir()]:
        if entry.is_dir() or entry.name.startswith("cgroup."):
            os.chown(entry, uid, -1)


@pytest.fixture
def delegated(tmp_path):
    """A cgroup subtree delegated to the user, and the cgroup.procs files its shell must join
    first (v2 moves a process only within a subtree whose root the mover can write)."""
    uid, _ = _unprivileged_user()
    name = f"bot-test-{secrets.token_hex(4)}"
    root = current().sandbox_host.cgroup_root
    v2 = v2_mount(root)
    made: list[Path] = []
    if v2 is not None and {"memory", "pids"} <= set((v2 / "cgroup.controllers").read_text().split()):
        (v2 / "cgroup.subtree_control").write_text("+memory +pids")
        made += [v2 / name, v2 / name / "leader"]
        joins = [v2 / name / "leader" / "cgroup.procs"]
    else:
        made += [root / controller / name for controller in ("memory", "pids")]
        joins = []
    for group in made:
        group.mkdir()
        _chown_group(group, uid)
    yield name, joins
    for group in reversed(made):
        for child in sorted(group.rglob("*/"), key=lambda p: -len(p.parts)):
            if child.is_dir():
                _rmdir_when_empty(child)
        _rmdir_when_empty(group)


def _rmdir_when_empty(group: Path) -> None:
    for pid in (group / "cgroup.procs").read_text().split():
        subprocess.run(["kill", "-9", pid], check=False)
    try:
        group.rmdir()
    except OSError:
        pass


@pytest.fixture
def scratch():
    """A temp folder the user owns (pytest's own basetemp is root's 0700)."""
    uid, gid = _unprivileged_user()
    folder = Path(tempfile.mkdtemp(prefix="bot-unpriv-escape-"))
    os.chown(folder, uid, gid)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not is_root(), reason="already unprivileged: this run is the escape suite as a user")
def test_escape_suite_passes_as_an_unprivileged_user(delegated, scratch):
    uid, gid = _unprivileged_user()
    name, joins = delegated
    suite = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "sandbox").glob("test_escape_*.py"))
    join = "".join(f'echo $$ > "{path}" && ' for path in joins)
    command = (f'{join}exec setpriv --reuid={uid} --regid={gid} --clear-groups "$@"')
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch), "LANG": "C.UTF-8",
           "BOT_CGROUP_PARENT": name, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        ["sh", "-c", command, "join", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-rs", "--basetemp", str(scratch / "tmp"), *suite],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all(REASON_ROOT_ONLY in line for line in skipped), skipped  # nothing else was left out
