"""Disk quotas for an episode's worktree and CLI home, measured: the second line behind the caps.

At tier 1 the kernel holds the caps (sandbox/layers.py: the writable worktree and the CLI home are
overlays on a tmpfs of their cap, /tmp a tmpfs of `Limits.tmpfs_bytes`), so a write past one
fails with ENOSPC as it is written. What this module measures is what the bot goes on to use
(commit, cache, the next turn) once the changes are back in the host folder, and it is the only
bound at tier 0: a walk of the tree that never follows a link and never leaves it (each
directory opened relative to its parent's descriptor with O_NOFOLLOW), counting every inode
once, a regular file at the larger of its length and its allocated blocks (a sparse file
expands when the home is copied or packed). The walk stops as soon as the quota is passed.

Between two looks an agent can write at disk speed, so a watched quota bounds what follows,
not the peak.
"""
from __future__ import annotations

import asyncio
import os
import stat
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sandbox.bounded_tree import DIR_FLAGS as _DIR_FLAGS
from sandbox.bounded_tree import MAX_DEPTH  # the one bound of every walk; deeper is refused here, not skipped

# Walks run off the event loop, on their own threads, so a big tree never delays other work
# and never occupies the default executor other code relies on.
_walkers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="disk-watch")


class TooDeep(Exception):
    """The tree nests directories deeper than MAX_DEPTH."""


@dataclass
class Quota:
    """At most `limit` bytes under `path`; `what` and `verb` word the stop reason."""

    what: str  # "the worktree", "the CLI home"
    path: Path
    limit: int
    allowance: int  # the quota as configured (the worktree's growth), for the message
    verb: str = "went past"

    def reason(self, problem: str | None = None) -> str:
        quota = f"its {human(self.allowance)} disk quota"
        return f"stopped: {self.what} {problem or self.verb} {quota}"


def usage(root: Path, stop_above: int | None = None) -> int:
    """Bytes under `root` (see the module docstring); returns as soon as it exceeds `stop_above`.
    Raises TooDeep past MAX_DEPTH; an entry that vanishes during the walk is skipped."""
    seen: set[tuple[int, int]] = set()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the bot's own path
    stack = [(fd, _names(fd))]
    total = _size(os.fstat(fd))
    try:
        while stack:
            dir_fd, names = stack[-1]
            if not names:
                os.close(stack.pop()[0])
                continue
            name = names.pop()
            try:
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            total += _size(info)
            if stop_above is not None and total > stop_above:
                return total
            if stat.S_ISDIR(info.st_mode):
                _descend(stack, dir_fd, name)
        return total
    finally:
        for dir_fd, _ in stack:
            os.close(dir_fd)


def _descend(stack: list, parent_fd: int, name: str) -> None:
    if len(stack) > MAX_DEPTH:
        raise TooDeep(f"directories nest deeper than {MAX_DEPTH} levels")
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except PermissionError:
        raise  # a folder we may not read would hide what is in it
    except OSError:
        return  # replaced (by a link, a file) since the stat: the next look counts it
    try:
        stack.append((fd, _names(fd)))
    except BaseException:
        os.close(fd)
        raise


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as entries:
        return [entry.name for entry in entries]


def _size(info: os.stat_result) -> int:
    allocated = info.st_blocks * 512
    return max(info.st_size, allocated) if stat.S_ISREG(info.st_mode) else allocated


async def measure(path: Path, stop_above: int | None = None) -> int:
    return await asyncio.get_running_loop().run_in_executor(_walkers, usage, path, stop_above)


Breach = tuple[Quota, str]  # the quota and the stop reason


async def exceeded(quotas: list[Quota]) -> Breach | None:
    """The first quota that is over and why (the stop reason), else None. A tree that cannot be
    measured (nested too deep, a folder made unreadable) counts as over: it hides its size."""
    for quota in quotas:
        try:
            if await measure(quota.path, quota.limit) > quota.limit:
                return quota, quota.reason()
        except TooDeep:
            return quota, quota.reason(f"nests folders deeper than {MAX_DEPTH} levels, past what measures")
        except PermissionError:
            return quota, quota.reason("holds a folder the bot may not read, which hides it from")
        except FileNotFoundError:
            continue
    return None


async def watch(quotas: list[Quota], interval_s: float) -> Breach:
    """Look every `interval_s` (longer when a look is slow: at most ~10% of one core goes to
    looking) until a quota is over."""
    while True:
        started = time.monotonic()
        breach = await exceeded(quotas)
        if breach is not None:
            return breach
        await asyncio.sleep(max(interval_s, 10 * (time.monotonic() - started)))


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:g} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n} B"
