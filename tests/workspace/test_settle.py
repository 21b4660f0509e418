"""A fresh checkout's index settled (bot/workspace/settle.py): no entry racily clean afterwards, and
no change hidden by it, before or after."""
from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bot.workspace import settle
from bot.workspace import worktrees as workspace
from tests.entry_settings import current

from .conftest import GIT_ENV, sh_git

FILES = {f"pkg{n % 3}/file{n}.py": f"print({n})\n" for n in range(30)}


def _checkout(tmp_path: Path, files: dict[str, str], links: dict[str, str] | None = None) -> Path:
    """A repository checked out with every entry racily clean: the index carries the files' second."""
    top = tmp_path / "checkout"
    sh_git("init", "-q", str(top))
    for name, text in files.items():
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text(text)
    for name, target in (links or {}).items():
        (top / name).symlink_to(target)
    sh_git("add", "-A", cwd=top)
    sh_git("commit", "-q", "-m", "c", cwd=top)
    newest = max(os.lstat(top / name).st_mtime for name in [*files, *(links or {})])
    os.utime(top / ".git" / "index", (newest, newest))
    return top


def _racy(top: Path) -> list[bytes]:
    index_s = int(os.stat(top / ".git" / "index").st_mtime)
    listing = subprocess.run(["git", "ls-files", "-s", "-z", "--debug"], cwd=top, env=GIT_ENV,
                             capture_output=True, check=True).stdout
    found = settle.racy_files(listing, index_s)
    assert found is not None
    return found.racy


def _status(top: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=top, env={**GIT_ENV, "GIT_OPTIONAL_LOCKS": "0"},
                          capture_output=True, text=True, check=True).stdout


def test_a_settled_checkout_has_no_racily_clean_entry(tmp_path: Path) -> None:
    top = _checkout(tmp_path, FILES)
    assert len(_racy(top)) == len(FILES)
    assert asyncio.run(settle.settle(top, top / ".git")) == len(FILES)
    assert _racy(top) == []
    assert _status(top) == ""


def test_a_file_changed_after_the_settle_shows_as_changed(tmp_path: Path) -> None:
    top = _checkout(tmp_path, FILES)
    asyncio.run(settle.settle(top, top / ".git"))
    (top / "pkg0/file0.py").write_text("print(9)\n")  # same size
    assert _status(top) == " M pkg0/file0.py\n"


def test_a_file_changed_before_the_settle_keeping_its_mtime_shows_as_changed(tmp_path: Path) -> None:
    top = _checkout(tmp_path, FILES)
    target = top / "pkg0/file0.py"
    before = os.stat(target)
    target.write_text("print(9)\n")  # same size, same mtime: only its being racy showed it
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    asyncio.run(settle.settle(top, top / ".git"))
    assert _status(top) == " M pkg0/file0.py\n"


def test_a_link_is_back_dated_itself_and_its_target_is_left(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    os.utime(outside, (2_000_000_000, 2_000_000_000))
    top = _checkout(tmp_path, {"a.txt": "a\n"}, links={"link": str(outside)})
    asyncio.run(settle.settle(top, top / ".git"))
    assert os.stat(outside).st_mtime == 2_000_000_000
    assert _racy(top) == []


def test_a_file_under_a_folder_swapped_for_a_link_is_left(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "file0.py").write_text("x")
    os.utime(elsewhere / "file0.py", (2_000_000_000, 2_000_000_000))
    top = tmp_path / "top"
    top.mkdir()
    (top / "pkg0").symlink_to(elsewhere)
    assert settle.back_date(top, [b"pkg0/file0.py", b"other.py"], 1_000_000_000) == 0
    assert os.stat(elsewhere / "file0.py").st_mtime == 2_000_000_000


def test_a_checkout_whose_index_is_settled_already_is_left_alone(tmp_path: Path) -> None:
    top = _checkout(tmp_path, FILES)
    asyncio.run(settle.settle(top, top / ".git"))
    index = os.stat(top / ".git" / "index")
    assert asyncio.run(settle.settle(top, top / ".git")) == 0
    assert os.stat(top / ".git" / "index").st_mtime_ns == index.st_mtime_ns


def test_a_gitlink_is_not_back_dated() -> None:
    listing = _entry(b"160000", b"sub", 5) + _entry(b"100644", b"file", 5)
    assert settle.racy_files(listing, 5) == settle.Listing([b"file"], 0)


def _entry(mode: bytes, name: bytes, mtime_s: int, stage: bytes = b"0") -> bytes:
    return (mode + b" " + b"a" * 40 + b" " + stage + b"\t" + name + b"\0" +
            b"  ctime: 1:2\n  mtime: %d:3\n  dev: 4\tino: 5\n  uid: 0\tgid: 0\n  size: 7\tflags: 0\n" % mtime_s)


NAMES = st.binary(min_size=1, max_size=40).filter(lambda name: b"\0" not in name)


@given(st.lists(st.tuples(NAMES, st.integers(0, 10)), max_size=8), st.integers(0, 10))
def test_the_racy_files_are_the_plain_names_not_older_than_the_index(entries: list[tuple[bytes, int]],
                                                                      index_s: int) -> None:
    listing = b"".join(_entry(b"100644", name, mtime_s) for name, mtime_s in entries)
    found = settle.racy_files(listing, index_s)
    assert found is not None
    newer = [name for name, mtime_s in entries if mtime_s >= index_s]
    assert found.racy == [name for name in newer if settle.plain_name(name)]
    assert found.dropped == len(newer) - len(found.racy)


MTIME_LIKE = st.sampled_from([b"", b"\n  mtime: 9:0\n", b"\n  mtime: 0:0", b"  mtime: 99:"])


@given(st.lists(st.tuples(NAMES, MTIME_LIKE, st.integers(0, 10), st.sampled_from([b"100644", b"160000"])),
                max_size=8), st.integers(0, 10))
def test_the_quick_look_never_misses_a_racily_clean_entry(entries: list[tuple[bytes, bytes, int, bytes]],
                                                          index_s: int) -> None:
    listing = b"".join(_entry(mode, name + fake, mtime_s) for name, fake, mtime_s, mode in entries)
    found = settle.racy_files(listing, index_s)
    assert found is not None
    if found.racy or found.dropped:
        assert settle.may_hold_racy(listing, index_s)


@given(st.binary(max_size=200))
def test_a_listing_that_does_not_parse_whole_settles_nothing(tail: bytes) -> None:
    listing = _entry(b"100644", b"file", 5) + b"x" + tail
    assert settle.racy_files(listing, 0) is None


@given(st.lists(st.sampled_from([b"", b".", b"..", b".git", b".GIT", b"a", b"b.py"]), min_size=1, max_size=5))
def test_a_plain_name_stays_beneath_the_top_and_out_of_git(parts: list[bytes]) -> None:
    name = b"/".join(parts)
    if settle.plain_name(name):
        resolved = os.path.normpath(b"/top/" + name)
        assert resolved.startswith(b"/top/")
        assert b".git" not in resolved.lower().split(b"/")


def test_names_with_empty_dot_or_git_parts_are_not_plain() -> None:
    for name in (b"../x", b"a/../../x", b"./x", b"a//b", b"a/", b".git/config", b"a/.GIT/hooks/x"):
        assert not settle.plain_name(name), name


def _worktree_racy(path: Path, git_dir: Path) -> list[bytes]:
    index_s = int(os.stat(git_dir / "index").st_mtime)
    listing = subprocess.run(["git", "ls-files", "-s", "-z", "--debug"], cwd=path,
                             env={**GIT_ENV, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(path)},
                             capture_output=True, check=True).stdout
    found = settle.racy_files(listing, index_s)
    assert found is not None
    return found.racy


async def test_a_new_worktree_is_prepared_with_no_racily_clean_entry(remote, widget):
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    assert wt.git_dir is not None
    assert _worktree_racy(wt.path, wt.git_dir) == []


async def test_a_recycled_worktree_is_prepared_with_no_racily_clean_entry(remote, widget):
    first = await workspace.prepare(widget, "octo/widget#1", current())
    (first.path / "README.md").write_text("edited by the agent\n")
    await workspace.remove(first)
    remote.commit(widget, "main", {"src/app.py": "print('v3')\n"})
    wt = await workspace.prepare(widget, "octo/widget#2", current())
    assert wt.git_dir is not None
    assert _worktree_racy(wt.path, wt.git_dir) == []
