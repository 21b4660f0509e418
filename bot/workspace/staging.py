"""The agent's changes as the index, without letting git read the tree (for bot/workspace/effects.py):
the changed paths as git lists them with the bot's git dir pinned, each hashed as the bot lstat'ed
it (--no-filters; a symlink as its target; nothing behind a symlinked folder), submodule
pointers left as they were."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from bot.workspace import tree_scan
from bot.workspace.git import git, git_bytes, pinned_env, run_git
from bot.workspace.worktrees import Worktree

MAX_FILE_BYTES = 50 << 20  # GitHub warns above 50 MiB and refuses above 100 MiB


async def stage(wt: Worktree, changed: list[bytes]) -> list[str]:
    """Make the index the base tree plus every changed path as the bot finds it: a regular file
    hashed with --no-filters, a symlink as its target, anything missing (or behind a symlinked
    folder) removed. Submodule pointers stay as they were; nothing inside them is taken."""
    submodules = await wt.submodules()
    records = await _index_records(wt, [name for name in changed if not _in_submodule(name, submodules)])
    code, _, _ = await run_git("diff-index", "--cached", "--quiet", wt.base_sha, cwd=wt.admin_dir,
                               env=wt.repo_env())
    if code != 0:  # the index is the base's since the checkout (and keeps its stat data); else reset
        await bare_git(wt, "read-tree", wt.base_sha)
    if records:
        await git_bytes("update-index", "-z", "--index-info", cwd=wt.admin_dir, env=wt.repo_env(),
                        stdin=b"".join(records))
    names = await bare_git(wt, "diff-index", "--cached", "--name-only", "--no-renames", "-z", wt.base_sha)
    return [name for name in names.split("\0") if name]


async def changed_paths(wt: Worktree) -> list[bytes]:
    """Untracked files that are not ignored, and tracked paths whose file differs from the
    index by its stat data (contents are compared when hashed). git is pinned to the bot's git
    dir; the scan has made sure there is no repository in the tree for it to enter."""
    env = pinned_env(wt.git_dir, wt.path)
    untracked = await git_bytes("ls-files", "-z", "--others", "--exclude-standard", cwd=wt.path, env=env)
    tracked = await git_bytes("diff-files", "-z", "--name-only", "--no-renames", "--ignore-submodules=all",
                              cwd=wt.path, env=env)
    return list(dict.fromkeys(name for name in (untracked + tracked).split(b"\0") if name))


def _in_submodule(name: bytes, submodules: set[str]) -> bool:
    text = os.fsdecode(name)
    return any(text == path or text.startswith(path + "/") for path in submodules)


async def _index_records(wt: Worktree, changed: list[bytes]) -> list[bytes]:
    """`update-index --index-info` records: `mode sha<TAB>path` to set, mode 0 to remove."""
    files, links, gone = [], [], []
    for name in changed:
        info = _lstat_below(wt.path, name)
        if info is None or stat.S_ISDIR(info.st_mode):
            gone.append(name)
        elif stat.S_ISREG(info.st_mode):
            files.append((b"100755" if info.st_mode & stat.S_IXUSR else b"100644", name))
        elif stat.S_ISLNK(info.st_mode):
            links.append(name)
        # a fifo, socket or device is no file git can hold: the base version stays
    records = [b"0 " + b"0" * 40 + b"\t" + name + b"\0" for name in gone]
    root = os.fsencode(wt.path)
    if files:
        listing = b"".join(_c_quoted(root + b"/" + name) + b"\n" for _, name in files)
        shas = (await git_bytes("hash-object", "-w", "--no-filters", "--stdin-paths", cwd=wt.admin_dir,
                                env=wt.repo_env(), stdin=listing)).split()
        records += [mode + b" " + sha + b"\t" + name + b"\0" for (mode, name), sha in zip(files, shas, strict=True)]
    for name in links:
        target = os.readlink(root + b"/" + name)
        sha = (await git_bytes("hash-object", "-w", "--stdin", cwd=wt.admin_dir, env=wt.repo_env(),
                               stdin=target)).strip()
        records.append(b"120000 " + sha + b"\t" + name + b"\0")
    return records


def _lstat_below(root: Path, name: bytes) -> os.stat_result | None:
    """lstat of root/name; None when it is missing or a folder on the way is not a real folder
    (a symlinked folder is never followed: its files are not the tree's)."""
    here = os.fsencode(root)
    for part in name.split(b"/"):
        try:
            info = os.lstat(here)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        here += b"/" + part
    try:
        return os.lstat(here)
    except OSError:
        return None


def _c_quoted(path: bytes) -> bytes:
    """A path in git's C-style quotes, as `--stdin-paths` reads a line that starts with `"`."""
    escaped = bytearray(b'"')
    for byte in path:
        if byte in (0x22, 0x5C):
            escaped += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            escaped += b"\\%03o" % byte
        else:
            escaped.append(byte)
    return bytes(escaped + b'"')


async def nested_repositories(wt: Worktree, files: list[str]) -> list[str]:
    """Folders the new tree would hand to anyone who checks it out as a bare repository (HEAD,
    objects/, refs/ as plain files, config naming programs), holding a changed path."""
    tree = await bare_git(wt, "ls-files", "-z")
    return tree_scan.bare_repositories(tree.split("\0"), files)


def oversized_files(wt: Worktree, changed: list[bytes]) -> list[tuple[str, int]]:
    """Changed files larger than MAX_FILE_BYTES, checked before anything is hashed into the
    shared object store."""
    found = []
    for name in changed:
        info = _lstat_below(wt.path, name)
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
            found.append((os.fsdecode(name), info.st_size))
    return found


async def symlinks(wt: Worktree, files: list[str]) -> dict[str, str]:
    """Changed paths staged as symlinks (mode 120000), with their targets."""
    staged = await bare_git(wt, "ls-files", "--stage", "-z", "--", *files)
    entries = (entry.split("\t", 1) for entry in staged.split("\0") if "\t" in entry)
    return {path: await bare_git(wt, "cat-file", "blob", meta.split()[1])
            for meta, path in entries if meta.startswith("120000 ")}


async def bare_git(wt: Worktree, *args: str, stdin: bytes | None = None) -> str:
    """git on the bot's git dir alone: no work tree, so nothing in the tree is read; its commits
    are by the identity the worktree was prepared with."""
    return await git(*args, cwd=wt.admin_dir, env=wt.repo_env(), stdin=stdin, profile=wt.profile)
