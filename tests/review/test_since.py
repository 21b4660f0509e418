"""bot/review/since.py: what changed since the commit last reviewed, and when a review falls back
to the whole pull request."""
from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from types import SimpleNamespace

from bot.review.since import since, touched
from bot.workspace.git import pinned_env


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str = "c") -> str:
    for name, text in files.items():
        (repo / name).write_text(text)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", message)
    return _git(repo, "rev-parse", "HEAD")


def tree(repo: Path, head: str) -> SimpleNamespace:
    git_dir = repo / ".git"
    return SimpleNamespace(base_sha=head, admin_dir=git_dir, repo_env=lambda: pinned_env(git_dir))


def test_a_review_after_a_push_covers_only_the_files_changed_since(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    first = commit(tmp_path, {"a.py": "a\n", "b.py": "b\n", "c.py": "c\n"})
    head = commit(tmp_path, {"b.py": "b2\n"})
    change = asyncio.run(since(tree(tmp_path, head), first))
    assert change.incremental and change.base == first and change.files == ["b.py"]
    assert "+b2" in change.diff


def test_a_force_push_that_dropped_the_reviewed_commit_falls_back_to_a_whole_review(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    base = commit(tmp_path, {"a.py": "a\n"})
    reviewed = commit(tmp_path, {"a.py": "a2\n"})
    _git(tmp_path, "reset", "-q", "--hard", base)
    head = commit(tmp_path, {"a.py": "a3\n"}, "rewritten")
    change = asyncio.run(since(tree(tmp_path, head), reviewed))
    assert not change.incremental
    assert change.reason == (f"the commit reviewed last, `{reviewed[:7]}`, is no longer in the pull request's "
                             f"history (a force-push rewrote it)")


def test_a_reviewed_commit_missing_from_the_store_falls_back_and_says_it_is_gone(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    head = commit(tmp_path, {"a.py": "a\n"})
    change = asyncio.run(since(tree(tmp_path, head), "1" * 40))
    assert not change.incremental and "is gone (a force-push dropped it)" in change.reason


def test_the_head_reviewed_already_is_reviewed_whole_again(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    head = commit(tmp_path, {"a.py": "a\n"})
    change = asyncio.run(since(tree(tmp_path, head), head))
    assert not change.incremental and "was reviewed already" in change.reason


def test_a_file_is_touched_only_when_it_differs_from_that_commit(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    first = commit(tmp_path, {"a.py": "a\n", "b.py": "b\n"})
    head = commit(tmp_path, {"b.py": "b2\n"})
    worktree = tree(tmp_path, head)
    assert asyncio.run(touched(worktree, first, "b.py")) and not asyncio.run(touched(worktree, first, "a.py"))
    assert not asyncio.run(touched(worktree, first, ":(glob)*"))
