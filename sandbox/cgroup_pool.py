"""Run cgroups made ahead of time, off a start's path: a start takes one ready set instead of
making and limiting its own (mkdirs and limit writes, about 0.6 ms of the event loop per start).

Each set is made for one (memory, pids) pair under one host's hierarchies, with a fresh random
name (mkdir fails on a name that exists) and its limits written, by a background thread. A set
is handed out at most once: it leaves the pool under a lock, and the run removes it when it ends,
as it would its own. Before it is handed out it must still be unused: every folder still there,
no task in any (cgroup.procs empty), nothing ever charged to it (peak memory 0), no pids.max
hit, its limits still the asked ones, and young enough that no other bot's sweep of stale run
cgroups (sandbox/limits.py, 60 s) can have removed it. A set that fails any of these is removed
and never handed out; when none is ready the start makes its own as before (limits.create), so
the pool changes where the work is done, never what a run gets. The container's own cgroup
(sandbox/own_cgroup.py) is never pooled: only subtree sets are.
"""
from __future__ import annotations

import atexit
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from sandbox import limits
from sandbox.base import Host
from sandbox.cgroup_set import CgroupSet

POOL_SIZE = 2  # starts come one at a time per job; two cover a burst while the thread refills
PAGE = os.sysconf("SC_PAGE_SIZE")
MAX_AGE_S = 20.0  # well under limits.STALE_AFTER_S: no sweep removes a set this young
Key = tuple[int, int, Path, str | None]
Maker = Callable[[str, int, int, Host], CgroupSet]


def _key(memory_bytes: int, pids_max: int, host: Host) -> Key:
    return (memory_bytes, pids_max, host.cgroup_root, host.cgroup_parent)


def _read(path: Path, cap: int = 4096) -> str | None:
    """A cgroup file's text (short: a number, a few counters, or pids), None when unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, cap).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _limits_hold(groups: CgroupSet, memory_bytes: int, pids_max: int) -> bool:
    """Whether the set's limit files hold the asked caps (the kernel keeps a memory limit in whole pages)."""
    memory_file = "memory.max" if groups.version == 2 else "memory.limit_in_bytes"
    memory, pids = _read(groups.memory / memory_file), _read(groups.pids / "pids.max")
    return (memory is not None and memory.strip() == str(memory_bytes - memory_bytes % PAGE)
            and pids is not None and pids.strip() == str(pids_max))


def _never_charged(groups: CgroupSet) -> bool:
    """Nothing was ever charged to the set's memory (peak 0); a v2 kernel without memory.peak
    (before 5.19) cannot say, and the empty cgroup.procs stands alone there."""
    peak = _read(groups.memory / ("memory.peak" if groups.version == 2 else "memory.max_usage_in_bytes"))
    if peak is None:
        return groups.version == 2 and not (groups.memory / "memory.peak").exists()
    return peak.strip() == "0"


def unused(groups: CgroupSet, memory_bytes: int, pids_max: int) -> bool:
    """Whether a made-ahead set is still as it was made: every folder there, no task in any,
    nothing ever charged to its memory, pids.max never hit, and its limits the asked ones."""
    if any(_read(folder / "cgroup.procs") != "" for folder in groups.dirs):
        return False  # a folder gone (None), or a task in it
    return _never_charged(groups) and groups.pids_max_hits() == 0 and _limits_hold(groups, memory_bytes, pids_max)


class CgroupPool:
    """A few run cgroup sets made ahead per (memory, pids, hierarchy root, delegated subtree)."""

    def __init__(self, size: int = POOL_SIZE, make: Maker = limits.create_subtree, max_age_s: float = MAX_AGE_S):
        self.size, self.make, self.max_age_s = size, make, max_age_s
        self._ready: dict[Key, deque[tuple[float, CgroupSet]]] = {}
        self._rejected: list[CgroupSet] = []  # failed the check at a take: the refill removes them
        self._lock = threading.Lock()
        self._swept_at = -limits.STALE_AFTER_S  # the first refill sweeps
        self.handed_out = 0  # sets given to runs from the pool (tests and the bench read it)

    def take(self, memory_bytes: int, pids_max: int, host: Host) -> CgroupSet:
        """A set of cgroups for one run, limited to these caps: a ready unused one, else one made
        now (limits.create, which may give the container's own cgroup or refuse). Call `refill`
        when the run has ended (its clean-up, off the loop), so the pool's work stays off every
        start's path."""
        groups = self._pop_unused(_key(memory_bytes, pids_max, host), memory_bytes, pids_max)
        if groups is not None:
            return groups
        return limits.create(secrets.token_hex(8), memory_bytes, pids_max, host)

    def refill(self, memory_bytes: int, pids_max: int, host: Host) -> None:
        """Remove the sets too old or rejected, then make sets for these caps up to the pool's size.
        mkdirs and writes: call off the event loop, outside any start's path (a run's clean-up)."""
        self._fill(_key(memory_bytes, pids_max, host), host)

    def _pop_unused(self, key: Key, memory_bytes: int, pids_max: int) -> CgroupSet | None:
        while True:
            with self._lock:
                ready = self._ready.get(key)
                if not ready:
                    return None
                made_at, groups = ready.popleft()
            if time.monotonic() - made_at < self.max_age_s and unused(groups, memory_bytes, pids_max):
                self.handed_out += 1
                return groups
            with self._lock:
                self._rejected.append(groups)  # never handed out; removed off this path

    def _fill(self, key: Key, host: Host) -> None:
        with self._lock:
            ready = self._ready.setdefault(key, deque())
            stale = self._take_old(ready) + self._rejected
            self._rejected = []
            wanted = self.size - len(ready)
        for groups in stale:
            groups.remove(wait_s=0)
        for _ in range(wanted):
            try:
                groups = self.make(secrets.token_hex(8), key[0], key[1], host)
            except limits.CgroupUnavailable:
                return  # no subtree here: every start makes its own (and refuses, or uses the container's)
            with self._lock:
                ready.append((time.monotonic(), groups))
            self._sweep(groups)

    def _sweep(self, groups: CgroupSet) -> None:
        """At most once a sweep period: remove the stale run cgroups next to a set just made. A bot
        killed without its exit hook leaves its ready sets; this bounds them to the last minute's."""
        now = time.monotonic()
        if now - self._swept_at < limits.STALE_AFTER_S:
            return
        self._swept_at = now
        for folder in groups.dirs:
            limits.sweep_now(folder.parent)

    def _take_old(self, ready: deque[tuple[float, CgroupSet]]) -> list[CgroupSet]:
        """The sets too old to hand out, out of the pool (called with the lock held)."""
        now, old = time.monotonic(), []
        while ready and now - ready[0][0] >= self.max_age_s:
            old.append(ready.popleft()[1])
        return old

    def drain(self) -> None:
        """Remove every ready set (at exit: no cgroup of ours is left behind)."""
        with self._lock:
            sets = [entry[1] for ready in self._ready.values() for entry in ready] + self._rejected
            self._ready.clear()
            self._rejected = []
        for groups in sets:
            groups.remove(wait_s=0)


POOL = CgroupPool()
atexit.register(POOL.drain)
