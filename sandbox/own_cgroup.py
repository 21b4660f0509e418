"""The container's own cgroup as one episode's memory and process caps.

A container runtime mounts /sys/fs/cgroup read-only, so the bot cannot make a cgroup per run in
it; but the runtime caps the container's own cgroup (compose `mem_limit`/`pids_limit`, podman
`--memory`/`--pids-limit`, Kubernetes `resources.limits.memory`). When both caps are at or below
a run's limits, the kernel enforces that run's caps on the whole container, the worker included:
one episode runs at a time (bot/cli/worker.py).

The caps are read from the cgroup that lists this process (v2 `memory.max` + `pids.max`, else v1
`memory.limit_in_bytes` + `pids.max`), never from one it is not in. Only a whole number counts as
a cap: a missing, unreadable, "max" or garbled value is none. What a run's own cgroups would
report (OOM kills, pids.max hits, peak memory) is read as deltas of the container's counters
taken around the run. Nothing is killed by cgroup (the worker is in it): a run's processes end
with bubblewrap's PID namespace, which none of them can leave.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.bounded import read_capped
from sandbox.cgroup_set import OOM_FIRST, CgroupSet, CgroupUnavailable, counter_field, own_path, v2_mount
from sandbox.disk import human

VALUE_CAP = 64  # a limit file holds one number or "max"
COUNTERS_CAP = 4096  # memory.events, memory.oom_control, pids.events: a few short lines
PROCS_CAP = 1 << 20  # the container's pids, one a line
WHOLE = re.compile(r"[0-9]{1,20}")
UNLIMITED = 1 << 60  # v1 says "no limit" as a number near 2**63; no runtime caps this high


@dataclass(frozen=True)
class Group:
    """Where this process's memory and pids controllers are (the same folder on v2)."""

    version: int
    memory: Path
    pids: Path


@dataclass(frozen=True)
class Caps:
    memory: int | None  # bytes; None: no cap
    pids: int | None

    def serve(self, memory_limit: int, pids_limit: int) -> bool:
        """Both caps present and at or below a run's limits."""
        return (self.memory is not None and self.pids is not None
                and self.memory <= memory_limit and self.pids <= pids_limit)

    def describe(self) -> str:
        return f"memory {_say(self.memory, human)}, pids {_say(self.pids, str)}"

    def shortfall(self, memory_limit: int, pids_limit: int) -> str:
        """What keeps these caps from serving a run, e.g. 'memory: no cap, pids 2048 above 512'."""
        said = []
        for name, cap, limit, show in (("memory", self.memory, memory_limit, human),
                                       ("pids", self.pids, pids_limit, str)):
            if cap is None or cap >= UNLIMITED:
                said.append(f"{name}: no cap")
            elif cap > limit:
                said.append(f"{name} {show(cap)} above {show(limit)}")
        return ", ".join(said)


@dataclass(frozen=True)
class Counters:
    oom_kills: int
    max_hits: int
    peak: int


def _say(value: int | None, show: Callable[[int], str]) -> str:
    return "no cap" if value is None else show(value)


def parse_cap(raw: bytes) -> int | None:
    """A limit file's whole number, else None (absent cap: 'max', empty, garbled)."""
    text = raw.decode("ascii", errors="replace").strip()
    return int(text) if WHOLE.fullmatch(text) else None


def _read(path: Path, cap: int) -> bytes | None:
    try:
        head = read_capped(path, cap)
    except OSError:
        return None
    return None if head.cut else head.data


def _value(path: Path) -> int | None:
    raw = _read(path, VALUE_CAP)
    return None if raw is None else parse_cap(raw)


def _lists_this_process(folder: Path) -> bool:
    raw = _read(folder / "cgroup.procs", PROCS_CAP)
    return raw is not None and str(os.getpid()).encode() in raw.split()


def _own_folder(base: Path, controller: str) -> Path:
    own = base / own_path(controller).strip("/")
    return own if own.is_dir() else base  # a container sees its own cgroup at the mount's root


def find(root: Path) -> Group | None:
    """The cgroup folders that list this process under `root`, v1's memory and pids when the host
    has them, else v2's; None when neither lists it."""
    if all((root / c / "cgroup.procs").exists() for c in ("memory", "pids")):
        group = Group(1, _own_folder(root / "memory", "memory"), _own_folder(root / "pids", "pids"))
    elif (mount := v2_mount(root)) is not None:
        folder = _own_folder(mount, "")
        group = Group(2, folder, folder)
    else:
        return None
    return group if all(_lists_this_process(f) for f in {group.memory, group.pids}) else None


def read_caps(group: Group) -> Caps:
    if group.version == 2:
        return Caps(_value(group.memory / "memory.max"), _value(group.pids / "pids.max"))
    return Caps(_value(group.memory / "memory.limit_in_bytes"), _value(group.pids / "pids.max"))


def counters(group: Group) -> Counters:
    def text(path: Path) -> str:
        return (_read(path, COUNTERS_CAP) or b"").decode("ascii", errors="replace")
    events, peak = (("memory.events", "memory.peak") if group.version == 2
                    else ("memory.oom_control", "memory.max_usage_in_bytes"))
    return Counters(counter_field(text(group.memory / events), "oom_kill"),
                    counter_field(text(group.pids / "pids.events"), "max"), _value(group.memory / peak) or 0)


@dataclass(frozen=True)
class Verdict:
    group: Group | None
    caps: Caps
    memory_limit: int
    pids_limit: int

    @property
    def serves(self) -> bool:
        return self.group is not None and self.caps.serve(self.memory_limit, self.pids_limit)

    def describe(self) -> str:
        return f"the container's own cgroup ({self.caps.describe()}), one episode at a time"

    def refusal(self) -> str:
        """What would serve, what there is, and where to set it: a clause that follows 'needs'."""
        found = ("no cgroup under BOT_CGROUP_ROOT lists this process" if self.group is None
                 else "it has " + self.caps.shortfall(self.memory_limit, self.pids_limit))
        return (f"the cgroup this process is in (the container's) capped at memory {human(self.memory_limit)} "
                f"and pids {self.pids_limit} or below, to run one episode at a time ({found}; compose: "
                "mem_limit and pids_limit; podman run: --memory and --pids-limit; Kubernetes: "
                "resources.limits.memory and a pids limit on the container itself, which kubelet's podPidsLimit "
                "is not: it caps the pod's cgroup, which the container cannot see; docs/deploy.md)")


def verdict(root: Path, memory_limit: int, pids_limit: int) -> Verdict:
    group = find(root)
    return Verdict(group, read_caps(group) if group else Caps(None, None), memory_limit, pids_limit)


@dataclass
class ContainerCgroup(CgroupSet):
    """A run under the container's own caps: joins nothing, kills nothing, reports deltas."""

    scope = "container"
    before: Counters = field(default_factory=lambda: Counters(0, 0, 0))

    @property
    def _group(self) -> Group:
        return Group(self.version, self.memory, self.pids)

    def join_paths(self) -> list[str]:
        return [OOM_FIRST]  # the container's OOM killer takes the run's processes before the worker

    def launcher_args(self) -> list[str]:
        return ["--oom-first"]

    def kill_all(self) -> None:
        """Nothing: this cgroup holds the worker too. Killing bwrap ends its PID namespace, and with
        it every process the run started (none can leave it)."""

    def oom_kills(self) -> int:
        return max(0, counters(self._group).oom_kills - self.before.oom_kills)

    def pids_max_hits(self) -> int:
        return max(0, counters(self._group).max_hits - self.before.max_hits)

    def peak_memory(self) -> int:
        """The container's peak (the worker included) when it was reached during the run, else 0:
        a lower peak during the run cannot be told apart."""
        peak = counters(self._group).peak
        return peak if peak > self.before.peak else 0


def for_run(root: Path, memory_limit: int, pids_limit: int, because: CgroupUnavailable) -> ContainerCgroup:
    """The run's caps from the container's own cgroup, or CgroupUnavailable naming both ways."""
    found = verdict(root, memory_limit, pids_limit)
    if not found.serves or found.group is None:
        raise CgroupUnavailable(f"{because}; one episode per container needs {found.refusal()}")
    group = found.group
    return ContainerCgroup(group.version, group.memory, group.pids, before=counters(group))
