"""A worktree the agent left nested a thousand folders deep: the recycling walks never recurse.

The write-back never lands more than `sandbox.bounded_tree.MAX_DEPTH` levels, but a worktree can
hold deeper folders all the same (an older write-back, a repository's own tree). Recycling it
(bot/workspace/pool.py: the scan, then a scrub or a delete) must end, keep nothing of it, and
leave the thread's next job a worktree.
"""
from __future__ import annotations

import os
from pathlib import Path

from bot.workspace import pool as worktree_pool
from bot.workspace import tree_scan
from bot.workspace import worktrees as workspace
from sandbox.bounded_tree import remove_path
from tests.entry_settings import current

DEPTH = 1000
LONG = "n" * 40  # 1000 of them make a path longer than git takes: its clean cannot remove them


def chain(top: Path, depth: int = DEPTH, name: str = "d") -> Path:
    """`depth` nested folders under `top`, made through descriptors (no path is ever that long)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    return top / name


async def test_a_worktree_a_thousand_folders_deep_is_recycled_without_them(remote, widget):
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    chain(wt.path, name=LONG)
    await workspace.remove(wt)
    assert not wt.path.exists()
    assert all(not (spare / LONG).exists() for spare in worktree_pool.spares(wt.mirror))
    again = await workspace.prepare(widget, "octo/widget#1", current())
    assert (again.path / "README.md").read_text() == "# widget\n" and not (again.path / LONG).exists()


def test_the_scan_stops_at_the_depth_bound_and_names_the_folder(tmp_path):
    top = tmp_path / "tree"
    top.mkdir()
    chain(top)
    try:
        found = tree_scan.scan(top)
    finally:
        remove_path(top)  # pytest's own clean-up of its temp folders would recurse
    assert not found.clean
    assert len(found.too_deep) == 1 and found.too_deep[0].count("/") + 1 == tree_scan.MAX_DEPTH
