"""Mirrors and per-job worktrees with real git (bot/workspace.py)."""
from __future__ import annotations

import asyncio
import os

import pytest

from bot.workspace import worktrees as workspace
from bot.workspace.repo_config import ConfigError
from tests.entry_settings import current

from .conftest import sh_git


async def test_issue_worktree_is_at_default_branch_head(remote, widget):
    """An issue job gets a detached worktree at the head of the default branch."""
    head = remote.commit(widget, "main", {"src/app.py": "print('v2')\n"})
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    assert wt.base_sha == head and (wt.path / "src/app.py").read_text() == "print('v2')\n"
    assert wt.ref == "refs/heads/main" and wt.default_branch == "main"


async def test_default_branch_other_than_main_is_followed(remote):
    """A repository whose default branch is `trunk` is checked out at trunk."""
    head = remote.create("octo/trunky", {"a.txt": "a\n"}, branch="trunk")
    wt = await workspace.prepare("octo/trunky", "octo/trunky#3", current())
    assert (wt.base_sha, wt.default_branch) == (head, "trunk")


async def test_pull_worktree_is_at_pull_head_from_fork(remote, widget):
    """A PR job from a fork gets refs/pull/N/head, which the base repository carries."""
    head = remote.open_pull(widget, 7, "feature", {"src/app.py": "print('fork')\n"},
                            head_repo="alice/widget")
    wt = await workspace.prepare(widget, "octo/widget#7", current(), pull_number=7)
    assert wt.base_sha == head and (wt.path / "src/app.py").read_text() == "print('fork')\n"


async def test_config_comes_from_default_branch_not_pull_head(remote, widget):
    """A PR that rewrites .github/bot.yml does not change the rules it runs under."""
    remote.commit(widget, "main", {".github/bot.yml": "mode: strict\nallow_fork_push: false\n"})
    remote.open_pull(widget, 8, "evil", {".github/bot.yml": "mode: native\nallow_fork_push: true\n"})
    wt = await workspace.prepare(widget, "octo/widget#8", current(), pull_number=8)
    assert (wt.config.mode, wt.config.allow_fork_push) == ("strict", False)
    assert "native" in (wt.path / ".github/bot.yml").read_text()


async def test_invalid_config_raises_and_creates_no_worktree(remote, widget):
    """An invalid bot.yml stops the job with the key and line; no worktree is left behind."""
    remote.commit(widget, "main", {".github/bot.yml": "mode: strict\nlimits:\n  pids: lots\n"})
    with pytest.raises(ConfigError) as err:
        await workspace.prepare(widget, "octo/widget#2", current())
    assert (err.value.key, err.value.line) == ("limits.pids", 3)
    assert not workspace.worktree_path("octo/widget#2", current().data_dir).exists()


async def test_warm_mirror_fetches_new_commits(remote, widget):
    """The second job on a repository sees a commit pushed after the first job."""
    first = await workspace.prepare(widget, "octo/widget#1", current())
    await workspace.remove(first)
    newer = remote.commit(widget, "main", {"new.txt": "new\n"})
    second = await workspace.prepare(widget, "octo/widget#1", current())
    assert second.base_sha == newer and second.path == first.path


async def test_remove_deletes_files_and_git_record(remote, widget):
    """After the job the worktree directory and the mirror's record of it are gone."""
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    (wt.path / "scratch.txt").write_text("left by the agent\n")
    await workspace.remove(wt)
    assert not wt.path.exists()
    assert str(wt.path) not in sh_git("worktree", "list", cwd=wt.mirror)


async def test_leftover_worktree_of_crashed_job_is_replaced(remote, widget):
    """A worktree left by a crashed job is discarded, not reused with its stray files."""
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    (wt.path / "stray.txt").write_text("from a crashed run\n")
    again = await workspace.prepare(widget, "octo/widget#1", current())
    assert again.path == wt.path and not (again.path / "stray.txt").exists()


async def test_concurrent_jobs_get_separate_worktrees(remote, widget):
    """Two conversations on one repository at once: two worktrees, one mirror, both correct."""
    remote.open_pull(widget, 4, "four", {"four.txt": "4\n"})
    issue, pull = await asyncio.gather(
        workspace.prepare(widget, "octo/widget#3", current()),
        workspace.prepare(widget, "octo/widget#4", current(), pull_number=4))
    assert issue.path != pull.path and issue.mirror == pull.mirror
    assert (pull.path / "four.txt").exists() and not (issue.path / "four.txt").exists()


async def test_many_concurrent_fetches_leave_a_sound_mirror(remote, widget):
    """Eight jobs fetching the same mirror at once all succeed and fsck stays clean."""
    worktrees = await asyncio.gather(*(workspace.prepare(widget, f"octo/widget#{n}", current())
                                       for n in range(8)))
    assert len({wt.path for wt in worktrees}) == 8
    sh_git("fsck", "--no-progress", cwd=worktrees[0].mirror)


def test_conversation_slug_is_stable_and_safe():
    """The slug is a single path component and the same for the same thread."""
    slug = workspace.conversation_slug("octo/widget#12")
    assert slug == workspace.conversation_slug("octo/widget#12") and "/" not in slug
    assert slug != workspace.conversation_slug("octo/widget-12")


def test_mirror_path_refuses_traversal():
    """A repository name cannot point the mirror outside mirrors/."""
    with pytest.raises(ValueError):
        workspace.mirror_path("../etc", current().data_dir)


async def test_gc_removes_least_recently_used_mirror(remote, widget):
    """Past the size limit the mirror used longest ago goes; the recent one stays."""
    remote.create("octo/other", {"big.bin": "x" * 200_000})
    await workspace.remove(await workspace.prepare("octo/other", "octo/other#1", current()))
    await workspace.remove(await workspace.prepare(widget, "octo/widget#1", current()))
    os.utime(workspace.mirror_path("octo/other", current().data_dir) / workspace.LAST_USED, (1, 1))
    keep = dict(workspace._mirrors_by_last_use(current().data_dir))[workspace.mirror_path(widget, current().data_dir)]
    removed = await workspace.collect_garbage(current().data_dir, max_bytes=keep)
    assert removed == ["octo/other"] and workspace.mirror_path(widget, current().data_dir).exists()


async def test_gc_keeps_mirror_with_live_worktree(remote, widget):
    """A mirror a running job is using is never collected."""
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    assert await workspace.collect_garbage(current().data_dir, max_bytes=0) == []
    assert wt.mirror.exists()


async def test_removed_worktree_is_gone_when_the_job_ends(remote, widget):
    """`prepare` hands out a worktree and `remove` takes it away when the job ends."""
    wt = await workspace.prepare(widget, "octo/widget#5", current())
    assert (wt.path / "README.md").exists()
    await workspace.remove(wt)
    assert not wt.path.exists()


async def test_renamed_default_branch_is_followed(remote, widget):
    """After upstream renames main to trunk, the next job starts from trunk's head."""
    await workspace.remove(await workspace.prepare(widget, "octo/widget#1", current()))
    sh_git("branch", "-m", "main", "trunk", cwd=remote.path(widget))
    head = remote.commit(widget, "trunk", {"t.txt": "t\n"})
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    assert (wt.default_branch, wt.base_sha) == ("trunk", head)


async def test_removing_a_worktree_collects_mirrors_past_the_limit(remote, widget, monkeypatch):
    """The end of a job enforces BOT_MIRRORS_MAX_BYTES: an idle old mirror goes."""
    remote.create("octo/other", {"a.txt": "a\n"})
    await workspace.remove(await workspace.prepare("octo/other", "octo/other#1", current()))
    os.utime(workspace.mirror_path("octo/other", current().data_dir) / workspace.LAST_USED, (1, 1))
    monkeypatch.setenv("BOT_MIRRORS_MAX_BYTES", "1")
    wt = await workspace.prepare(widget, "octo/widget#1", current())
    await workspace.remove(wt)
    assert not workspace.mirror_path("octo/other", current().data_dir).exists()


async def test_mirror_size_is_remeasured_after_use(remote, widget):
    """The cached size of a mirror is refreshed once a job has used it again."""
    await workspace.remove(await workspace.prepare(widget, "octo/widget#1", current()))
    before = workspace._disk_size(workspace.mirror_path(widget, current().data_dir))
    remote.commit(widget, "main", {"big.bin": "y" * 300_000})
    await workspace.remove(await workspace.prepare(widget, "octo/widget#1", current()))
    assert workspace._disk_size(workspace.mirror_path(widget, current().data_dir)) > before
