"""Agent CLIs run at a lower CPU priority than the bot: a CLI printing without end, or compiling,
must not take the CPU from the event loop that answers every other thread's webhooks.

Two knobs, because which one the kernel honours depends on the host:
- the process's nice value, inherited by everything it starts: what counts where the bot's tasks
  are in a cpu cgroup of their own (a systemd service with the cpu controller, a container);
- the nice value of its session's *autogroup*: where the tasks are in the root cpu group and
  the kernel groups each session for the scheduler (sched_autogroup_enabled, the default of many
  distributions), a sandbox started in a new session is weighed as a group of its own, and its
  processes' nice values count only against each other. The autogroup is the session's, so
  setting it covers every process of the session, those started before too.

Each is set STEP above the bot's own (at most 19). Lowering a priority needs no privilege; a
process already gone, or a kernel without autogroups, leaves nothing to do. Tier 0 sets both on
the CLI as it starts (it leads a session of its own). Tier 1 sets the nice value on the sandbox's
first process while it waits to be unblocked (the CLI is started from it, after), and the
session's once bubblewrap has made it (--new-session, after the unblock).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Callable

STEP = 10  # CFS weight 1024 → 110: a CPU-bound CLI gets about a tenth of a core the bot wants
LOWEST = 19
SESSION_WAIT_S = 2.0  # a sandbox's new session is looked for until the next wait would reach this (2 s in all)
_AUTOGROUP_NICE = re.compile(rb"nice (-?\d+)")


def lower_nice(pid: int) -> None:
    """Set `pid`'s nice value STEP above the bot's: inherited by what it starts from now on."""
    with contextlib.suppress(ProcessLookupError):
        os.setpriority(os.PRIO_PROCESS, pid, lowered(os.getpriority(os.PRIO_PROCESS, 0)))


def lower_autogroup(pid: int) -> bool:
    """Set the autogroup of `pid`'s session STEP below the bot's; False when the kernel asks to
    be asked again (without CAP_SYS_ADMIN it takes one such change per 100 ms, machine-wide)."""
    own = autogroup_nice("self")
    if own is None:
        return True  # no autogroups on this kernel
    try:
        fd = os.open(f"/proc/{pid}/autogroup", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, str(lowered(own)).encode())
        finally:
            os.close(fd)
    except BlockingIOError:
        return False
    except OSError:
        pass  # gone, or not ours to set: its nice value still holds
    return True


def lower_session(pid: int, running: Callable[[], bool]) -> None:
    """Lower the autogroup of the session `pid` leads, now if it does, else once it does (bubblewrap
    gives the sandbox's first process a new session once unblocked, and a new session starts at the
    default weight whatever its nice values). Checked again on the event loop's timers, from 1 ms
    on, each wait twice the last, for about 2 s, and only while `running` (the sandbox's launcher
    has not been reaped); again too when the kernel asked to be asked later."""
    loop = asyncio.get_running_loop()

    def check(wait: float) -> None:
        if not running() or (session_of(pid) == pid and lower_autogroup(pid)):
            return
        if wait < SESSION_WAIT_S:
            loop.call_later(wait, check, wait * 2)

    check(0.001)


def session_of(pid: int) -> int | None:
    """The session `pid` is in (/proc/PID/stat, field 6), None when it is gone."""
    stat = _read_proc(pid, "stat", 4096)
    return None if stat is None else int(stat.rsplit(b")", 1)[1].split()[3])


def lowered(nice: int) -> int:
    return min(nice + STEP, LOWEST)


def autogroup_nice(pid: int | str) -> int | None:
    """The nice value of `pid`'s session group ("self": the bot's), None without autogroups."""
    text = _read_proc(pid, "autogroup", 128)
    found = _AUTOGROUP_NICE.search(text) if text is not None else None
    return int(found.group(1)) if found else None


def _read_proc(pid: int | str, name: str, most: int) -> bytes | None:
    """At most `most` bytes of /proc/PID/NAME (one read), None when it cannot be read."""
    try:
        fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, most)
    except OSError:
        return None
    finally:
        os.close(fd)
