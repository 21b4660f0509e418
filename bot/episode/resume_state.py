"""What a CLI home must keep for the next turn to resume its session, and removal of the rest.

A CLI home is written by the agent. Before a home leaves the machine (the Action saves the data
dir to the Actions cache, which other workflow runs of the repository can restore), everything
but the session state its adapter declares (`resume_state`) is removed: credentials the CLI
wrote, a key it copied under another name, logs, caches, prompt history. Checked with each pinned CLI (tests/action/
test_cache_scrub.py resumes a real session from a scrubbed home).

The walk never follows a link: every directory is opened relative to its parent's descriptor
with O_NOFOLLOW, entries are classified by lstat, and removal is unlink/rmdir relative to a
directory descriptor. A symlink, FIFO, socket or device is removed wherever it is, and so is a
regular file with other hard links (its content lives elsewhere too).
"""
from __future__ import annotations

import os
import stat
from fnmatch import fnmatchcase
from pathlib import Path

from adapters import base

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def globs(agent: str) -> tuple[str, ...]:
    """The HOME-relative globs (one per path component, `*` never crosses a `/`) of the files
    that make `agent`'s session resumable, as its adapter declares them; none for an unknown agent."""
    return tuple(base.get(agent).resume_state) if agent in base.names() else ()


def credential_files(agent: str) -> frozenset[str]:
    """The HOME-relative files where `agent`'s CLI keeps a credential: never packed, whatever its
    resume globs match."""
    return frozenset(base.get(agent).credential_files) if agent in base.names() else frozenset()


def resume_gap(adapter: base.Adapter) -> str | None:
    """What the record says when the adapter declares no resume state: no turn resumes."""
    if tuple(getattr(adapter, "resume_state", ())):
        return None
    return f"its sessions: the {adapter.name} adapter declares no resume state, so every turn starts fresh"


def scrub_homes(homes: Path) -> int:
    """Reduce every `homes/<conversation>/<agent>` to its resume state; returns how many files,
    links and other non-directories were removed. Anything that is not a real directory at the
    conversation or agent level, and any agent without a resume state, is removed whole."""
    try:
        fd = os.open(homes, _DIR_FLAGS)
    except FileNotFoundError:
        return 0
    try:
        removed = 0
        for conversation in _names(fd):
            if not _is_dir(fd, conversation):
                removed += _remove(fd, conversation)
                continue
            removed += _each_agent(fd, conversation)
        return removed
    finally:
        os.close(fd)


def empty(folder: Path) -> int:
    """Remove everything inside `folder` (kept itself), never following a link; returns how many
    non-directories went."""
    fd = os.open(folder, _DIR_FLAGS)
    try:
        return sum(_remove(fd, name) for name in _names(fd))
    finally:
        os.close(fd)


def _each_agent(homes_fd: int, conversation: str) -> int:
    fd = _open_dir(homes_fd, conversation)
    try:
        removed = 0
        for agent in _names(fd):
            patterns = globs(agent)
            if not patterns or not _is_dir(fd, agent):
                removed += _remove(fd, agent)
            else:
                removed += _prune(fd, agent, (), [p.split("/") for p in patterns])
        return removed
    finally:
        os.close(fd)


def _prune(parent_fd: int, name: str, where: tuple[str, ...], patterns: list[list[str]]) -> int:
    """Keep, under directory `name`, only regular single-link files whose path matches a pattern.
    Descends only into directories on the way to a pattern, so the depth is the patterns'."""
    fd = _open_dir(parent_fd, name)
    removed = 0
    try:
        infos = {entry: os.stat(entry, dir_fd=fd, follow_symlinks=False) for entry in _names(fd)}
        for entry, info in infos.items():  # link counts as found, before any removal here
            path = (*where, entry)
            if stat.S_ISDIR(info.st_mode) and any(_leads_to(path, p) for p in patterns):
                removed += _prune(fd, entry, path, patterns)
            elif not (stat.S_ISREG(info.st_mode) and info.st_nlink == 1
                      and any(_matches(path, p) for p in patterns)):
                removed += _remove(fd, entry)
    finally:
        os.close(fd)
    if where:
        try:
            os.rmdir(name, dir_fd=parent_fd)  # only when nothing was kept in it
        except OSError:
            pass
    return removed


def _matches(path: tuple[str, ...], pattern: list[str]) -> bool:
    return len(path) == len(pattern) and all(map(fnmatchcase, path, pattern))


def _leads_to(path: tuple[str, ...], pattern: list[str]) -> bool:
    return len(path) < len(pattern) and all(map(fnmatchcase, path, pattern))


def _open_dir(parent_fd: int, name: str) -> int:
    """Open a directory already seen as one by lstat (never through a link), readable and
    writable by us: the agent may have left it mode 000 or read-only, which stops an unprivileged
    bot (its owner) from listing or emptying it until the mode is given back."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=parent_fd)  # a directory (lstat); the sandbox is gone
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    if os.fstat(fd).st_mode & 0o700 != 0o700:
        os.fchmod(fd, 0o700)
    return fd


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as entries:
        return [entry.name for entry in entries]


def _is_dir(dir_fd: int, name: str) -> bool:
    return stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)


def _remove(parent_fd: int, name: str) -> int:
    """Remove `name` (a whole tree when it is a directory) without following any link; returns
    how many non-directories went. Iterative, holding one directory descriptor at a time (a
    climb goes back through `..`), so no depth the agent built exhausts the stack or the fds."""
    if not _is_dir(parent_fd, name):
        os.unlink(name, dir_fd=parent_fd)
        return 1
    removed = 0
    fd = _open_dir(parent_fd, name)
    pending: list[list[str]] = []  # per level entered: its subdirectories still to empty
    names: list[str] = []  # the directory names from below `name` down to fd
    try:
        while True:
            subdirs = []
            for entry in _names(fd):
                if _is_dir(fd, entry):
                    subdirs.append(entry)
                else:
                    os.unlink(entry, dir_fd=fd)
                    removed += 1
            pending.append(subdirs)
            while not pending[-1] and names:  # emptied: climb back and remove it
                pending.pop()
                up = os.open("..", _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = up
                os.rmdir(names.pop(), dir_fd=fd)
            if not pending[-1]:  # back at `name` with nothing left under it
                break
            child = pending[-1].pop()
            down = _open_dir(fd, child)
            os.close(fd)
            fd = down
            names.append(child)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)
    return removed
