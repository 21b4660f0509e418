"""Property: random upper layers written back never cost the host more than the cap.

Layers are generated from what an upper layer may hold (sandbox/layer_apply.py's allowlist:
folders, opaque folders, regular files, sparse files, hard links, symbolic links, whiteouts)
plus what it must not carry over (FIFOs, sockets, chains of folders past MAX_DEPTH), over a host
folder that already holds files and folders under the same names. Whatever the tree and the
budget, the host folder grows by no more allocated bytes and inodes than the budget; with room
to spare, every file lands whole, sparse files stay sparse, and one file's names stay one file.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox import layer_apply
from sandbox.bounded_tree import MAX_DEPTH, remove_path
from tests.conftest import is_root
from tests.sandbox.tree_usage import depth, entries, usage

MIB = 1 << 20
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@dataclass(frozen=True)
class File:
    pieces: tuple[tuple[int, int], ...]  # (offset, length) of each piece of data
    size: int | None  # truncated (or extended, sparse) to this length last


@dataclass(frozen=True)
class HardLink:
    to: int  # which file made so far gets this name too


@dataclass(frozen=True)
class Symlink:
    target: str


@dataclass(frozen=True)
class Odd:
    kind: str  # fifo, socket, whiteout


@dataclass(frozen=True)
class Chain:
    levels: int


@dataclass(frozen=True)
class Folder:
    children: dict = field(default_factory=dict)
    opaque: bool = False


NAMES = st.sampled_from(["a", "b", "c", "d e", "ü", "-x", ".bot-layer-0", "\n"]) | st.text(
    st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)), min_size=1, max_size=20
).filter(lambda name: name not in (".", ".."))
FILES = st.builds(File, st.lists(st.tuples(st.integers(0, 1 << 34), st.integers(1, 1 << 15)), max_size=3).map(tuple),
                  st.none() | st.integers(0, 1 << 40))
ODD_KINDS = ["fifo", "socket"] + (["whiteout"] if is_root() else [])  # a whiteout is a device: root's
LEAVES = (FILES | st.builds(HardLink, st.integers(0, 50)) | st.builds(Symlink, st.text(min_size=1, max_size=300).filter(
    lambda target: "\0" not in target)) | st.builds(Odd, st.sampled_from(ODD_KINDS))
    | st.builds(Chain, st.sampled_from([1, 2, 3, 5, 8, MAX_DEPTH + 2])))
TREES = st.recursive(LEAVES, lambda children: st.builds(Folder, st.dictionaries(NAMES, children, max_size=5),
                                                         st.booleans()), max_leaves=20)
UPPERS = st.dictionaries(NAMES, TREES, max_size=8)
SMALL_FILES = st.builds(File, st.just(((0, 5000),)), st.none())
LOWERS = st.dictionaries(NAMES, SMALL_FILES | st.builds(Folder, st.dictionaries(NAMES, SMALL_FILES, max_size=3)),
                         max_size=6)


class Builder:
    """Makes a generated tree on disk, through descriptors."""

    def __init__(self) -> None:
        self.files: list[tuple[int, str]] = []  # (folder descriptor kept open, name) of each file made
        self.opened: list[int] = []

    def folder(self, fd: int, children: dict) -> None:
        for name, node in children.items():
            self.entry(fd, name, node)

    def entry(self, fd: int, name: str, node: object) -> None:
        if isinstance(node, Folder):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, _DIR, dir_fd=fd)
            if node.opaque:
                os.setxattr(child, layer_apply.OPAQUE, b"y")
            self.folder(child, node.children)
            self.keep(child)
        elif isinstance(node, File):
            self.file(fd, name, node)
        elif isinstance(node, HardLink) and self.files:
            source_fd, source = self.files[node.to % len(self.files)]
            os.link(source, name, src_dir_fd=source_fd, dst_dir_fd=fd, follow_symlinks=False)
        elif isinstance(node, Symlink):
            os.symlink(node.target, name, dir_fd=fd)
        elif isinstance(node, Odd):
            kinds = {"fifo": (stat.S_IFIFO, 0), "socket": (stat.S_IFSOCK, 0), "whiteout": (stat.S_IFCHR, 0)}
            kind, device = kinds[node.kind]
            os.mknod(name, kind | 0o600, device, dir_fd=fd)
        elif isinstance(node, Chain):
            self.chain(fd, name, node.levels)

    def file(self, fd: int, name: str, node: File) -> None:
        handle = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
        try:
            for offset, length in node.pieces:
                os.pwrite(handle, os.urandom(length), offset)
            if node.size is not None:
                os.ftruncate(handle, node.size)
        finally:
            os.close(handle)
        self.files.append((self.keep(os.dup(fd)), name))

    def chain(self, fd: int, name: str, levels: int) -> None:
        current = os.dup(fd)
        for level in range(levels):
            os.mkdir(name if level == 0 else "d", dir_fd=current)
            child = os.open(name if level == 0 else "d", _DIR, dir_fd=current)
            os.close(current)
            current = child
        os.close(os.open("end", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=current))
        os.close(current)

    def keep(self, fd: int) -> int:
        self.opened.append(fd)
        return fd

    def close(self) -> None:
        for fd in self.opened:
            os.close(fd)


def build(path: Path, children: dict) -> None:
    path.mkdir()
    builder = Builder()
    fd = os.open(path, _DIR)
    try:
        builder.folder(fd, children)
    finally:
        os.close(fd)
        builder.close()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("write-back")


def _layers(scratch: Path, upper_tree: dict, lower_tree: dict) -> tuple[Path, Path, Path]:
    case = Path(tempfile.mkdtemp(dir=scratch))
    build(case / "upper", upper_tree)
    build(case / "lower", lower_tree)
    return case, case / "upper", case / "lower"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(upper_tree=UPPERS, lower_tree=LOWERS, max_bytes=st.integers(0, 4 * MIB), max_inodes=st.integers(0, 200))
def test_a_write_back_never_costs_the_host_more_than_its_budget(scratch, upper_tree, lower_tree, max_bytes,
                                                                max_inodes):
    case, upper, lower = _layers(scratch, upper_tree, lower_tree)
    try:
        before = usage(lower)
        layer_apply.apply(str(upper), str(lower), layer_apply.Budget(max_bytes, max_inodes))
        after = usage(lower)
        assert after[0] - before[0] <= max_bytes
        assert after[1] - before[1] <= max_inodes
        _nothing_but_the_allowlist(lower)
    finally:
        remove_path(case)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(upper_tree=UPPERS, lower_tree=LOWERS)
def test_with_room_to_spare_every_file_lands_whole_sparse_and_linked(scratch, upper_tree, lower_tree):
    case, upper, lower = _layers(scratch, upper_tree, lower_tree)
    try:
        done = layer_apply.apply(str(upper), str(lower), layer_apply.Budget(1 << 40, 1 << 20))
        assert not done.cap_reached
        groups: dict[tuple[int, int], set[tuple[int, int]]] = {}
        for parts, info in _files(upper):
            landed = lower.joinpath(*parts)
            assert _same_data(upper.joinpath(*parts), landed, info)
            groups.setdefault((info.st_dev, info.st_ino), set()).add(_inode(landed))
        assert all(len(inodes) == 1 for inodes in groups.values())  # one file's names are one file
    finally:
        remove_path(case)


def _nothing_but_the_allowlist(lower: Path) -> None:
    """Folders, files and links only, no temporary name, no deeper than the bound."""
    assert depth(lower) <= MAX_DEPTH
    for _, name, info in entries(lower):
        assert stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)
        assert not name.startswith(layer_apply.TEMP_PREFIX) or name == ".bot-layer-0"  # the generated name


def _files(upper: Path) -> list[tuple[tuple[str, ...], os.stat_result]]:
    """Each regular file of the upper layer the write-back looks at (MAX_DEPTH levels), by parts."""
    found, pending = [], [()]
    while pending:
        parts = pending.pop()
        if len(parts) >= MAX_DEPTH:
            continue
        for entry in os.scandir(upper.joinpath(*parts)):
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                pending.append((*parts, entry.name))
            elif stat.S_ISREG(info.st_mode):
                found.append(((*parts, entry.name), info))
    return found


def _same_data(source: Path, landed: Path, info: os.stat_result) -> bool:
    """Same length, same bytes in every data extent, and no more blocks than the source took
    (plus one for the last extent's edge): holes stayed holes."""
    copy = landed.stat(follow_symlinks=False)
    if not stat.S_ISREG(copy.st_mode) or copy.st_size != info.st_size:
        return False
    if copy.st_blocks > info.st_blocks + 8:
        return False
    with open(source, "rb") as original, open(landed, "rb") as written:
        offset = 0
        while offset < info.st_size:
            try:
                start = os.lseek(original.fileno(), offset, os.SEEK_DATA)
            except OSError:
                break
            end = os.lseek(original.fileno(), start, os.SEEK_HOLE)
            if os.pread(original.fileno(), end - start, start) != os.pread(written.fileno(), end - start, start):
                return False
            offset = end
    return True


def _inode(path: Path) -> tuple[int, int]:
    info = path.stat(follow_symlinks=False)
    return info.st_dev, info.st_ino


def _tree(root: Path) -> list[tuple]:
    """What a folder holds, as a write-back's result is judged: each entry's path, kind, permission
    bits, and a file's data (holes read as zeros) or a link's target; links between names left out."""
    seen = []
    for folder, folders, files in os.walk(root):
        for name in sorted(folders + files):
            path = Path(folder) / name
            info = path.lstat()
            kind = stat.S_IFMT(info.st_mode)
            what = (path.read_bytes() if stat.S_ISREG(info.st_mode) else os.readlink(path)
                    if stat.S_ISLNK(info.st_mode) else None)
            seen.append((str(path.relative_to(root)), kind, stat.S_IMODE(info.st_mode), what))
    return sorted(seen, key=lambda entry: entry[0])


SMALL_UPPERS = st.dictionaries(NAMES, st.recursive(
    SMALL_FILES | st.builds(Symlink, st.sampled_from(["a", "../x", "/etc/passwd"])) | st.builds(Odd, st.sampled_from(ODD_KINDS)),
    lambda children: st.builds(Folder, st.dictionaries(NAMES, children, max_size=4), st.booleans()), max_leaves=12),
    max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(upper_tree=SMALL_UPPERS, lower_tree=LOWERS, cut_bytes=st.integers(0, 64 << 10), cut_inodes=st.integers(0, 12))
def test_a_write_back_after_one_cut_short_lands_the_tree_one_write_back_lands(scratch, upper_tree, lower_tree,
                                                                              cut_bytes, cut_inodes):
    """The bot applies a run's writes for its launcher, and the launcher's own write-back runs if the
    bot could not finish (sandbox/process.py): what a second apply lands over a first one stopped
    partway (here by a small budget) is what one apply lands."""
    case, upper, once = _layers(scratch, upper_tree, lower_tree)
    twice = case / "twice"
    shutil.copytree(once, twice, symlinks=True)  # the same lower, its random data included
    room = layer_apply.Budget(1 << 30, 1 << 20)
    try:
        layer_apply.apply(str(upper), str(once), room)
        layer_apply.apply(str(upper), str(twice), layer_apply.Budget(cut_bytes, cut_inodes))
        layer_apply.apply(str(upper), str(twice), layer_apply.Budget(1 << 30, 1 << 20))
        assert _tree(twice) == _tree(once)
    finally:
        remove_path(case)
