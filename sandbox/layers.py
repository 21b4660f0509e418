"""The writable folders of a tier-1 sandbox, each capped by the kernel at its size.

The worktree (when writable) may grow by `Limits.worktree_growth_bytes`, the CLI home hold
`Limits.home_bytes`. Each becomes an overlay whose upper layer is a tmpfs of that size, made by
the launcher (compiled, sandbox/native/layer_launcher.c; sandbox/layer_mount.py where no C compiler
could build it: sandbox/launcher.py) in a mount namespace of its own just before bubblewrap: a
write past the cap fails with ENOSPC while it is written, at any speed, and the changes reach
the host folder only when the sandbox has ended, at most the cap. /tmp and /dev/shm need none
of this: bubblewrap mounts them as tmpfs of `Limits.tmpfs_bytes`.

Why this and not another cap: bubblewrap 0.8 cannot overlay, a loop-mounted image needs root,
and project quotas need a filesystem mounted with them; an overlay on a tmpfs works for root and
for an unprivileged bot alike (kernel overlays in a user namespace). tmpfs pages are memory: a
layer's contents count against the sandbox's memory cgroup like /tmp's, so the memory limit
bounds the sum of what the layers hold. A file changed in place is copied up whole, so it
counts at its full size against the worktree's growth.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sandbox import launcher
from sandbox.base import SandboxConfig
from sandbox.cgroup_set import CgroupSet
from sandbox.disk import usage
from sandbox.limits import join_prefix

LAUNCHER = Path(__file__).resolve().parent / "layer_mount.py"
FAILED_EXIT = 72  # the launcher's exit status when no layer could be made (nothing ran)
MIN_SIZE = 1 << 20  # a home already at its cap still gets room for a CLI's lock files


@dataclass
class Layers:
    """One run's capped folders: the launcher's argv prefix and, after the run, its report."""

    spec: list[dict]
    scratch: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="bot-layers-")))
    hand_over_too_deep: list[str] = field(default_factory=list)  # folders the sandbox was not handed
    compiled: Path | None = None  # the compiled launcher; None: the Python one (no C compiler here)

    def prefix(self, groups: CgroupSet, open_files: int) -> list[str]:
        """argv that makes the layers, then runs the rest (bubblewrap) over them in `groups`, with
        at most `open_files` descriptors and no core dumps."""
        fields = [str(value) for layer in self.spec for value in (layer["name"], layer["size"], layer["path"])]
        if self.compiled is None:
            return [_interpreter(), "-I", "-S", str(LAUNCHER), str(self.scratch), *fields, "--",
                    *join_prefix(groups.join_paths(), open_files)]
        return [str(self.compiled), "--write-back", _interpreter(), str(LAUNCHER), "--nofile", str(open_files),
                *groups.launcher_args(), str(self.scratch), *fields, "--"]

    def report(self) -> list[dict]:
        """What each layer did: name, size, full (it, or its write-back, reached its cap), applied
        (changes kept), error, dropped (what the write-back left out: kind -> count)."""
        try:
            lines = (self.scratch / "report").read_text().splitlines()
        except OSError:
            return []
        report = []
        for line in lines:
            name, size, full, applied, error, dropped = line.split("\t", 5)
            report.append({"name": name, "size": int(size), "full": full == "1", "applied": applied == "1",
                           "error": error, "dropped": _counts(dropped)})
        return report

    def outcome(self) -> dict:
        """For the sandbox's outcome: the layers that reached their cap, those whose changes
        could not be applied to the host folder (a sandbox that was killed applies none), and
        what was left out: entries the write-back drops, folders too deep to hand over."""
        report = self.report()
        outcome: dict[str, list] = {
            "disk_full": [{"layer": e["name"], "bytes": e["size"]} for e in report if e.get("full")],
            "disk_unkept": [{"layer": e["name"], "error": str(e.get("error"))} for e in report if not e.get("applied")]}
        dropped = [{"layer": e["name"], "dropped": e["dropped"]} for e in report if e["dropped"]]
        if dropped:
            outcome["write_back_dropped"] = dropped
        if self.hand_over_too_deep:
            outcome["hand_over_too_deep"] = list(self.hand_over_too_deep)
        return outcome

    def remove(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)


def _counts(text: str) -> dict[str, int]:
    """`kind=count,...` as the launcher writes it."""
    pairs = (item.partition("=") for item in text.split(",") if item)
    return {kind: int(count) for kind, _, count in pairs}


def _interpreter() -> str:
    """This Python, by a path the bot's user can run: an interpreter installed under a folder
    that user cannot search (a root-owned pyenv) is still reachable through /proc."""
    if os.access(sys.executable, os.X_OK):
        return sys.executable
    return f"/proc/{os.getpid()}/exe"


def plan(config: SandboxConfig) -> Layers:
    """The home (and the worktree when writable) with the room each has left, and the launcher
    that makes them. Measures the home (and may build the launcher): call off the event loop."""
    lim = config.limits
    held = usage(Path(config.home), stop_above=lim.home_bytes)
    spec = [{"name": "home", "path": str(config.home), "size": max(lim.home_bytes - held, MIN_SIZE)}]
    if config.writable:
        spec.append({"name": "worktree", "path": str(config.workdir), "size": lim.worktree_growth_bytes})
    return Layers(spec, compiled=launcher.find())
