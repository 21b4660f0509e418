"""Escape suite, host kernel and host root: nothing in tier 1 is host root or reaches a
host-wide kernel setting.

Probes only open files for writing and close them again; nothing is ever written.
"""
from __future__ import annotations

import json
import os

import pytest

from sandbox.identity import sandbox_identity
from tests.conftest import is_root

pytestmark = pytest.mark.sandbox

# Every regular file with a write bit under `root` (per-process directories skipped),
# opened for writing and closed at once: which opens succeeded, and how many were tried.
OPEN_FOR_WRITING = """
import json, os, stat, sys
opened, probed = [], 0
for dirpath, dirnames, filenames in os.walk(sys.argv[1]):
    if dirpath == "/proc":
        dirnames[:] = [d for d in dirnames if not d.isdigit() and d not in ("self", "thread-self", "sys")]
    for name in filenames:
        path = os.path.join(dirpath, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or not info.st_mode & 0o222:
            continue
        probed += 1
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
        except OSError:
            continue
        os.close(fd)
        opened.append(path)
print(json.dumps({"probed": probed, "opened": opened}))
"""


async def _open_for_writing(run, root: str) -> dict:
    ran = await run(f"python3 -c '{OPEN_FOR_WRITING}' {root}")
    assert ran.rc == 0, ran.err
    return json.loads(ran.out)


async def test_no_sysctl_can_be_opened_for_writing(run):
    """Every writable-looking file under /proc/sys (kernel.core_pattern, vm.*, net.*, ...)
    refuses an open for writing."""
    result = await _open_for_writing(run, "/proc/sys")
    assert result["probed"] > 100
    assert result["opened"] == []


async def test_core_pattern_cannot_be_opened_for_writing(run):
    """kernel.core_pattern (a pipe there runs a program as host root on any crash) is out of reach."""
    ran = await run("python3 -c \"import os; os.open('/proc/sys/kernel/core_pattern', os.O_WRONLY)\" 2>&1; "
                    "exit 0")
    assert "PermissionError" in ran.out or "Read-only file system" in ran.out


async def test_no_other_host_kernel_knob_under_proc_can_be_opened_for_writing(run):
    """The rest of /proc outside the processes' own directories (sysrq-trigger, irq, bus,
    fs, mtrr, pressure, ...) refuses an open for writing too."""
    result = await _open_for_writing(run, "/proc")
    assert result["probed"] > 0
    assert result["opened"] == []


async def test_file_created_inside_is_not_owned_by_host_root(run, config):
    """What the sandboxed process writes to a host-visible bind is owned by a non-root host uid."""
    ran = await run("echo made > \"$HOME/made.txt\"")
    assert ran.rc == 0, ran.err
    owner = (config.home / "made.txt").stat().st_uid
    assert owner != 0
    assert owner == sandbox_identity().uid


async def test_sandboxed_process_cannot_become_root_again(run):
    """setuid(0) and setgid(0) are refused: no capability and no_new_privs, whatever is mapped."""
    ran = await run("python3 -c 'import os\nfor f in (os.setuid, os.setgid):\n"
                    "    try:\n        f(0); print(\"became\", f.__name__)\n"
                    "    except OSError:\n        print(\"refused\")'")
    assert ran.out.split() == ["refused", "refused"]


@pytest.mark.skipif(not is_root(), reason="an unprivileged bot and its sandbox share one uid")  # see test_unprivileged_escape
async def test_agent_cannot_remove_or_replace_the_bots_git_pointer(run, config):
    """In a writable worktree, the bot's `.git` (what its own git later reads) can be neither
    deleted, renamed nor rewritten by the agent."""
    pointer = config.workdir / ".git"
    pointer.write_text("gitdir: /nonexistent/worktrees/x\n")
    ran = await run("rm -f .git 2>&1; mv .git moved 2>&1; echo evil > .git 2>&1; exit 0", writable=True)
    assert pointer.read_text() == "gitdir: /nonexistent/worktrees/x\n"
    assert not (config.workdir / "moved").exists()
    assert ran.text.count("denied") + ran.text.count("not permitted") == 3


async def test_writable_worktree_and_home_stay_writable_to_the_sandbox(run, config):
    """The uid switch keeps the agent's own places usable: files the bot checked out, its HOME."""
    (config.workdir / "sub").mkdir()
    (config.workdir / "sub" / "file.txt").write_text("from the bot\n")
    os.chmod(config.workdir, 0o700)
    ran = await run("echo edited > sub/file.txt && mkdir new && touch new/x && echo h > \"$HOME/h\"",
                    writable=True)
    assert ran.rc == 0, ran.err
    assert (config.workdir / "sub" / "file.txt").read_text() == "edited\n"
    assert (config.workdir / "new" / "x").exists() and (config.home / "h").exists()


async def test_sandbox_user_has_a_name_and_is_not_root(run):
    """whoami works inside (tools that look the user up keep working) and is not root."""
    ran = await run("id -un")
    assert ran.rc == 0, ran.err
    assert ran.out.strip() not in ("", "root")
