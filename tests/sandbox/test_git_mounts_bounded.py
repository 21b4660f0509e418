"""The sandbox reads the worktree's `.git` pointer (agent-writable) up to a pointer's size, never whole
(sandbox/tier1.py:git_mounts)."""
from __future__ import annotations

from sandbox import tier1
from sandbox.tier1 import GIT_POINTER_CAP, git_mounts


def test_a_git_file_grown_huge_is_read_only_up_to_a_pointer_and_binds_nothing(tmp_path, monkeypatch):
    reads, real = [], tier1.read_capped

    def recorded(*args, **kwargs):
        reads.append(found := real(*args, **kwargs))
        return found
    monkeypatch.setattr(tier1, "read_capped", recorded)
    (tmp_path / ".git").write_bytes(b"gitdir: " + b"x" * (8 << 20))
    assert git_mounts(tmp_path, "/work") == []
    assert [(len(found.data), found.cut) for found in reads] == [(GIT_POINTER_CAP, True)]


def test_a_git_file_that_is_no_genuine_pointer_binds_nothing(tmp_path):
    (tmp_path / ".git").write_text("gitdir: /etc\n")
    assert git_mounts(tmp_path, "/work") == []
