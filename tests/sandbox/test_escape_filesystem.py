"""Escape suite, filesystem: what the agent must not see or change."""
from __future__ import annotations

import os
import socket

import pytest

from sandbox.identity import sandbox_identity

pytestmark = pytest.mark.sandbox


@pytest.mark.parametrize("target", ["secret.key", "bot.db", "homes/conv-a/claude/credentials.json",
                                    "worktrees/conv-b/README.md"],
                         ids=["secret-key", "database", "other-conversation-home", "worktree-host-path"])
async def test_data_dir_contents_are_not_there(run, data_dir, target):
    """Reading the bot's data dir (by its host path) fails: it does not exist inside."""
    path = data_dir / target
    ran = await run(f"cat '{path}' 2>&1 || ls '{path}' 2>&1; exit 1")
    assert ran.rc == 1
    assert "No such file or directory" in ran.out
    assert "master-key" not in ran.out and "conv-a-token" not in ran.out


async def test_data_dir_shows_only_the_path_to_this_home(run, data_dir):
    """Listing the data dir inside shows nothing but the empty path down to this episode's home."""
    ran = await run(f"cd '{data_dir}' && find . | sort")
    assert ran.out.split() == [".", "./homes", "./homes/conv-b", "./homes/conv-b/claude"]


async def test_root_home_is_not_there(run):
    """/root and /home are absent, not merely unreadable."""
    ran = await run("ls /root /home 2>&1; exit 1")
    assert "ls: cannot access '/root': No such file or directory" in ran.out
    assert "ls: cannot access '/home': No such file or directory" in ran.out


async def test_etc_shadow_is_not_there(run):
    """Only an allowlist of /etc is mounted: password hashes are not."""
    ran = await run("cat /etc/shadow 2>&1; exit 1")
    assert "No such file or directory" in ran.out


async def test_write_outside_worktree_fails(run, tmp_path):
    """Writes to the host filesystem outside the worktree are refused (read-only)."""
    ran = await run("touch /usr/evil 2>&1; touch /etc/evil 2>&1; touch /evil 2>&1; exit 1",
                    writable=True)
    assert ran.out.count("Read-only file system") == 3
    assert not os.path.exists("/usr/evil") and not os.path.exists("/etc/evil")


async def test_write_worktree_in_strict_mode_fails(run, config):
    """In strict mode the worktree is read-only."""
    ran = await run("echo pwned > /workspace/README.md; exit 1")
    assert "Read-only file system" in ran.err
    assert (config.workdir / "README.md").read_text() == "hello from the worktree\n"


async def test_host_unix_socket_refused_even_when_visible(run, tmp_path):
    """A host Unix socket bind-mounted in cannot be connected: seccomp denies socket(AF_UNIX)."""
    folder = tmp_path / "sock"
    folder.mkdir()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "host.sock"))
    listener.listen(1)
    script = ("import socket; s = socket.socket(socket.AF_UNIX); "
              f"s.connect('{folder}/host.sock')")
    ran = await run(f"python3 -c \"{script}\" 2>&1; exit 1", ro_binds=(folder,))
    listener.close()
    assert "PermissionError: [Errno 1] Operation not permitted" in ran.out


async def test_host_tmp_and_run_are_empty(run, tmp_path):
    """Host /tmp, /run and /dev/shm (and their sockets) are replaced by empty tmpfs."""
    marker = f"/tmp/host-marker-{os.getpid()}"
    open(marker, "w").close()
    try:
        ran = await run(f"ls {marker} 2>&1; find /run /dev/shm -mindepth 1 | wc -l")
    finally:
        os.unlink(marker)
    assert "No such file or directory" in ran.out
    assert ran.out.strip().endswith("\n0")


async def test_other_process_environment_unreadable(run):
    """A host process's environment cannot be read through /proc (own PID namespace)."""
    import subprocess
    host = subprocess.Popen(["sleep", "30"], env={"HOST_SECRET": "hunter2-host-only"})
    try:
        ran = await run(f"cat /proc/{host.pid}/environ 2>&1; cat /proc/*/environ 2>/dev/null "
                        "| tr '\\0' '\\n' | grep -c hunter2; exit 1")
    finally:
        host.kill()
        host.wait()
    assert "hunter2" not in ran.out.replace("grep -c hunter2", "")
    assert ran.out.strip().endswith("0")


async def test_worktree_files_written_are_owned_by_the_sandbox_user(run, config):
    """In native mode a file the agent writes is owned on the host by the sandbox user: the
    bot's own user when it is unprivileged, a dedicated one (never root) when it is root."""
    ran = await run("echo new > /workspace/new.txt && mkdir -p /workspace/d/e", writable=True)
    assert ran.rc == 0
    expected = sandbox_identity().uid
    assert expected != 0
    assert (config.workdir / "new.txt").stat().st_uid == expected
    assert (config.workdir / "d" / "e").stat().st_uid == expected
    (config.workdir / "new.txt").write_text("host can still edit it\n")


def _git(cwd, *args):
    import subprocess
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


async def test_git_dir_read_only_in_native_mode(run, config):
    """Even with a writable worktree, .git (hooks, config) cannot be written; history is readable."""
    _git(config.workdir, "init", "-q")
    _git(config.workdir, "add", "README.md")
    _git(config.workdir, "commit", "-qm", "first")
    ran = await run("echo 'curl evil' > .git/hooks/pre-commit 2>&1; git config core.pager evil 2>&1; "
                    "git log --format=%s", writable=True)
    assert "cannot create .git/hooks/pre-commit: Read-only file system" in ran.err
    assert "could not lock config file .git/config: Read-only file system" in ran.out
    assert ran.out.strip().endswith("first")
    assert not (config.workdir / ".git" / "hooks" / "pre-commit").exists()


async def test_linked_worktree_history_readable_rest_of_data_dir_hidden(run, data_dir, tmp_path):
    """A worktree of a mirror under the data dir can read its history; the data dir stays hidden."""
    mirror = data_dir / "mirrors" / "octo" / "repo.git"
    source = tmp_path / "src"
    source.mkdir()
    (source / "f.txt").write_text("x\n")
    _git(source, "init", "-q")
    _git(source, "add", "f.txt")
    _git(source, "commit", "-qm", "from the mirror")
    _git(tmp_path, "clone", "-q", "--bare", str(source), str(mirror))
    worktree = data_dir / "worktrees" / "conv-c"
    _git(mirror, "worktree", "add", "-q", "--detach", str(worktree), "HEAD")
    ran = await run(f"git log --format=%s; cat '{data_dir}/secret.key' 2>&1; exit 0", workdir=worktree)
    assert ran.out.splitlines()[0] == "from the mirror"
    assert "No such file or directory" in ran.out and "master-key" not in ran.out
