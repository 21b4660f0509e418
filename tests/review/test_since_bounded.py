"""bot/review/since.py reads what changed since the last review from git as a stream with a cap: a
small pushed commit whose diff explodes is read only up to the cap, git is stopped there, and the
review says the diff was cut."""
from __future__ import annotations

import asyncio
import subprocess

from bot.review import since as since_module
from bot.review.since import DIFF_READ_CAP, MAX_DIFF_CHARS, since
from bot.workspace import git as git_module
from tests.review.test_since import _git, commit, tree

LINES = 500_000  # a file of short lines, every one changed: a few KiB packed, megabytes of diff


def _spy_on_reads(monkeypatch) -> list:
    """Every output the workspace's git read, as the bounded reader reported it (the real reader runs)."""
    reports, real = [], git_module.run_capped

    async def recorded(*args, **kwargs):
        reports.append(out := await real(*args, **kwargs))
        return out
    monkeypatch.setattr(git_module, "run_capped", recorded)
    return reports


def _exploding_push(repo) -> tuple[str, str]:
    _git(repo, "init", "-q", "-b", "main")
    reviewed = commit(repo, {"lines.txt": "a\n" * LINES})
    return reviewed, commit(repo, {"lines.txt": "b\n" * LINES})


def _packed_size(repo, reviewed: str, head: str) -> int:
    objects = _git(repo, "rev-list", "--objects", f"{reviewed}..{head}")
    return len(subprocess.run(["git", "pack-objects", "--stdout", "-q"], cwd=repo, input=objects.encode(),
                              capture_output=True, check=True).stdout)


def test_a_small_commit_whose_diff_explodes_is_read_only_up_to_the_cap(tmp_path, monkeypatch):
    reviewed, head = _exploding_push(tmp_path)
    assert _packed_size(tmp_path, reviewed, head) < 64 << 10  # what was pushed is small
    reports = _spy_on_reads(monkeypatch)
    asyncio.run(since(tree(tmp_path, head), reviewed))
    diff_read = [out for out in reports if out.cut]
    assert len(diff_read) == 1 and diff_read[0].read <= DIFF_READ_CAP + 1
    whole = subprocess.run(["git", "diff", reviewed, head], cwd=tmp_path, capture_output=True, check=True).stdout
    assert len(whole) > 10 * DIFF_READ_CAP  # what git would have printed


def test_a_diff_cut_at_the_cap_says_so_in_what_the_agent_reads(tmp_path):
    reviewed, head = _exploding_push(tmp_path)
    change = asyncio.run(since(tree(tmp_path, head), reviewed))
    assert change.incremental and change.files == ["lines.txt"] and change.cut
    body, _, note = change.diff.rpartition("\n")
    assert len(body) <= MAX_DIFF_CHARS
    assert note == f"… (the diff since `{reviewed[:7]}` was cut at {MAX_DIFF_CHARS:,} characters)"


def test_a_diff_within_the_cap_is_whole_and_not_said_to_be_cut(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    reviewed = commit(tmp_path, {"a.py": "a\n"})
    head = commit(tmp_path, {"a.py": "b\n"})
    change = asyncio.run(since(tree(tmp_path, head), reviewed))
    assert not change.cut and change.diff.endswith("+b\n")


def test_more_changed_names_than_the_cap_reviews_the_pull_request_whole_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(since_module, "NAMES_READ_CAP", 64)
    _git(tmp_path, "init", "-q", "-b", "main")
    reviewed = commit(tmp_path, {"a.py": "a\n"})
    head = commit(tmp_path, {f"file_{n:03}.py": "x\n" for n in range(20)})
    change = asyncio.run(since(tree(tmp_path, head), reviewed))
    assert not change.incremental
    assert change.reason == (f"more files changed since `{reviewed[:7]}` than a review since then can list "
                             f"(their names passed 64 bytes)")
