"""A scheduled run's session cache entry holds a part per automation's issue (bot/cli/action_session.py):
the entry is made a real folder before any part is read through it, and before it is saved every
name but this run's parts is removed, never following a link. The entry is written by any workflow
run of the repository, so what it holds besides the parts is hostile."""
from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.cli import action_session

KINDS = ("file", "folder", "link-out", "link-part", "fifo", "deep")
NAMES = st.one_of(st.integers(1, 12).map(str), st.sampled_from(["sessions.json", "homes", "-1", "05", "x y", ".git"]))


def _outside(root: Path) -> Path:
    outside = root / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "keep.txt").write_text("not the cache's")
    return outside


def _make(folder: Path, name: str, kind: str, outside: Path) -> None:
    path = folder / name
    if kind == "file":
        path.write_text("x")
    elif kind == "folder":
        (path / "homes").mkdir(parents=True)
        (path / "sessions.json").write_text("{}")
    elif kind == "link-out":
        path.symlink_to(outside)
    elif kind == "link-part":
        path.symlink_to(folder / "1")
    elif kind == "fifo":
        os.mkfifo(path)
    else:  # a folder deeper than any stack, holding a link out
        deep = path
        for _ in range(60):
            deep = deep / "d"
        deep.mkdir(parents=True)
        (deep / "out").symlink_to(outside)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(NAMES, st.sampled_from(KINDS), max_size=8), st.sets(st.integers(1, 12), max_size=4),
       st.booleans())
def test_only_this_runs_parts_are_left_and_nothing_outside_is_touched(tmp_path_factory, found, numbers, cut_short):
    """`cut_short`: the run stopped before it knew all its threads, so any part's name stays too."""
    root = tmp_path_factory.mktemp("entry")
    folder, outside = root / "bot-session", _outside(root)
    folder.mkdir()
    for name, kind in found.items():
        _make(folder, name, kind, outside)
    removed = action_session.keep_only(folder, numbers, any_part=cut_short)
    left = set(os.listdir(folder))
    parts = {name for name in found if cut_short and name.isdigit() and name == str(int(name))}
    assert left == set(found) & {str(n) for n in numbers} | parts
    assert set(removed) == set(found) - left
    assert sorted(os.listdir(outside)) == ["keep.txt"] and (outside / "keep.txt").read_text() == "not the cache's"


def test_an_entry_that_is_a_link_is_removed_and_made_a_real_folder_the_target_untouched(tmp_path):
    outside, folder = _outside(tmp_path), tmp_path / "bot-session"
    folder.symlink_to(outside)
    assert action_session.threads_folder(folder) is True
    assert folder.is_dir() and not folder.is_symlink() and os.listdir(folder) == []
    assert os.listdir(outside) == ["keep.txt"]


def test_an_entry_that_is_a_file_is_replaced_by_a_folder(tmp_path):
    folder = tmp_path / "bot-session"
    folder.write_text("not a folder")
    assert action_session.threads_folder(folder) is True and folder.is_dir()


def test_a_real_entry_folder_is_kept_with_its_parts(tmp_path):
    folder = tmp_path / "bot-session"
    (folder / "5").mkdir(parents=True)
    assert action_session.threads_folder(folder) is False and os.listdir(folder) == ["5"]


def test_no_entry_is_made_an_empty_folder(tmp_path):
    folder = tmp_path / "bot-session"
    assert action_session.threads_folder(folder) is False and folder.is_dir()


def test_a_threads_part_is_named_by_its_issue_number_alone(tmp_path):
    assert action_session.thread_part(tmp_path, 7) == tmp_path / "7"
