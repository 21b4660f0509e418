"""Apply an overlay's upper layer (what a sandbox changed) to the folder it covered (stdlib only).

The upper layer was written by the sandbox, so every entry is hostile and the write-back is a
copy of untrusted data:

- What it accepts is declared: folders, regular files, symbolic links, and overlay's own marks
  as overlay writes them with `userxattr` (a whiteout, a character device 0/0, deletes the
  entry; an opaque folder, user.overlay.opaque, replaces the folder). Anything else (a FIFO, a
  socket, a device) is dropped and counted in `WriteBack.dropped`.
- Its budget is the layer's cap (`Budget`), counted as the host counts it: the allocated bytes
  of everything it writes (files, folders, links, and a folder's growth as names go in) and the
  inodes it makes. A file's holes stay holes (only its data extents are copied, found with
  SEEK_DATA/SEEK_HOLE); a file the layer holds under several names is written once and linked,
  and a name the host refuses to link (more names than it takes) is a copy paid for again. An
  entry that would pass the budget is not written (a file is never left cut: it gets its name
  only once complete) and counted as `over_cap`; `WriteBack.cap_reached` says it happened.
- It looks MAX_DEPTH levels down (sandbox/bounded_tree.py) and no further: a folder there that
  holds anything is made empty and counted as `too_deep`. The walk holds three descriptors per
  level, and its memory grows with the number of folders, not with their depth.
- Nothing is ever followed: folders on both sides are opened relative to their parent's
  descriptor with O_NOFOLLOW, and a link is recreated as a link.
- A file is written as an unnamed file (O_TMPFILE) and named once complete, so a write-back
  killed halfway leaves no temporary file in the folder (where the folder's filesystem has no
  unnamed files, a temporary name is used and removed if the copy fails).

Modes keep their permission bits only; the owner is kept when the bot is root.
"""
from __future__ import annotations

import errno
import os
import stat

if __package__:
    from sandbox import bounded_tree
else:  # run by path by the layer launcher (sandbox/layer_mount.py), beside this file
    import bounded_tree  # type: ignore[no-redef]

MAX_DEPTH = bounded_tree.MAX_DEPTH
MIN_LAYER_BYTES = 4096  # a layer's tmpfs is at least this (tmpfs reads size=0 as unlimited)
OPAQUE = "user.overlay.opaque"
TEMP_PREFIX = ".bot-layer-"
CHUNK = 8 << 20  # the most copied between two looks at what the host allocated
MARGIN_BLOCKS = 2  # room kept for what an entry adds around its data: a folder's next block, an extent block
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_NO_UNNAMED_FILES = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL)
DROPPED_KINDS = {stat.S_IFIFO: "fifo", stat.S_IFSOCK: "socket", stat.S_IFCHR: "device", stat.S_IFBLK: "device"}


class CapReached(Exception):
    """The next write would put more on the host than the layer's cap."""


class Budget:
    """What a write-back may add to the host: allocated bytes and inodes."""

    def __init__(self, max_bytes: int, max_inodes: int):
        self.max_bytes, self.max_inodes = max_bytes, max_inodes
        self.bytes = self.inodes = 0
        self.block = 4096  # the host folder's allocation unit, read when the write-back starts

    def need(self, nbytes: int, inodes: int = 0) -> None:
        """Raise CapReached unless `nbytes` more (and the margin) and `inodes` more fit."""
        margin = MARGIN_BLOCKS * self.block
        if self.bytes + nbytes + margin > self.max_bytes or self.inodes + inodes > self.max_inodes:
            raise CapReached

    def spend(self, nbytes: int, inodes: int = 0) -> None:
        self.bytes += max(nbytes, 0)
        self.inodes += inodes

    def span(self, start: int, end: int) -> int:
        """Bytes the blocks holding [start, end) take."""
        return -(-end // self.block) * self.block - start // self.block * self.block


class WriteBack:
    """How a write-back went: its budget as spent, what it dropped (kind -> count), and whether
    it stopped at the cap."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.dropped: dict[str, int] = {}
        self.cap_reached = False

    def drop(self, kind: str) -> None:
        self.dropped[kind] = self.dropped.get(kind, 0) + 1


class _Folder:
    """A folder being applied: both descriptors, the entries left to apply, the mode it gets
    once its entries are in (a read-only folder would refuse them), and the bytes its host side
    was last seen to take."""

    def __init__(self, upper_fd: int, lower_fd: int, info: os.stat_result | None,
                 parent: _Folder | None, name: str):
        self.upper_fd, self.lower_fd, self.info, self.parent, self.name = upper_fd, lower_fd, info, parent, name
        self.depth: int = parent.depth + 1 if parent is not None else 0
        self.allocated = _allocated(os.fstat(lower_fd))
        self.entries = os.scandir(upper_fd)  # read as the walk goes: a folder of a million names is not held

    def next_name(self) -> str | None:
        entry = next(self.entries, None)
        return None if entry is None else entry.name

    def skip_rest(self) -> bool:
        """Apply nothing more of this folder; whether anything was left."""
        left = self.next_name() is not None
        self.entries.close()
        return left

    def path(self) -> list[str]:
        """Its names from the top folder down."""
        names, folder = [], self
        while folder.parent is not None:
            names.append(folder.name)
            folder = folder.parent
        return names[::-1]

    def charge_growth(self, budget: Budget) -> None:
        now = _allocated(os.fstat(self.lower_fd))
        budget.spend(now - self.allocated)
        self.allocated = max(now, self.allocated)

    def close(self, finished: bool) -> None:
        try:
            self.entries.close()
            if finished and self.info is not None:
                os.chmod(self.lower_fd, stat.S_IMODE(self.info.st_mode) & 0o777)
                _own(self.lower_fd, None, self.info)
        finally:
            os.close(self.upper_fd)
            os.close(self.lower_fd)


class _Links:
    """Where the first name of each file the layer holds under several names was written,
    reached again from the top folder without following a link."""

    def __init__(self, top_fd: int):
        self.top_fd = top_fd
        self.first: dict[tuple[int, int], tuple[_Folder, str]] = {}

    def remember(self, info: os.stat_result, folder: _Folder, name: str) -> None:
        self.first.setdefault((info.st_dev, info.st_ino), (folder, name))

    def link_again(self, info: os.stat_result, lower_fd: int, name: str, budget: Budget) -> bool:
        """Make `name` another hard link to the file already written; False when it is the
        first name, or the host refuses the link (the caller copies it, paid for again)."""
        first = self.first.get((info.st_dev, info.st_ino))
        if first is None:
            return False
        budget.need(0)
        parent = os.dup(self.top_fd)
        try:
            for part in first[0].path():
                child = os.open(part, bounded_tree.DIR_FLAGS, dir_fd=parent)
                os.close(parent)
                parent = child
            _remove(lower_fd, name)
            os.link(first[1], name, src_dir_fd=parent, dst_dir_fd=lower_fd, follow_symlinks=False)
            return True
        except OSError:
            return False
        finally:
            os.close(parent)


def layer_inodes(size: int) -> int:
    return max(1024, size // 4096)  # empty files cost no blocks: bound them too (and the write-back)


def report_line(name: str, size: int, full: bool, applied: int, error: str, dropped: str = "") -> str:
    """A layer's line of SCRATCH/report (sandbox/layers.py reads it)."""
    return f"{name}\t{size}\t{int(full)}\t{applied}\t{error}\t{dropped}\n"


def write_back(name: str, size: int, upper: str, path: str, full: bool) -> str:
    """Apply a layer's upper layer to its folder `path`, within its cap `size`; its report line.
    No sandbox process is left to change `upper`, and nothing reads the folder through the overlay."""
    applied, error, dropped = 1, "", ""
    try:
        done = apply(upper, path, Budget(size, layer_inodes(size)))
    except OSError as exc:
        applied, error = 0, os.strerror(exc.errno) if exc.errno else "failed"
    else:
        full = full or done.cap_reached
        dropped = ",".join(f"{kind}={count}" for kind, count in sorted(done.dropped.items()))
        deep = done.dropped.get("too_deep", 0)
        if deep and not full:  # the cap, when reached, is the reason the episode ends
            applied, error = 0, too_deep_error(deep)
    return report_line(name, size, full, applied, error, dropped)


def too_deep_error(count: int) -> str:
    folders = "1 folder" if count == 1 else f"{count} folders"
    return f"{folders} nested deeper than {MAX_DEPTH} levels left out"


def apply(upper: str, lower: str, budget: Budget) -> WriteBack:
    """Make `lower` hold what the overlay of `upper` on it showed, within `budget`. Depth first,
    so only the folders on the current path hold descriptors."""
    done = WriteBack(budget)
    stack = [_Folder(os.open(upper, bounded_tree.DIR_FLAGS), os.open(lower, bounded_tree.DIR_FLAGS), None, None, "")]
    budget.block = max(os.fstatvfs(stack[0].lower_fd).f_frsize, 512)
    links = _Links(stack[0].lower_fd)  # the top folder stays open until the walk ends
    try:
        while stack:
            folder = stack[-1]
            name = folder.next_name()
            if name is None:
                stack.pop().close(finished=True)
                continue
            try:
                child = _apply_entry(folder, name, links, done)
            except CapReached:
                done.cap_reached, child = True, None
                done.drop("over_cap")
            folder.charge_growth(budget)
            if child is not None:
                stack.append(child)
    finally:
        for folder in stack:
            folder.close(finished=False)
    return done


def _apply_entry(folder: _Folder, name: str, links: _Links, done: WriteBack) -> _Folder | None:
    """Apply one entry; a folder is returned, to be walked next."""
    upper_fd, lower_fd, budget = folder.upper_fd, folder.lower_fd, done.budget
    info = os.stat(name, dir_fd=upper_fd, follow_symlinks=False)
    mode = info.st_mode
    if stat.S_ISCHR(mode) and info.st_rdev == 0:
        _remove(lower_fd, name)
    elif stat.S_ISDIR(mode):
        return _folder(folder, name, info, done)
    elif stat.S_ISREG(mode):
        if not (info.st_nlink > 1 and links.link_again(info, lower_fd, name, budget)):
            _file(upper_fd, lower_fd, name, info, budget)
            if info.st_nlink > 1:
                links.remember(info, folder, name)
    elif stat.S_ISLNK(mode):
        _symlink(upper_fd, lower_fd, name, info, budget)
    else:
        done.drop(DROPPED_KINDS.get(stat.S_IFMT(mode), "other"))
    return None


def _folder(parent: _Folder, name: str, info: os.stat_result, done: WriteBack) -> _Folder:
    upper_fd, lower_fd = parent.upper_fd, parent.lower_fd
    child_upper = os.open(name, bounded_tree.DIR_FLAGS, dir_fd=upper_fd)
    try:
        existing = bounded_tree.lstat(lower_fd, name)
        if existing is not None and (not stat.S_ISDIR(existing.st_mode) or _opaque(child_upper)):
            _remove(lower_fd, name)
            existing = None
        if existing is None:
            done.budget.need(done.budget.block, inodes=1)
            os.mkdir(name, 0o700, dir_fd=lower_fd)
        child_lower = os.open(name, bounded_tree.DIR_FLAGS, dir_fd=lower_fd)
    except BaseException:
        os.close(child_upper)
        raise
    try:
        child = _Folder(child_upper, child_lower, info, parent, name)
    except BaseException:
        os.close(child_upper)
        os.close(child_lower)
        raise
    if existing is None:
        done.budget.spend(child.allocated, inodes=1)
    if child.depth >= MAX_DEPTH and child.skip_rest():
        done.drop("too_deep")
    return child


def _file(upper_fd: int, lower_fd: int, name: str, info: os.stat_result, budget: Budget) -> None:
    budget.need(_allocated(info), inodes=1)  # what the layer gave it: most often what the host will
    source = os.open(name, _READ, dir_fd=upper_fd)
    try:
        target = _NewFile(lower_fd)
        try:
            budget.spend(0, inodes=1)
            _copy(source, target.fd, info.st_size, budget)
            os.chmod(target.fd, stat.S_IMODE(info.st_mode) & 0o777)
            _own(target.fd, None, info)
            os.utime(target.fd, ns=(info.st_atime_ns, info.st_mtime_ns))
            target.name_it(name)
        finally:
            target.close()
    finally:
        os.close(source)


class _NewFile:
    """A file no one sees until it is complete: unnamed until `name_it`."""

    def __init__(self, dir_fd: int):
        self.dir_fd, self.temp = dir_fd, None
        try:
            self.fd = os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno not in _NO_UNNAMED_FILES:
                raise
            self.temp = TEMP_PREFIX + os.urandom(6).hex()
            self.fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                              0o600, dir_fd=dir_fd)

    def name_it(self, name: str) -> None:
        """Put the file at `name`, in place of whatever is there."""
        existing = bounded_tree.lstat(self.dir_fd, name)
        if self.temp is None:
            if existing is not None:
                _remove(self.dir_fd, name)
            os.link(f"/proc/self/fd/{self.fd}", name, dst_dir_fd=self.dir_fd, follow_symlinks=True)
            return
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            _remove(self.dir_fd, name)
        os.replace(self.temp, name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        self.temp = None

    def close(self) -> None:
        os.close(self.fd)
        if self.temp is not None:
            bounded_tree.remove_entry(self.dir_fd, self.temp)


def _copy(source: int, target: int, size: int, budget: Budget) -> None:
    """The data extents of `source` to the same offsets of `target`, then its length: holes stay
    holes."""
    offset = 0
    while offset < size:
        start, end = _next_data(source, offset, size)
        _copy_range(source, target, start, end, budget)
        offset = end
    os.ftruncate(target, size)


def _next_data(fd: int, offset: int, size: int) -> tuple[int, int]:
    """The next run of data at or after `offset`, as [start, end); (size, size) when none is left."""
    try:
        start = os.lseek(fd, offset, os.SEEK_DATA)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # only a hole is left
            return size, size
        raise
    return min(start, size), min(os.lseek(fd, start, os.SEEK_HOLE), size)


def _copy_range(source: int, target: int, start: int, end: int, budget: Budget) -> None:
    allocated = _allocated(os.fstat(target))
    while start < end:
        count = min(end - start, CHUNK)
        budget.need(budget.span(start, start + count))
        os.lseek(target, start, os.SEEK_SET)
        sent = os.sendfile(target, source, start, count)
        now = _allocated(os.fstat(target))
        budget.spend(now - allocated)
        allocated = now
        if sent == 0:
            return
        start += sent


def _symlink(upper_fd: int, lower_fd: int, name: str, info: os.stat_result, budget: Budget) -> None:
    target = os.readlink(name, dir_fd=upper_fd)
    budget.need(budget.block, inodes=1)
    _remove(lower_fd, name)
    os.symlink(target, name, dir_fd=lower_fd)
    made = bounded_tree.lstat(lower_fd, name)
    budget.spend(_allocated(made) if made is not None else 0, inodes=1)
    _own(lower_fd, name, info)


def _allocated(info: os.stat_result) -> int:
    return info.st_blocks * 512


def _own(fd: int, name: str | None, info: os.stat_result) -> None:
    if os.geteuid() != 0:
        return  # not root: everything is the bot's own uid already
    if name is None:
        os.fchown(fd, info.st_uid, info.st_gid)
    else:
        os.chown(name, info.st_uid, info.st_gid, dir_fd=fd, follow_symlinks=False)


def _opaque(fd: int) -> bool:
    try:
        return os.getxattr(fd, OPAQUE) == b"y"
    except OSError:
        return False


def _remove(dir_fd: int, name: str) -> None:
    bounded_tree.remove_entry(dir_fd, name)  # at any depth, never following a link inside
