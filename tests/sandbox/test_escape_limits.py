"""Escape suite, processes and resources: caps hold and nothing outlives the episode."""
from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from sandbox.base import Limits
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox

FORK_UNTIL_REFUSED = """
import os, time
n = 0
while n < 1000:
    try:
        pid = os.fork()
    except OSError as exc:
        print(f"fork refused after {n}: {exc.strerror}", flush=True)
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
"""


async def test_fork_bomb_stopped_by_pids_cap(run, tmp_path):
    """Forking without end stops at the pids cap, and the cap hit is recorded."""
    ran = await run(f"python3 -c '{FORK_UNTIL_REFUSED}'", limits=Limits(pids=32, timeout_s=30))
    assert "fork refused after" in ran.out and "Resource temporarily unavailable" in ran.out
    assert int(ran.out.split("after ")[1].split(":")[0]) < 32
    assert ran.outcome["pids_max_hit"] is True


async def test_allocation_past_memory_cap_is_oom_killed(run):
    """Touching more memory than the cap gets the process OOM-killed, recorded as such."""
    ran = await run("python3 -c 'b = b\"x\" * (512 << 20); print(\"survived\")'",
                    limits=Limits(memory_bytes=128 << 20, timeout_s=30))
    assert "survived" not in ran.out
    assert ran.rc != 0
    assert ran.outcome["oom_killed"] is True


async def test_sleep_past_time_limit_is_killed(run):
    """A command running past the wall clock is killed and marked timed out."""
    ran = await run("echo started; sleep 60; echo finished", limits=Limits(timeout_s=1))
    assert ran.out == "started\n"
    assert ran.outcome["timed_out"] is True
    assert ran.rc == -9


def _host_processes_with(marker: str, settle_s: float = 2.0) -> list[int]:
    """Host processes whose command line holds `marker`, once SIGKILLed ones had time to exit
    (a process the kill reached may still be tearing down when the run's wait returns)."""
    deadline = time.monotonic() + settle_s
    while (found := _matching(marker)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return found


def _matching(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


async def test_setsid_daemon_does_not_outlive_episode(run):
    """A double-forked setsid daemon dies with the episode: no such process left on the host."""
    marker = f"31.{os.getpid()}"
    ran = await run(f"setsid sh -c 'nohup sleep {marker} >/dev/null 2>&1 &'; "
                    "until pgrep -x sleep >/dev/null; do sleep 0.01; done; echo detached")
    assert ran.out == "detached\n"
    assert _host_processes_with(f"sleep\0{marker}") == []


async def test_daemon_killed_on_timeout_too(run):
    """When the wall clock fires, background processes die with the foreground one."""
    marker = f"32.{os.getpid()}"
    ran = await run(f"setsid sleep {marker} & sleep 60", limits=Limits(timeout_s=1))
    assert ran.outcome["timed_out"] is True
    assert _host_processes_with(f"sleep\0{marker}") == []


async def test_ptrace_refused(run):
    """ptrace is denied by seccomp (even PTRACE_TRACEME, which the kernel itself allows)."""
    script = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
              "r = libc.ptrace(0, 0, 0, 0); print(r, os.strerror(ctypes.get_errno()))")
    ran = await run(f"python3 -c '{script}'")
    assert ran.out.strip() == "-1 Operation not permitted"


async def test_new_user_namespace_refused(run):
    """Creating a user namespace (the usual first step of an escape) is refused."""
    ran = await run("unshare --user --map-root-user id 2>&1; exit 1")
    assert "unshare failed: Operation not permitted" in ran.out


async def test_kernel_keyring_refused(run):
    """The kernel keyring syscalls are denied."""
    script = ("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
              "r = libc.syscall(250, 0, -1, 0, 0, 0); print(r, os.strerror(ctypes.get_errno()))")
    ran = await run(f"python3 -c '{script}'")
    assert ran.out.strip() == "-1 Operation not permitted"


async def test_no_capabilities_and_no_new_privileges(run):
    """Inside, the process has no capabilities, no_new_privs and a seccomp filter."""
    ran = await run("grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status")
    fields = dict(line.split(":\t") for line in ran.out.strip().splitlines())
    assert fields == {"CapEff": "0000000000000000", "CapBnd": "0000000000000000",
                      "NoNewPrivs": "1", "Seccomp": "2"}


async def test_tmp_is_size_capped(run):
    """/tmp inside is a tmpfs with the configured size cap."""
    ran = await run("dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1; exit 1",
                    limits=Limits(tmpfs_bytes=16 << 20, timeout_s=30))
    assert "No space left on device" in ran.out


async def test_open_files_backstop(run):
    """The open-files rlimit is set inside."""
    ran = await run("ulimit -n", limits=Limits(open_files=321, timeout_s=30))
    assert ran.out.strip() == "321"


async def test_kill_stops_everything_mid_run(config):
    """Cancelling a run (kill()) takes the foreground command and its daemons down at once."""
    from sandbox.tier1 import Tier1Spawner
    marker = f"33.{os.getpid()}"
    proc = await Tier1Spawner(host=current().sandbox_host).start(config, ["sh", "-c", f"setsid sleep {marker} & echo up; sleep 60"], {})
    assert await proc.stdout.readline() == b"up\n"
    # the daemon is really running before the cancel; in the unprivileged run of this suite it was
    # once not seen within 5 s (one full run in seven; cause not found), so wait up to 30 s
    deadline = time.monotonic() + 30
    while not _matching(f"sleep\0{marker}") and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert _matching(f"sleep\0{marker}") != []
    await proc.kill()
    assert proc.outcome()["killed"] is True
    assert _host_processes_with(f"sleep\0{marker}") == []
