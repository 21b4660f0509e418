"""Removing a tree someone else wrote (sandbox/bounded_tree.py): any depth, no recursion, links
never followed, never more than OPEN_FOLDERS descriptors held."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from sandbox import bounded_tree
from tests.workspace.test_deep_trees import chain


def test_a_chain_twelve_hundred_folders_deep_is_removed(tmp_path):
    (tmp_path / "top").mkdir()
    chain(tmp_path / "top", depth=1200)
    bounded_tree.remove_path(tmp_path / "top")
    assert not (tmp_path / "top").exists()


def test_a_deep_removal_holds_a_bounded_number_of_descriptors(tmp_path):
    """Under a descriptor limit far below the depth, the removal still ends (in a child process:
    the limit is the process's own, never the host's)."""
    (tmp_path / "top").mkdir()
    chain(tmp_path / "top", depth=400)
    limit = bounded_tree.OPEN_FOLDERS + 32
    code = ("import resource, sys; from sandbox.bounded_tree import remove_path; "
            f"resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, {limit})); remove_path(sys.argv[1])")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "top")], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / "top").exists()
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] > limit  # the test's own limit is untouched


def test_a_read_only_folder_is_removed_with_what_it_holds(tmp_path):
    top = tmp_path / "top"
    (top / "ro").mkdir(parents=True)
    (top / "ro" / "f").write_text("x")
    (top / "ro").chmod(0o500)
    bounded_tree.remove_path(top)
    assert not top.exists()


def test_a_link_in_the_tree_is_removed_and_what_it_names_is_kept(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    top = tmp_path / "top"
    top.mkdir()
    os.symlink(outside, top / "link")
    bounded_tree.remove_path(top)
    assert not top.exists() and (outside / "keep.txt").read_text() == "keep"


def test_removing_a_link_removes_the_link_only(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, tmp_path / "link")
    bounded_tree.remove_path(tmp_path / "link")
    assert not (tmp_path / "link").is_symlink() and outside.is_dir()
