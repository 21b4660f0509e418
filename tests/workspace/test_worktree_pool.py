"""Recycled checkouts (bot/worktree_pool.py): fast, and nothing of one job survives into the next."""
from __future__ import annotations

import os
from pathlib import Path

from bot.workspace import pool as worktree_pool
from bot.workspace import worktrees as workspace
from sandbox.bounded_tree import MAX_DEPTH
from tests.entry_settings import current

from .conftest import sh_git


async def finished_job(widget: str, conversation: str, mess: bool = True) -> workspace.Worktree:
    """A job that ran and left the worktree dirty in every way an agent can."""
    wt = await workspace.prepare(widget, conversation, current())
    if mess:
        (wt.path / "README.md").write_text("edited by the agent\n")
        (wt.path / "untracked.txt").write_text("new\n")
        (wt.path / ".gitignore").write_text("*.log\n")
        (wt.path / "build.log").write_text("ignored output\n")
        (wt.path / "src" / "app.py").unlink()
    await workspace.remove(wt)
    return wt


async def test_finished_worktree_is_parked_as_spare(remote, widget):
    """After a job the checkout is kept as a spare, and the conversation path is gone."""
    wt = await finished_job(widget, "octo/widget#1")
    assert not wt.path.exists() and len(worktree_pool.spares(wt.mirror)) == 1


async def test_next_job_reuses_spare_at_its_own_commit(remote, widget):
    """A job on another conversation takes the spare and sees exactly its commit, no leftovers."""
    first = await finished_job(widget, "octo/widget#1")
    newer = remote.commit(widget, "main", {"src/app.py": "print('v3')\n"})
    wt = await workspace.prepare(widget, "octo/widget#2", current())
    assert worktree_pool.spares(first.mirror) == []
    assert wt.base_sha == newer and (wt.path / "src/app.py").read_text() == "print('v3')\n"
    assert (wt.path / "README.md").read_text() == "# widget\n"
    assert not (wt.path / "untracked.txt").exists() and not (wt.path / "build.log").exists()
    assert sh_git("status", "--porcelain", "--ignored", cwd=wt.path) == ""


async def test_reused_spare_is_a_proper_worktree_at_the_new_path(remote, widget):
    """git inside the moved checkout resolves to the mirror and the new path."""
    await finished_job(widget, "octo/widget#1", mess=False)
    wt = await workspace.prepare(widget, "octo/widget#2", current())
    assert sh_git("rev-parse", "--show-toplevel", cwd=wt.path) == str(wt.path)
    assert str(wt.path) in sh_git("worktree", "list", cwd=wt.mirror)


async def test_tampered_git_file_gets_the_checkout_deleted(remote, widget):
    """A worktree whose .git the agent replaced is not recycled; the next job still works."""
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    (wt.path / ".git").unlink()
    (wt.path / ".git").mkdir()
    await workspace.remove(wt)
    assert worktree_pool.spares(wt.mirror) == [] and not wt.path.exists()
    again = await workspace.prepare(widget, "octo/widget#2", current())
    assert (again.path / "README.md").exists()


async def test_spare_pool_is_capped(remote, widget, monkeypatch):
    """No more spares are kept than BOT_SPARE_WORKTREES."""
    monkeypatch.setenv("BOT_SPARE_WORKTREES", "1")
    one = await workspace.prepare(widget, "octo/widget#1", current())
    two = await workspace.prepare(widget, "octo/widget#2", current())
    await workspace.remove(one)
    await workspace.remove(two)
    assert len(worktree_pool.spares(one.mirror)) == 1 and not two.path.exists()


async def test_gc_deletes_spares_with_their_mirror(remote, widget):
    """Collecting a mirror also removes its parked checkouts."""
    wt = await finished_job(widget, "octo/widget#1")
    assert await workspace.collect_garbage(current().data_dir, max_bytes=0) == ["octo/widget"]
    assert not worktree_pool.spare_root(wt.mirror).exists() and not wt.mirror.exists()


async def test_spare_already_at_the_commit_is_taken_without_a_checkout(remote, widget, monkeypatch):
    """Nothing moved upstream: the parked checkout is used as it is, no git checkout runs."""
    await finished_job(widget, "octo/widget#1")
    ran = []
    real = worktree_pool.run_git

    async def recording(*args, **kwargs):
        ran.append(args[0])
        return await real(*args, **kwargs)

    monkeypatch.setattr(worktree_pool, "run_git", recording)
    wt = await workspace.prepare(widget, "octo/widget#2", current())
    assert "worktree" in ran and "checkout" not in ran
    assert sh_git("status", "--porcelain", "--ignored", cwd=wt.path) == ""
    assert (wt.path / "README.md").read_text() == "# widget\n"


def tree_of(top: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every entry under `top` but its `.git`: kind, executable bit, contents or link target."""
    found = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(top))
            if rel == ".git":
                continue
            if path.is_symlink():
                found[rel] = ("link", 0, os.readlink(path).encode())
            elif path.is_dir():
                found[rel] = ("dir", 0, b"")
            else:
                found[rel] = ("file", path.stat().st_mode & 0o111, path.read_bytes())
        dirs[:] = [name for name in dirs if not (folder == str(top) and name == ".git")]
    return found


def fresh_checkout(remote, widget: str, sha: str, dest: Path) -> Path:
    sh_git("clone", "--quiet", "--no-checkout", str(remote.path(widget)), str(dest))
    sh_git("checkout", "--quiet", "--detach", sha, cwd=dest)
    return dest


def leave_everything_behind(top: Path) -> None:
    """What an agent can leave in a worktree, one of each kind."""
    (top / "README.md").write_text("modified\n")
    (top / "src" / "app.py").unlink()
    (top / "src" / "app.py").mkdir()  # a tracked file turned folder
    (top / "src" / "app.py" / "inside.txt").write_text("x\n")
    (top / "untracked.txt").write_text("new\n")
    (top / ".gitignore").write_text("*.log\nbuild/\n")
    (top / "build").mkdir()
    (top / "build" / "out.log").write_text("ignored\n")
    (top / "link-out").symlink_to("/etc/passwd")
    (top / "link-dir").symlink_to("/")
    os.chmod(top / ".github" / "workflows" / "ci.yml", 0o755)
    (top / "empty-folder").mkdir()
    deep = top.joinpath(*["deep"] * 60)
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("deep\n")


async def test_a_recycled_worktree_is_the_same_tree_as_a_fresh_checkout(remote, widget, tmp_path):
    """Modified, deleted, retyped, untracked, ignored, linked, re-moded, empty and deep entries
    left by one job: the next job's recycled checkout is entry for entry a fresh checkout."""
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    leave_everything_behind(wt.path)
    await workspace.remove(wt)
    assert len(worktree_pool.spares(wt.mirror)) == 1
    newer = remote.commit(widget, "main", {"src/lib.py": "x = 2\n"})
    again = await workspace.prepare(widget, "octo/widget#2", current())
    assert again.base_sha == newer and worktree_pool.spares(wt.mirror) == []
    assert tree_of(again.path) == tree_of(fresh_checkout(remote, widget, newer, tmp_path / "fresh"))


async def test_a_worktree_too_deep_to_recycle_leaves_the_next_job_a_fresh_checkout(remote, widget, tmp_path):
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    leave_everything_behind(wt.path)
    wt.path.joinpath(*["d"] * (MAX_DEPTH + 2)).mkdir(parents=True)
    await workspace.remove(wt)
    assert worktree_pool.spares(wt.mirror) == []
    again = await workspace.prepare(widget, "octo/widget#2", current())
    assert tree_of(again.path) == tree_of(fresh_checkout(remote, widget, again.base_sha, tmp_path / "fresh"))
