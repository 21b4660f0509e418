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
process already gone, or a kernel without autogroups, leaves nothing to do.
"""
from __future__ import annotations

import contextlib
import os
import re

STEP = 10  # CFS weight 1024 → 110: a CPU-bound CLI gets about a tenth of a core the bot wants
LOWEST = 19
_AUTOGROUP_NICE = re.compile(rb"nice (-?\d+)")


def lower(pid: int, autogroup: bool = True) -> None:
    """Put `pid` STEP below the bot's CPU priority: its nice value and, with `autogroup`, its
    session's (the caller knows `pid` leads a session of its own)."""
    with contextlib.suppress(ProcessLookupError):
        os.setpriority(os.PRIO_PROCESS, pid, lowered(os.getpriority(os.PRIO_PROCESS, 0)))
    if autogroup:
        lower_autogroup(pid)


def lower_autogroup(pid: int) -> None:
    own = autogroup_nice("self")
    if own is None:
        return  # no autogroups on this kernel
    with contextlib.suppress(OSError):  # gone, or not ours to set: its nice value still holds
        fd = os.open(f"/proc/{pid}/autogroup", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(fd, str(lowered(own)).encode())
        finally:
            os.close(fd)


def lowered(nice: int) -> int:
    return min(nice + STEP, LOWEST)


def autogroup_nice(pid: int | str) -> int | None:
    """The nice value of `pid`'s session group ("self": the bot's), None without autogroups."""
    try:
        fd = os.open(f"/proc/{pid}/autogroup", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        text = os.read(fd, 128)
    except OSError:
        return None
    finally:
        os.close(fd)
    found = _AUTOGROUP_NICE.search(text)
    return int(found.group(1)) if found else None

