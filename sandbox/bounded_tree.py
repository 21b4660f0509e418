"""Walking and removing a tree someone else wrote, without recursion (stdlib only: the layer
launcher, sandbox/layer_mount.py, imports it by path).

Every walk of such a tree (the write-back, the ownership hand-over, the recycling scan, the disk
watch) looks at most MAX_DEPTH levels below its top and says what it left deeper. Removal is the
exception: a tree that cannot be removed jams the folder it is in for good, so `remove_entry`
removes at any depth, holding at most OPEN_FOLDERS descriptors (a folder deeper than that is
first moved up to the top of the removal under a fresh name). Links are never followed: every
folder is opened relative to its parent's descriptor with O_NOFOLLOW.
"""
from __future__ import annotations

import errno
import os
import stat

MAX_DEPTH = 256  # deeper than any real checkout or CLI home: levels below the top a walk looks at
OPEN_FOLDERS = 64  # folders a removal holds open at once, whatever the depth
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MOVED_PREFIX = ".bot-removing-"
_GONE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


def lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def remove_path(path: str | os.PathLike[str]) -> None:
    """Remove `path` (a folder with everything in it, a file, a link: never what it points to)."""
    parent, name = os.path.split(os.path.abspath(path))
    parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        remove_entry(parent_fd, name)
    finally:
        os.close(parent_fd)


def remove_entry(parent_fd: int, name: str) -> None:
    """Remove `name` in the folder `parent_fd`, and everything under it when it is a folder."""
    info = lstat(parent_fd, name)
    if info is None:
        return
    if not stat.S_ISDIR(info.st_mode):
        _unlink(parent_fd, name)
        return
    top = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    try:
        _make_writable(top, info)
        _empty(top)
    finally:
        os.close(top)
    os.rmdir(name, dir_fd=parent_fd)


def _empty(top: int) -> None:
    """Remove everything in the folder `top`, depth first, at most OPEN_FOLDERS folders open."""
    # each open folder: its descriptor, its name in the folder above, the names left in it
    stack: list[tuple[int, str, list[str]]] = [(top, "", _names(top))]
    try:
        while stack:
            fd, _, names = stack[-1]
            if not names:
                if len(stack) == 1:
                    return
                os.close(fd)
                _, own, _ = stack.pop()
                os.rmdir(own, dir_fd=stack[-1][0])
                continue
            name = names.pop()
            info = lstat(fd, name)
            if info is None:
                continue
            if not stat.S_ISDIR(info.st_mode):
                _unlink(fd, name)
            elif len(stack) >= OPEN_FOLDERS:
                stack[0][2].append(_move_up(fd, name, top))
            else:
                stack.append(_open_folder(fd, name, info))
    finally:
        for fd, _, _ in stack[1:]:
            os.close(fd)


def _open_folder(parent_fd: int, name: str, info: os.stat_result) -> tuple[int, str, list[str]]:
    fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    try:
        _make_writable(fd, info)
        return fd, name, _names(fd)
    except BaseException:
        os.close(fd)
        raise


def _move_up(parent_fd: int, name: str, top: int) -> str:
    """Move the folder `name` to the top of the removal; its new name there."""
    while True:
        moved = MOVED_PREFIX + os.urandom(8).hex()
        if lstat(top, moved) is None:
            os.rename(name, moved, src_dir_fd=parent_fd, dst_dir_fd=top)
            return moved


def _make_writable(fd: int, info: os.stat_result) -> None:
    """A read-only folder of ours would refuse the removal of what is in it."""
    if stat.S_IMODE(info.st_mode) & 0o700 != 0o700:
        try:
            os.chmod(fd, stat.S_IMODE(info.st_mode) | 0o700)
        except PermissionError:
            pass  # not ours: the removal says so when it fails


def _unlink(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno not in _GONE:
            raise


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as entries:
        return [entry.name for entry in entries]
