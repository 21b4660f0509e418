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

Each run's scratch folder (SCRATCH_PREFIX in the temporary folder) is locked shared (flock) by the
bot from `plan` to `remove` and by the launcher for as long as it runs. A bot killed mid-run leaves
its folder; `sweep_stale`, at the service's and the worker's start, removes a folder of ours that
is old and that it can lock exclusively: one no live bot or launcher holds.
"""
from __future__ import annotations

import fcntl
import logging
import os
import shutil
import stat
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandbox import launcher, layer_apply
from sandbox.base import SandboxConfig
from sandbox.bounded_tree import DIR_FLAGS, remove_path
from sandbox.cgroup_set import CgroupSet
from sandbox.disk import usage
from sandbox.limits import join_prefix

LAUNCHER = Path(__file__).resolve().parent / "layer_mount.py"
FAILED_EXIT = 72  # the launcher's exit status when no layer could be made (nothing ran)
MIN_SIZE = 1 << 20  # a home already at its cap still gets room for a CLI's lock files
SCRATCH_PREFIX = "bot-layers-"
STALE_AFTER_S = 600.0  # a scratch folder younger than this is left: it may not be locked yet

log = logging.getLogger(__name__)


@dataclass
class Layers:
    """One run's capped folders: the launcher's argv prefix and, after the run, its report."""

    spec: list[dict]
    scratch: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX)))
    hand_over_too_deep: list[str] = field(default_factory=list)  # folders the sandbox was not handed
    compiled: Path | None = None  # the compiled launcher; None: the Python one (no C compiler here)
    held: int | None = None  # the scratch folder, locked shared until `remove`

    def hold(self) -> None:
        """Lock the scratch folder shared, so that no sweep removes it while this bot may use it."""
        fd = os.open(self.scratch, DIR_FLAGS)
        fcntl.flock(fd, fcntl.LOCK_SH)
        self.held = fd

    def prefix(self, groups: CgroupSet, open_files: int, words: tuple[int, int] | None = None) -> list[str]:
        """argv that makes the layers, then runs the rest (bubblewrap) over them in `groups`, with
        at most `open_files` descriptors and no core dumps. `words` (the compiled launcher only):
        the pipe ends it says the run's end on and hears back on (sandbox/process.py)."""
        fields = [str(value) for layer in self.spec for value in (layer["name"], layer["size"], layer["path"])]
        if self.compiled is None:
            return [_interpreter(), "-I", "-S", str(LAUNCHER), str(self.scratch), *fields, "--",
                    *join_prefix(groups.join_paths(), open_files)]
        told = ["--done-fd", str(words[0]), "--apply-fd", str(words[1])] if words is not None else []
        return [str(self.compiled), "--write-back", _interpreter(), str(LAUNCHER), "--nofile", str(open_files),
                *groups.launcher_args(), *told, str(self.scratch), *fields, "--"]

    def apply_from(self, launcher_pid: int, full: str) -> None:
        """Apply what the sandbox wrote, as the launcher's write-back would, from its upper layers
        read through /proc/PID/root of the launcher (alive and waiting: its pid is ours until it is
        reaped), and write the report. `full`: the launcher's 0/1 per layer, in order. Blocking."""
        lines = []
        for index, (layer, seen_full) in enumerate(zip(self.spec, full, strict=True)):
            size = max(int(layer["size"]), layer_apply.MIN_LAYER_BYTES)
            upper = f"/proc/{launcher_pid}/root{self.scratch}/{index}/upper"
            lines.append(layer_apply.write_back(layer["name"], size, upper, layer["path"], seen_full == "1"))
        report = self.scratch / "report"
        fd = os.open(report, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.writelines(lines)

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
        if self.held is not None:
            os.close(self.held)
            self.held = None


def sweep_stale(folder: Path | None = None, older_than_s: float = STALE_AFTER_S) -> list[str]:
    """Remove the scratch folders runs left behind (a bot killed mid-run): in `folder` (the
    temporary folder), each folder named so, ours, older than `older_than_s` and held by no live
    bot or launcher (an exclusive flock is granted). Links are never followed. Their names."""
    folder = Path(folder or tempfile.gettempdir())
    cutoff = time.time() - older_than_s
    removed = []
    with os.scandir(folder) as entries:
        candidates = [entry for entry in entries if entry.name.startswith(SCRATCH_PREFIX)]
    for entry in candidates:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and info.st_mtime < cutoff \
                and _remove_unheld(Path(entry.path)):
            removed.append(entry.name)
    if removed:
        log.info("removed %d scratch folders of sandbox runs that ended without their bot", len(removed))
    return removed


def _remove_unheld(path: Path) -> bool:
    """Remove the folder if nothing holds its lock, holding it meanwhile; whether it was removed."""
    try:
        fd = os.open(path, DIR_FLAGS)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        remove_path(path)
        return True
    except OSError:  # BlockingIOError: a live bot or launcher holds it
        return False
    finally:
        os.close(fd)


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
    capped = Layers(spec, compiled=launcher.find())
    capped.hold()
    return capped
