"""A running tier-1 sandbox: streams, wall clock, kill-everything, and what the floor observed.

Its first process (the layer launcher) is signalled through a pidfd opened as it starts, never
by its pid: once reaped, a pid may name someone else.
"""
from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable

from sandbox.base import EgressDecision, Limits
from sandbox.layers import Layers
from sandbox.limits import CgroupSet

WRITE_BACK_GRACE_S = 60.0  # how long a killed sandbox's layer launcher may take to apply its writes


def _pidfd_of(pid: int) -> int | None:
    """A pidfd for the sandbox's first process, opened as it starts; None when it is gone already."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


class Tier1Process:
    tier = 1

    def __init__(self, proc: asyncio.subprocess.Process, groups: CgroupSet, limits: Limits,
                 layers: Layers | None = None, after_cleanup: Callable[[], None] | None = None):
        self._proc = proc
        self._layers = layers
        self._after_cleanup = after_cleanup  # more host-side work for the clean-up thread (cgroups made ahead)
        self._groups = groups
        self._limits = limits
        self.pid = proc.pid
        assert proc.stdout is not None and proc.stderr is not None  # started with both piped
        self.stdout: asyncio.StreamReader = proc.stdout
        self.stderr: asyncio.StreamReader = proc.stderr
        self.egress: list[EgressDecision] = []
        self.servers: list[asyncio.AbstractServer] = []
        self._timed_out = False
        self._killed = False
        self._watchdog: asyncio.TimerHandle | None = None
        self._escalation: asyncio.TimerHandle | None = None
        self._started = time.monotonic()
        self._stats: dict | None = None
        self._finished: asyncio.Future | None = None
        self._cleanup: asyncio.Future | None = None
        self._pidfd = _pidfd_of(proc.pid)  # a handle a reaped pid's next owner never answers to

    def start_watchdog(self) -> None:
        loop = asyncio.get_running_loop()
        self._started = time.monotonic()
        self._watchdog = loop.call_later(self._limits.timeout_s, self._on_timeout)

    def _on_timeout(self) -> None:
        self._timed_out = True
        self._kill_now()

    def _kill_now(self) -> None:
        if self._layers is None:
            self._kill_group()
        elif self._escalation is None and self._signal(signal.SIGTERM):
            # The layer launcher ends the sandbox and applies its writes; past the grace it dies too.
            self._escalation = asyncio.get_running_loop().call_later(WRITE_BACK_GRACE_S, self._kill_group)
        self._groups.kill_all()

    def _kill_group(self) -> None:
        # bwrap dies (with its parent, the launcher, when there is one), so its PID namespace dies
        self._signal(signal.SIGKILL)
        self._groups.kill_all()

    def _signal(self, number: int) -> bool:
        """Send `number` through the pidfd; False when the process has ended."""
        if self._pidfd is None or self._proc.returncode is not None:
            return False
        try:
            signal.pidfd_send_signal(self._pidfd, number)
        except ProcessLookupError:
            return False
        return True

    async def wait(self) -> int:
        if self._finished is None:
            self._finished = asyncio.ensure_future(self._reap())
        return await asyncio.shield(self._finished)

    async def _reap(self) -> int:
        rc = await self._proc.wait()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        for timer in (self._watchdog, self._escalation):
            if timer is not None:
                timer.cancel()
        self._groups.kill_all()  # anything that escaped the PID namespace teardown
        self._stats = {"oom_killed": self._groups.oom_kills() > 0,
                       "pids_max_hit": self._groups.pids_max_hits() > 0,
                       "memory_peak_bytes": self._groups.peak_memory(),
                       "cgroup_version": self._groups.version, "cgroup_scope": self._groups.scope}
        if self._layers is not None:  # the launcher has applied and reported them when it exits
            self._stats.update(self._layers.outcome())
        for server in self.servers:
            server.close()
        # A v1 cgroup stays busy for a few ms after its last task exits, and the layers' scratch
        # folder held the launcher's mounts: both are removed off the caller's path (the run's
        # outcome is already read).
        self._cleanup = asyncio.get_running_loop().run_in_executor(None, self._remove_after)
        return rc

    def _remove_after(self) -> None:
        try:
            if self._layers is not None:
                self._layers.remove()
        finally:
            self._groups.remove()
        if self._after_cleanup is not None:
            self._after_cleanup()

    async def kill(self) -> None:
        """Kill everything the run started (daemons included) and reap it."""
        self._killed = True
        self._kill_now()
        await self.wait()

    async def cleaned_up(self) -> None:
        """Wait for the clean-up of a reaped run (its layers' scratch folder and lock, its cgroups):
        a caller that removes them too must not race it (the lock's descriptor closed twice)."""
        if self._cleanup is not None:
            await self._cleanup

    def outcome(self) -> dict:
        stats = self._stats or {"oom_killed": False, "pids_max_hit": False}
        return {"tier": 1, "exit_code": self._proc.returncode, "timed_out": self._timed_out,
                "killed": self._killed, **stats,
                "duration_s": round(time.monotonic() - self._started, 3),
                "limits": {"memory_bytes": self._limits.memory_bytes, "pids": self._limits.pids,
                           "timeout_s": self._limits.timeout_s,
                           "tmpfs_bytes": self._limits.tmpfs_bytes,
                           "open_files": self._limits.open_files},
                "egress": {"allowed": sum(d.allowed for d in self.egress),
                           "denied": sum(not d.allowed for d in self.egress)}}
