"""A fresh checkout's index settled: no entry of it racily clean, so a git that cannot rewrite the
index (the sandbox's: the bot's index is mounted read-only there) never re-reads a file only to
learn that it is unchanged.

git records each file's stat data in the index and trusts it afterwards, except for a file whose
mtime is not older than the index itself: written in the same second (Debian's git keeps no
nanoseconds), the file could have changed after git read it without its mtime showing it ("racy
git", git's Documentation/technical/racy-git.txt). git re-reads such a file on every status, and
only a git that writes the index again, a second later, ends that. A checkout writes its files
and then its index at once, so after a fast one most entries are racy: measured here, 1,390 of
5,201 files re-read by every `git status` in a `run`.

`settle` gives each racily clean file the mtime of the second before the index's, then lets git
refresh the index once: git reads those files, finds them as recorded, and writes an index newer
than every file. Nothing waits for the clock. A file written after that gets an mtime newer than
the one recorded, so no change can hide; one written before the refresh is read by the refresh.
It runs before the agent does, on the bot's own checkout (a new worktree or a scrubbed spare).

The names come from the index, that is from the repository: read through an allowlist (a listing
that does not parse whole settles nothing; a name with an empty, `.`, `..` or `.git` part is
dropped), and every file is reached beneath the worktree without following a link.
"""
from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.workspace.git import pinned_env, run_git, run_git_bytes
from sandbox.bounded_tree import DIR_FLAGS

log = logging.getLogger(__name__)

# `git ls-files -s -z --debug`: mode, object, stage, TAB, name, NUL, then five lines of numbers
_ENTRY = re.compile(rb"([0-7]{6}) [0-9a-f]{40,64} ([0-3])\t([^\0]+)\0"
                    rb"  ctime: \d+:\d+\n  mtime: (\d+):\d+\n  dev: \d+\tino: \d+\n"
                    rb"  uid: \d+\tgid: \d+\n  size: \d+\tflags: [0-9a-f]+\n")
_FILE_MODES = (b"100644", b"100755", b"120000")  # files and links: a gitlink (a folder) is never read
_MTIME = re.compile(rb"\n  mtime: (\d+):")  # every entry's, after its ctime line; a name may add more
_KEPT = 4096  # indexes remembered as settled, at most

# index path -> its stat data when it last held no racily clean entry, in the bot's memory only: git
# writes an index by renaming a new file over it, so the same stat data is the same index
_settled: dict[str, tuple[int, ...]] = {}


@dataclass(frozen=True)
class Listing:
    """The racily clean files of an index (names relative to the top) and the names dropped."""

    racy: list[bytes]
    dropped: int


def racy_files(listing: bytes, index_s: int) -> Listing | None:
    """The files whose recorded mtime is not older than the index's second (`index_s`), from
    `git ls-files -s -z --debug`; None when the listing does not parse whole."""
    racy: list[bytes] = []
    dropped, at = 0, 0
    while at < len(listing):
        entry = _ENTRY.match(listing, at)
        if entry is None:
            return None
        at = entry.end()
        mode, stage, name, mtime_s = entry.group(1, 2, 3, 4)
        if mode not in _FILE_MODES or stage != b"0" or int(mtime_s) < index_s:
            continue
        if plain_name(name):
            racy.append(name)
        else:
            dropped += 1
    return Listing(racy, dropped)


def may_hold_racy(listing: bytes, index_s: int) -> bool:
    """False only when no entry of the listing is racily clean (one regex over the whole listing,
    where `racy_files` matches each entry): a name that looks like an mtime can only say True."""
    return any(int(mtime_s) >= index_s for mtime_s in _MTIME.findall(listing))


def plain_name(name: bytes) -> bool:
    """A path below the top that names nothing above it and nothing of git's."""
    return all(part not in (b"", b".", b"..") and part.lower() != b".git" for part in name.split(b"/"))


def back_date(top: Path, names: Iterable[bytes], mtime_s: int) -> int:
    """Set the access and modification times of each file (a link itself, never what it points
    to) to `mtime_s`, each reached beneath `top` without following a link; how many were set.
    A name that is gone, or whose folder is a link, is left."""
    when = mtime_s * 1_000_000_000
    folders: dict[bytes, int | None] = {}
    done = 0
    try:
        for name in names:
            folder, _, leaf = name.rpartition(b"/")
            if folder not in folders:
                folders[folder] = _open_beneath(top, folder)
            fd = folders[folder]
            if fd is None:
                continue
            try:
                os.utime(leaf, ns=(when, when), dir_fd=fd, follow_symlinks=False)
                done += 1
            except OSError:
                continue
    finally:
        for fd in folders.values():
            if fd is not None:
                os.close(fd)
    return done


def _open_beneath(top: Path, folder: bytes) -> int | None:
    """The folder `folder` below `top`, each part opened without following a link; None if absent."""
    try:
        fd = os.open(top, DIR_FLAGS)
    except OSError:
        return None
    for part in folder.split(b"/") if folder else ():
        try:
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = child
    return fd


async def settle(path: Path, git_dir: Path) -> int:
    """Settle the index of the checkout at `path` (its admin dir `git_dir`); how many racily clean
    files it found. A checkout it cannot settle is left as it was: git is then slower, never wrong."""
    index = git_dir / "index"
    before = _stamp(index)
    if before is None or _settled.get(str(index)) == before:
        return 0
    index_s = int(before[3] // 1_000_000_000)
    env = pinned_env(git_dir, path)
    code, out, _ = await run_git_bytes("ls-files", "-s", "-z", "--debug", cwd=path, env=env)
    if code == 0 and not may_hold_racy(out, index_s):
        _remember(index, before)
        return 0
    listing = racy_files(out, index_s) if code == 0 else None
    if listing is None:
        log.warning("the index of %s was not settled: git's listing did not parse", path.name)
        return 0
    if listing.dropped:
        log.warning("the index of %s: %d names left unsettled (not plain paths)", path.name, listing.dropped)
    if not listing.racy:
        return 0
    await asyncio.to_thread(back_date, path, listing.racy, index_s - 1)
    code, _, _ = await run_git("update-index", "-q", "--refresh", cwd=path, env=env)
    after = _stamp(index)
    if code == 0 and not listing.dropped and after is not None:
        _remember(index, after)
    return len(listing.racy)


def _stamp(index: Path) -> tuple[int, ...] | None:
    try:
        info = os.stat(index)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _remember(index: Path, stamp: tuple[int, ...]) -> None:
    if len(_settled) >= _KEPT:
        _settled.clear()
    _settled[str(index)] = stamp
