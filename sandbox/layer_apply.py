"""Apply an overlay's upper layer (what a sandbox changed) to the folder it covered (stdlib only).

The upper layer was written by the sandbox, so every entry is hostile: nothing is ever followed.
Folders on both sides are walked through descriptors opened with O_NOFOLLOW, a symbolic link is
recreated as a link, a file is copied to a fresh name and renamed into place (a file with
several names in the layer gets them again as hard links), and an entry that is in the way (a
folder where a file goes, a link where a folder goes) is removed first. Overlay marks are read
as overlay writes them with `userxattr`: a whiteout (a character device 0/0) deletes the entry,
an opaque folder (user.overlay.opaque) replaces the folder. Modes keep their permission bits
only; the owner is kept when the bot is root. FIFOs and sockets are skipped.
"""
from __future__ import annotations

import os
import stat

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
OPAQUE = "user.overlay.opaque"
TEMP_PREFIX = ".bot-layer-"


class _Folder:
    """A folder being applied: both descriptors, the names left to apply, and the mode it gets
    once its entries are in (a read-only folder would refuse them)."""

    def __init__(self, upper_fd: int, lower_fd: int, info: os.stat_result | None, parts: tuple[str, ...]):
        self.upper_fd, self.lower_fd, self.info, self.parts = upper_fd, lower_fd, info, parts
        with os.scandir(upper_fd) as entries:
            self.names = iter([entry.name for entry in entries])

    def close(self, finished: bool) -> None:
        try:
            if finished and self.info is not None:
                os.chmod(self.lower_fd, stat.S_IMODE(self.info.st_mode) & 0o777)
                _own(self.lower_fd, None, self.info)
        finally:
            os.close(self.upper_fd)
            os.close(self.lower_fd)


class _Links:
    """The first name written of each file the layer holds under several names, reached again
    from the top folder without following a link."""

    def __init__(self, top_fd: int):
        self.top_fd = top_fd
        self.first: dict[tuple[int, int], tuple[str, ...]] = {}

    def remember(self, info: os.stat_result, path: tuple[str, ...]) -> None:
        self.first.setdefault((info.st_dev, info.st_ino), path)

    def link_again(self, info: os.stat_result, lower_fd: int, name: str) -> bool:
        """Make `name` another hard link to the file already written; False when it is the first."""
        first = self.first.get((info.st_dev, info.st_ino))
        if first is None:
            return False
        parent = os.dup(self.top_fd)
        try:
            for part in first[:-1]:
                child = os.open(part, _DIR, dir_fd=parent)
                os.close(parent)
                parent = child
            _remove(lower_fd, name)
            os.link(first[-1], name, src_dir_fd=parent, dst_dir_fd=lower_fd, follow_symlinks=False)
            return True
        except OSError:
            return False  # copied instead
        finally:
            os.close(parent)


def apply(upper: str, lower: str) -> None:
    """Make `lower` hold what the overlay of `upper` on it showed. Depth first, so only the
    folders on the current path hold descriptors."""
    stack = [_Folder(os.open(upper, _DIR), os.open(lower, _DIR), None, ())]
    links = _Links(stack[0].lower_fd)  # the top folder stays open until the walk ends
    try:
        while stack:
            name = next(stack[-1].names, None)
            if name is None:
                stack.pop().close(finished=True)
                continue
            child = _apply_entry(stack[-1], name, links)
            if child is not None:
                stack.append(child)
    finally:
        for folder in stack:
            folder.close(finished=False)


def _apply_entry(folder: _Folder, name: str, links: _Links) -> _Folder | None:
    """Apply one entry; a folder is returned, to be walked next."""
    upper_fd, lower_fd = folder.upper_fd, folder.lower_fd
    info = os.stat(name, dir_fd=upper_fd, follow_symlinks=False)
    mode = info.st_mode
    if stat.S_ISCHR(mode) and info.st_rdev == 0:
        _remove(lower_fd, name)
    elif stat.S_ISDIR(mode):
        return _folder(folder, name, info)
    elif stat.S_ISREG(mode):
        if not (info.st_nlink > 1 and links.link_again(info, lower_fd, name)):
            _file(upper_fd, lower_fd, name, info)
            if info.st_nlink > 1:
                links.remember(info, (*folder.parts, name))
    elif stat.S_ISLNK(mode):
        target = os.readlink(name, dir_fd=upper_fd)
        _remove(lower_fd, name)
        os.symlink(target, name, dir_fd=lower_fd)
        _own(lower_fd, name, info)
    return None


def _folder(parent: _Folder, name: str, info: os.stat_result) -> _Folder:
    upper_fd, lower_fd = parent.upper_fd, parent.lower_fd
    child_upper = os.open(name, _DIR, dir_fd=upper_fd)
    try:
        existing = _lstat(lower_fd, name)
        if existing is not None and (not stat.S_ISDIR(existing.st_mode) or _opaque(child_upper)):
            _remove(lower_fd, name)
            existing = None
        if existing is None:
            os.mkdir(name, 0o700, dir_fd=lower_fd)
        child_lower = os.open(name, _DIR, dir_fd=lower_fd)
    except BaseException:
        os.close(child_upper)
        raise
    try:
        return _Folder(child_upper, child_lower, info, (*parent.parts, name))
    except BaseException:
        os.close(child_upper)
        os.close(child_lower)
        raise


def _file(upper_fd: int, lower_fd: int, name: str, info: os.stat_result) -> None:
    temp = TEMP_PREFIX + os.urandom(6).hex()
    source = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=upper_fd)
    try:
        target = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=lower_fd)
        try:
            _copy(source, target, info.st_size)
            os.chmod(target, stat.S_IMODE(info.st_mode) & 0o777)
            _own(target, None, info)
            os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(target)
    finally:
        os.close(source)
    existing = _lstat(lower_fd, name)
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        _remove(lower_fd, name)
    os.replace(temp, name, src_dir_fd=lower_fd, dst_dir_fd=lower_fd)


def _copy(source: int, target: int, size: int) -> None:
    while size > 0:
        sent = os.sendfile(target, source, None, min(size, 1 << 30))
        if sent == 0:
            return
        size -= sent


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


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _remove(dir_fd: int, name: str) -> None:
    info = _lstat(dir_fd, name)
    if info is None:
        return
    if stat.S_ISDIR(info.st_mode):
        import shutil  # only when a folder goes: the launcher starts with every sandbox
        shutil.rmtree(name, dir_fd=dir_fd)  # descriptor-based: never follows a link inside
        return
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
