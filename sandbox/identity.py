"""Who the sandboxed command is on the host: never root.

A bot running as an unprivileged user gives its own uid to the sandbox (bubblewrap maps
nothing else). A bot running as root would give root: inside a user namespace that maps
uid 0 to host uid 0, a process is host root for every check that compares uids rather
than capabilities (/proc/sys and kernel.core_pattern among them), even with every
capability dropped. So when the bot is root, bubblewrap still builds the sandbox as root
(it must read bind sources under the bot's 0700 data dir), but:

- the caller writes the user namespace's maps itself (`--userns-block-fd`): host uid 0
  for bubblewrap's set-up, and the sandbox uid (65533) mapped to itself;
- the command starts under setpriv, which switches to that uid and gid, clears supplementary
  groups, the bounding set and inheritable capabilities, then execs the command. The
  seccomp filter and no_new_privs are already in force, so nothing can climb back.

bwrap's own pid 1 (the reaper) stays host uid 0 without capabilities; the command, running
as another uid, can neither signal nor trace nor read the memory of it.

The command must be able to write its HOME and read the worktree (write it, when it is
mounted writable), so both are handed over to it before the start. The worktree's top
directory and `.git` stay the bot's (its git refuses a repository another user owns); the
top directory gets the sandbox group and the sticky bit, so the agent can add files there
but never remove or replace the bot's `.git`. The walks look MAX_DEPTH levels down
(sandbox/bounded_tree.py) and say which folders they left deeper.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from sandbox.bounded_tree import DIR_FLAGS, MAX_DEPTH

SANDBOX_ID = 65533  # uid and gid; unallocated on Debian and systemd hosts (65534 is nobody)
SETPRIV = "/usr/bin/setpriv"
SWITCH_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")  # what setpriv needs, then drops


class IdentityUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class Identity:
    uid: int
    gid: int
    switched: bool  # True: the bot is root and the command is switched to uid inside

    def id_maps(self) -> tuple[str, str]:
        """uid_map and gid_map: root for bubblewrap's set-up, the sandbox user for the command."""
        return f"0 0 1\n{self.uid} {self.uid} 1\n", f"0 0 1\n{self.gid} {self.gid} 1\n"

    def write_id_maps(self, child_pid: int) -> None:
        uid_map, gid_map = self.id_maps()
        for name, text in (("uid_map", uid_map), ("gid_map", gid_map)):
            fd = os.open(f"/proc/{child_pid}/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)

    def command_prefix(self) -> list[str]:
        return [SETPRIV, f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups",
                "--bounding-set=-all", "--inh-caps=-all", "--"]

    def etc_files(self, home: Path) -> dict[str, bytes]:
        """/etc/passwd and /etc/group naming the sandbox user (the host's list stays outside)."""
        passwd = (f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
                  f"agent:x:{self.uid}:{self.gid}:agent:{home}:/bin/sh\n"
                  f"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
        group = f"root:x:0:\nagent:x:{self.gid}:\nnogroup:x:65534:\n"
        return {"/etc/passwd": passwd.encode(), "/etc/group": group.encode()}


def sandbox_identity() -> Identity:
    """The host uid/gid the sandboxed command runs as."""
    if os.geteuid() != 0:
        return Identity(os.geteuid(), os.getegid(), switched=False)
    if not os.access(SETPRIV, os.X_OK):
        raise IdentityUnavailable(f"{SETPRIV} not found (util-linux) to drop root inside the sandbox")
    for kind in ("uid", "gid"):
        if not _mapped(SANDBOX_ID, Path(f"/proc/self/{kind}_map")):
            raise IdentityUnavailable(f"sandbox {kind} {SANDBOX_ID} is not mapped in the bot's user namespace")
    return Identity(SANDBOX_ID, SANDBOX_ID, switched=True)


def _mapped(value: int, id_map: Path) -> bool:
    for line in id_map.read_text().splitlines():
        inside, _, count = (int(field) for field in line.split())
        if inside <= value < inside + count:
            return True
    return False


@dataclass(frozen=True)
class _HandedOver:
    """A worktree's last full hand-over: the bot's git state then, the folders left too deep."""
    identity: Identity
    bot_writes: tuple | None
    too_deep: tuple[str, ...]


# in the bot's memory, never in anything the agent can write: (st_dev, st_ino) of a worktree's top
_handed_over: dict[tuple[int, int], _HandedOver] = {}


def hand_over(identity: Identity, home: Path, workdir: Path) -> list[str]:
    """Let the sandbox user write its HOME and read (or, when mounted so, write) the worktree.
    Links are never followed, and no walk goes deeper than MAX_DEPTH: the folders there that
    hold something are left as they are and returned (relative to the home or the worktree).

    The worktree is walked only when the bot may have written there since its last walk: its
    git index or `.git` entry changed (checkouts, commits, a new worktree at the same path).
    The bridge hands over what it writes itself (hand_over_written). What the sandbox writes
    reaches the host with its own owner. Skipping can only leave the sandbox less than a walk
    would give it, never more."""
    left = _chown_tree(home, identity, include_top=True)
    top = os.stat(workdir, follow_symlinks=False)
    if not stat.S_ISDIR(top.st_mode):
        return left
    key, writes = (top.st_dev, top.st_ino), _bot_writes(workdir)
    known = _handed_over.get(key)
    if known is None or known.identity != identity or known.bot_writes != writes or writes is None:
        deep = _chown_tree(workdir, identity, include_top=False, skip=frozenset({".git"}))
        known = _HandedOver(identity, writes, tuple(deep))
        if writes is not None:
            _handed_over[key] = known
    _share_top(workdir, top, identity)
    return left + list(known.too_deep)


def hand_over_written(identity: Identity, dir_fd: int, name: str) -> None:
    """Give one entry the bot just wrote into a handed-over worktree to the sandbox user, as the
    next walk would: a link, or a file under several names, is left as it is."""
    child = _chown_entry(dir_fd, name, identity)
    if child is not None:
        os.close(child)


def _share_top(workdir: Path, top: os.stat_result, identity: Identity) -> None:
    """The top stays the bot's: the sandbox group may add files, the sticky bit keeps `.git`.
    Changed only when not already so (a chmod would change the ctime all the same)."""
    mode = stat.S_IMODE(top.st_mode) | stat.S_ISVTX | 0o070
    if top.st_gid != identity.gid:
        os.chown(workdir, -1, identity.gid, follow_symlinks=False)
    if stat.S_IMODE(top.st_mode) != mode:
        os.chmod(workdir, mode)


def _bot_writes(workdir: Path) -> tuple | None:
    """What changes whenever the bot's git writes the worktree: the `.git` entry and the index
    it leads to (git rewrites the index on every checkout); None when there is no `.git`."""
    dotgit = workdir / ".git"
    try:
        entry = os.stat(dotgit, follow_symlinks=False)
        index = dotgit / "index" if stat.S_ISDIR(entry.st_mode) else _linked_index(dotgit)
    except OSError:
        return None
    return _stamp(entry), _stamp_of(index) if index is not None else None


def _linked_index(dotgit: Path) -> Path | None:
    """A linked worktree's index: `gitdir: <admin dir>` in the `.git` file (at most 4 KiB)."""
    fd = os.open(dotgit, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        text = os.read(fd, 4096).decode(errors="replace").strip()
    finally:
        os.close(fd)
    return Path(dotgit.parent, text[len("gitdir:"):].strip(), "index") if text.startswith("gitdir:") else None


def _stamp_of(path: Path) -> tuple | None:
    try:
        return _stamp(os.stat(path, follow_symlinks=False))
    except OSError:
        return None


def _stamp(info: os.stat_result) -> tuple:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _chown_tree(path: Path, identity: Identity, include_top: bool, skip: frozenset[str] = frozenset()) -> list[str]:
    """Hand over what is under `path`, depth first without recursion; the folders too deep."""
    top = os.open(path, DIR_FLAGS)
    # each open folder: its descriptor, its path below the top, the names left in it
    stack: list[tuple[int, str, list[str]]] = [(top, "", [])]
    too_deep: list[str] = []
    try:
        if include_top:
            os.fchown(top, identity.uid, identity.gid)
        stack[0][2].extend(name for name in _names(top) if name not in skip)
        while stack:
            fd, where, names = stack[-1]
            if not names:
                os.close(stack.pop()[0])
                continue
            name = names.pop()
            child = _chown_entry(fd, name, identity)
            if child is None:
                continue
            inside = f"{where}/{name}" if where else name
            if len(stack) < MAX_DEPTH:
                stack.append((child, inside, _names(child)))
                continue
            if _names(child):
                too_deep.append(str(Path(path, inside)))
            os.close(child)
        return too_deep
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _chown_entry(dir_fd: int, name: str, identity: Identity) -> int | None:
    """Hand over one entry; a folder is returned open, to be walked. Entries the agent may race
    (gone, or swapped for a link) are left as they are; so is a file with several links, which
    could be a link to something the sandbox must not own."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        is_dir = stat.S_ISDIR(info.st_mode)
        if not is_dir and info.st_nlink > 1:
            return None
        if info.st_uid != identity.uid or info.st_gid != identity.gid:
            os.chown(name, identity.uid, identity.gid, dir_fd=dir_fd, follow_symlinks=False)
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd) if is_dir else None
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            return None
        raise


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as entries:
        return [entry.name for entry in entries]
