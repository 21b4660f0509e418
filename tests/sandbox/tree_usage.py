"""What a tree takes on the host, as the write-back's budget counts it (tests' helper)."""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def entries(root: Path) -> Iterator[tuple[int, str, os.stat_result]]:
    """(level, name, lstat) of `root` (level 0, named "") and everything under it, links never
    followed, at any depth: through descriptors, one open per level, so no path grows past what
    the kernel takes."""
    top = os.open(root, _DIR)
    yield 0, "", os.fstat(top)
    stack = [(top, _names(top))]
    try:
        while stack:
            fd, names = stack[-1]
            if not names:
                os.close(stack.pop()[0])
                continue
            name = names.pop()
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            yield len(stack), name, info
            if stat.S_ISDIR(info.st_mode):
                child = os.open(name, _DIR, dir_fd=fd)
                stack.append((child, _names(child)))
    finally:
        for fd, _ in stack:
            os.close(fd)


def usage(root: Path) -> tuple[int, int]:
    """Allocated bytes and inodes under `root` (itself included), each inode once."""
    seen = {(info.st_dev, info.st_ino): info.st_blocks * 512 for _, _, info in entries(root)}
    return sum(seen.values()), len(seen)


def depth(root: Path) -> int:
    """How many folders deep the tree under `root` goes."""
    return max(level for level, _, info in entries(root) if stat.S_ISDIR(info.st_mode))


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as listing:
        return [entry.name for entry in listing]
