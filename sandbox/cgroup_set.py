"""The cgroups a run's caps live in, as the rest of the sandbox sees them: where a run joins, how
its processes are killed, what it hit (sandbox/limits.py makes them; sandbox/own_cgroup.py is the
container's own). And the small readers both need: this process's cgroup path, the v2 mount.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

# A join entry that is not a cgroup: the join script (sandbox/limits.py) makes the run's processes
# the first an OOM kill takes
OOM_FIRST = "+oom-first"


class CgroupUnavailable(RuntimeError):
    pass


def own_path(controller: str) -> str:
    """This process's cgroup path for a v1 controller ('' key = v2)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    return "/"


def v2_mount(root: Path) -> Path | None:
    for candidate in (root, root / "unified"):
        if (candidate / "cgroup.controllers").exists():
            return candidate
    return None


@dataclass
class CgroupSet:
    """The cgroups one run joins: where to write its pid, where to read what happened."""

    scope = "run"  # the caps are the run's own cgroups ("container": sandbox/own_cgroup.py)
    version: int
    memory: Path
    pids: Path
    leaf_v2: Path | None = None
    dirs: list[Path] = field(default_factory=list)

    def join_paths(self) -> list[str]:
        """cgroup.procs files to join; '?'-prefixed ones are best effort (tracking only)."""
        paths = sorted({str(self.memory / "cgroup.procs"), str(self.pids / "cgroup.procs")})
        if self.leaf_v2 is not None and self.leaf_v2 not in (self.memory, self.pids):
            paths.append("?" + str(self.leaf_v2 / "cgroup.procs"))
        return paths

    def launcher_args(self) -> list[str]:
        """How the compiled layer launcher joins them (sandbox/native/layer_launcher.c): born in the
        v2 cgroup, moved into each v1 one; the v2 tracking leaf best effort."""
        if self.version == 2:
            return ["--cgroup-v2", str(self.memory)]
        args = [arg for group in sorted({str(self.memory), str(self.pids)}) for arg in ("--cgroup-v1", group)]
        if self.leaf_v2 is not None:
            args += ["--track-v2", str(self.leaf_v2)]
        return args

    def kill_all(self) -> None:
        """Kill every process still in the run's cgroups (daemons included)."""
        if self.leaf_v2 is not None and (self.leaf_v2 / "cgroup.kill").exists():
            write(self.leaf_v2 / "cgroup.kill", "1")
        for group in {self.memory, self.pids}:
            for pid in _read(group / "cgroup.procs").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def oom_kills(self) -> int:
        if self.version == 2:
            return counter_field(_read(self.memory / "memory.events"), "oom_kill")
        return counter_field(_read(self.memory / "memory.oom_control"), "oom_kill")

    def pids_max_hits(self) -> int:
        return counter_field(_read(self.pids / "pids.events"), "max")

    def peak_memory(self) -> int:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        text = _read(self.memory / name).strip()
        return int(text) if text.isdigit() else 0

    def remove(self, wait_s: float = 2.0) -> None:
        deadline = time.monotonic() + wait_s
        for path in reversed(self.dirs):
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # still busy for a moment after the last task exits
                    if time.monotonic() > deadline:
                        break
                    self.kill_all()
                    time.sleep(0.001)


def write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        raise CgroupUnavailable(f"cannot write {path}: {exc.strerror}") from exc


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def counter_field(text: str, name: str) -> int:
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0
