"""A hostile agent racing or booby-trapping the bridge's file tools, and secrets in what the record keeps."""
from __future__ import annotations

import os

import pytest

from bot.bridge import tools
from bot.bridge.admission import Admission, Refusal
from tests.entry_settings import current


@pytest.fixture
def outside(tmp_path):
    place = tmp_path / "host-dir"
    place.mkdir()
    (place / "secret.key").write_text("host secret\n")
    return place


def test_write_refuses_a_parent_swapped_for_a_symlink_after_admission(worktree, outside):
    """A directory admitted, then replaced by a symlink to a host dir, is not written through."""
    policy = Admission(worktree)
    (worktree / "sub").mkdir()
    relative = policy.relative(policy.admit_path("sub/planted.txt"))
    (worktree / "sub").rmdir()
    (worktree / "sub").symlink_to(outside)  # what a concurrent `run` does between check and write
    with pytest.raises(Refusal):
        tools.write_beneath(worktree, relative, b"pwned")
    assert not (outside / "planted.txt").exists()


def test_delete_refuses_a_parent_swapped_for_a_symlink_after_admission(worktree, outside):
    """A delete whose parent became a symlink after admission never removes a host file."""
    policy = Admission(worktree)
    (worktree / "sub").mkdir()
    (worktree / "sub" / "secret.key").write_text("x")
    relative = policy.relative(policy.admit_path("sub/secret.key"))
    (worktree / "sub" / "secret.key").unlink()
    (worktree / "sub").rmdir()
    (worktree / "sub").symlink_to(outside)
    with pytest.raises(Refusal):
        tools.unlink_beneath(worktree, relative)
    assert (outside / "secret.key").exists()


def test_save_file_refuses_a_fifo_planted_by_run(worktree):
    """A FIFO planted at the path is refused, never opened as a file (it could block the bot)."""
    fifo = worktree / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so the unfixed write would not hang
    try:
        with pytest.raises(Refusal):
            tools.save_file(Admission(worktree), {"path": "pipe", "content": "data"})
        assert os.read(reader, 100) == b""
    finally:
        os.close(reader)


async def test_parallel_run_calls_never_overlap(worktree, recorder, run_id, tmp_path):
    """Run calls sent in parallel are served one at a time, never as many sandboxes at once."""
    import asyncio

    from bot.bridge.server import BridgeServer
    from bot.bridge.tools import sandbox_for_run
    from tests.bridge.conftest import call

    policy = Admission(worktree)
    probe = "mkdir held 2>/dev/null || echo OVERLAP; sleep 0.3; rmdir held"
    async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=tmp_path / "scratch",
                            run_sandbox=sandbox_for_run(worktree, policy, tier=0, host=current().sandbox_host)) as bridge:
        results = await asyncio.gather(*(call(bridge, "run", command=probe) for _ in range(3)))
    assert all(text.startswith("exit code 0") and "OVERLAP" not in text for text, _ in results)


def test_git_dir_in_another_case_is_refused(worktree):
    """`.GIT/` is git metadata on case-insensitive checkouts (macOS, Windows); it is refused too."""
    with pytest.raises(Refusal) as refused:
        Admission(worktree).admit_path("vendor/.Git/hooks/post-checkout")
    assert refused.value.code == "git_dir"


async def test_tool_name_carrying_a_secret_is_redacted_in_the_record(bridge, recorder, run_id):
    """An unknown tool name is the agent's text: a secret put in it never reaches the database."""
    from tests.bridge.conftest import call
    await call(bridge, "sk-test-SECRET-value-123", path="x")
    rows = recorder.events(run_id)
    assert rows and all("sk-test-SECRET-value-123" not in str(row) for row in rows)


def test_run_columns_the_cli_reported_are_redacted(recorder, run_id):
    """A session id or version string the CLI printed cannot carry a secret into the runs table."""
    recorder.update_run(run_id, session_id="sess-sk-test-SECRET-value-123", agent_version="1.0")
    assert "sk-test-SECRET-value-123" not in str(recorder.run(run_id))
