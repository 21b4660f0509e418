"""The ownership hand-over is done once per worktree, not before every start (bot as root).

A start walks the worktree only when the bot may have written there since the last walk (its
git index or the `.git` entry changed); the bridge hands over what it writes itself. These are
the guarantees a start that skips the walk could lose: what the bot wrote is still the
sandbox's to write (and still covered in strict mode), a link to a root-owned file is never
handed over, an unchanged file keeps its ctime, and the bot's index reads clean inside.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.bridge.admission import Admission
from bot.bridge.tools import save_file
from sandbox.base import Limits
from tests.conftest import is_root

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(not is_root(), reason="an unprivileged bot and its sandbox share one uid")]
GIT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "bot", "GIT_AUTHOR_EMAIL": "bot@example.com",
           "GIT_COMMITTER_NAME": "bot", "GIT_COMMITTER_EMAIL": "bot@example.com"}


def _git(worktree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(worktree), *args], env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def _commit(worktree: Path, files: dict[str, str]) -> None:
    """The bot's own git writing files into the worktree, as a checkout does."""
    for name, text in files.items():
        (worktree / name).parent.mkdir(parents=True, exist_ok=True)
        (worktree / name).write_text(text)
    _git(worktree, "add", "--", *files)
    _git(worktree, "commit", "-q", "-m", "bot")


@pytest.fixture
def repo(config) -> Path:
    worktree = Path(config.workdir)
    _git(worktree, "init", "-q", "-b", "main")
    _commit(worktree, {"README.md": "hello\n", "src/a.py": "a = 1\n"})
    return worktree


@pytest.fixture
def writable(run):
    async def _run(script: str, **changes):
        return await run(script, writable=True, limits=Limits(timeout_s=60), **changes)

    return _run


async def test_a_file_the_bridge_creates_after_the_hand_over_is_the_next_runs_to_write(repo, writable):
    assert (await writable("true")).rc == 0
    save_file(Admission(repo), {"path": "new/deeper/made.txt", "content": "by the bridge\n"})
    ran = await writable("echo more >> new/deeper/made.txt && touch new/deeper/beside.txt")
    assert ran.rc == 0, ran.err
    assert (repo / "new/deeper/made.txt").read_text() == "by the bridge\nmore\n"
    assert (repo / "new/deeper/beside.txt").exists()


async def test_a_file_the_bots_git_writes_after_the_hand_over_is_the_next_runs_to_write(repo, writable):
    assert (await writable("true")).rc == 0
    _commit(repo, {"lib/added.py": "b = 2\n"})
    ran = await writable("echo c = 3 >> lib/added.py && touch lib/beside.py")
    assert ran.rc == 0, ran.err
    assert (repo / "lib/added.py").read_text() == "b = 2\nc = 3\n"


async def test_a_loader_file_the_bots_git_writes_after_the_hand_over_stays_covered_in_strict_mode(repo, writable):
    assert (await writable("true", masked=(".claude",))).rc == 0
    _commit(repo, {".claude/settings.json": '{"bot": true}\n'})
    ran = await writable("echo '{}' > .claude/settings.json", masked=(".claude",))
    assert ran.rc != 0
    assert (repo / ".claude/settings.json").read_text() == '{"bot": true}\n'


async def test_a_link_to_a_root_owned_file_is_not_handed_over_when_the_worktree_is_walked_again(repo, writable, tmp_path):
    assert (await writable("true")).rc == 0
    secret = tmp_path / "root-only"
    secret.write_text("root's\n")
    os.chmod(secret, 0o600)
    os.link(secret, repo / "planted")
    _commit(repo, {"lib/added.py": "b = 2\n"})  # the bot wrote: the next start walks
    ran = await writable("stat -c %u planted; cat planted")
    assert ran.out.splitlines()[0] == "0"
    assert "root's" not in ran.out
    assert secret.stat().st_uid == 0


async def test_a_second_run_leaves_the_ctime_of_unchanged_files_alone(repo, writable):
    assert (await writable("true")).rc == 0
    before = {name: os.stat(repo / name).st_ctime_ns for name in ("README.md", "src", "src/a.py", ".")}
    assert (await writable("true")).rc == 0
    assert {name: os.stat(repo / name).st_ctime_ns for name in before} == before


async def test_an_entry_that_appears_behind_the_bots_back_is_not_handed_over(repo, writable):
    """The skip is decided from the bot's own record, never from what is in the worktree: a
    root-owned file that no bot write announced stays root's (the sandbox gains nothing)."""
    assert (await writable("true")).rc == 0
    (repo / "unannounced.txt").write_text("root's\n")
    ran = await writable("stat -c %u unannounced.txt")
    assert ran.out.strip() == "0"


async def test_the_bots_index_reads_clean_inside_a_run_after_the_hand_over(repo, writable):
    """`git diff-files` compares the index's stat data without reading content: the hand-over
    changed owners and ctimes, and git inside must not take that for a change (nor re-read
    every file to find out, on every `git status`)."""
    ran = await writable("git diff-files --name-only")
    assert ran.rc == 0, ran.err
    assert ran.out == ""


async def test_a_second_start_still_names_the_folders_too_deep(repo, writable, config):
    from sandbox.bounded_tree import MAX_DEPTH, remove_path
    from tests.workspace.test_deep_trees import chain

    chain(repo)
    try:
        first, second = await writable("true"), await writable("true")
        expected = [str(repo.joinpath(*["d"] * MAX_DEPTH))]
        assert first.outcome["hand_over_too_deep"] == second.outcome["hand_over_too_deep"] == expected
    finally:
        remove_path(repo / "d")


def test_the_worktree_is_handed_over_to_the_sandbox_user_by_the_bridge_write(repo):
    from sandbox.identity import SANDBOX_ID

    save_file(Admission(repo), {"path": "fresh/file.txt", "content": "x"})
    assert {os.stat(repo / p).st_uid for p in ("fresh", "fresh/file.txt")} == {SANDBOX_ID}

