"""Each run sees the worktree as it is when the run starts, whatever the bot changed there since the
last run: its overlay is mounted fresh per run, never kept across runs (sandbox/layers.py).

An overlay kept mounted while the host folder under it changes is undefined (the kernel's
Documentation/filesystems/overlayfs.rst, "Changes to underlying filesystems"), and on this kernel it
shows: a name looked up before the change keeps its old file or its absence. Between two runs the
bot does change the worktree (the bridge's save_file renames a new file over the name, the bot's git
checks files out, a run's write-back applies its changes), so a layer kept for speed (a warm
overlay would save a `git status` on 5,200 files about 20 ms, and each run's unmount about 10 ms:
`python -m bench bridge` prints both) must keep these.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.bridge.admission import Admission
from bot.bridge.tools import save_file
from sandbox.base import Limits

pytestmark = pytest.mark.sandbox


@pytest.fixture
def worktree(config) -> Path:
    top = Path(config.workdir)
    (top / "src").mkdir()
    (top / "src" / "app.py").write_text("version = 1\n")
    (top / "old").mkdir()
    (top / "old" / "left.txt").write_text("old folder\n")
    return top


@pytest.fixture
def writable(run):
    async def _run(script: str):
        ran = await run(script, writable=True, limits=Limits(timeout_s=60))
        assert ran.rc == 0, ran.text
        return ran.out

    return _run


async def test_a_file_the_bridge_rewrites_between_runs_reads_new_in_the_next_run(worktree, writable):
    assert await writable("cat src/app.py") == "version = 1\n"
    save_file(Admission(worktree), {"path": "src/app.py", "content": "version = 2\n"})
    assert await writable("cat src/app.py") == "version = 2\n"


async def test_a_file_the_bot_adds_after_a_run_looked_for_it_is_found_by_the_next_run(worktree, writable):
    assert await writable("cat src/added.py 2>/dev/null || echo absent") == "absent\n"
    (worktree / "src" / "added.py").write_text("added = True\n")
    assert await writable("cat src/added.py 2>/dev/null || echo absent") == "added = True\n"


async def test_a_file_the_bot_deletes_between_runs_is_gone_in_the_next_run(worktree, writable):
    assert await writable("cat src/app.py") == "version = 1\n"
    (worktree / "src" / "app.py").unlink()
    assert await writable("cat src/app.py 2>/dev/null || echo absent") == "absent\n"


async def test_a_folder_the_bot_removes_between_runs_is_gone_in_the_next_run(worktree, writable):
    assert await writable("cat old/left.txt") == "old folder\n"
    shutil.rmtree(worktree / "old")
    assert await writable("test -e old && echo present || echo absent") == "absent\n"


async def test_a_change_a_run_writes_back_is_seen_by_the_next_run(worktree, writable):
    assert await writable("cat src/app.py && echo version = 3 > src/app.py") == "version = 1\n"
    assert (worktree / "src" / "app.py").read_text() == "version = 3\n"
    assert await writable("cat src/app.py") == "version = 3\n"
