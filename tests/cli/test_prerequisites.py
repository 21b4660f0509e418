"""`make` checks what it cannot install itself before installing anything: Python 3.11 with venv,
Node.js 20 with npm, each missing piece one line naming what was found and the fix."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check-prereqs"


def _bin(tmp_path: Path, *, node: str | None = "v20.11.1", npm: bool = True) -> Path:
    """A PATH holding only bash, this Python, and stand-ins for node and npm."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "bash").symlink_to(shutil.which("bash"))
    (folder / "python3").symlink_to(sys.executable)
    if node is not None:
        major = node.lstrip("v").split(".")[0]
        _script(folder / "node", f'[ "$1" = -p ] && echo {major} || echo {node}')
    if npm:
        _script(folder / "npm", "echo 10.2.4")
    return folder


def _script(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _check(folder: Path, python: str = "python3") -> subprocess.CompletedProcess:
    return subprocess.run([str(CHECK), python], capture_output=True, text=True,
                          env={"PATH": str(folder), "HOME": os.environ.get("HOME", "/root")})


def test_a_machine_with_python_311_and_node_20_passes_silently(tmp_path):
    done = _check(_bin(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_an_old_node_is_refused_naming_its_version_and_the_fix(tmp_path):
    done = _check(_bin(tmp_path, node="v18.19.0"))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: Node.js 20 or newer is needed for the agent CLIs, node is v18.19.0: install Node 20 "
        "(apt-get install nodejs on Debian 13, or your distribution's nodejs 20 package)"]


def test_a_missing_node_is_refused_with_the_install_command(tmp_path):
    done = _check(_bin(tmp_path, node=None))
    assert done.returncode == 1
    assert "Node.js 20 or newer with npm is needed" in done.stderr and "apt-get install nodejs npm" in done.stderr


def test_a_missing_npm_is_refused_on_its_own_line(tmp_path):
    done = _check(_bin(tmp_path, npm=False))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: npm is needed to install the pinned agent CLIs and is not on PATH: apt-get install npm"]


def test_an_old_python_is_refused_naming_its_version(tmp_path):
    folder = _bin(tmp_path)
    _script(folder / "python3.9", 'case "$2" in *version_info*) exit 1;; *) echo 3.9.2;; esac')
    done = _check(folder, "python3.9")
    assert done.returncode == 1
    assert done.stderr.startswith("error: Python 3.11 or newer is needed, 'python3.9' is 3.9.2:")


def test_every_problem_is_said_not_only_the_first(tmp_path):
    done = _check(_bin(tmp_path, node=None, npm=False), "no-such-python")
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 3
