"""The per-mirror lock holds across processes (flock), not only across asyncio tasks."""
from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

from bot.config import PROJECT_ROOT
from bot.workspace import worktrees as workspace

CHILD = textwrap.dedent("""
    import asyncio, fcntl, sys
    from pathlib import Path
    from bot.workspace import worktrees as workspace

    def refused_noted(fd, operation, _flock=fcntl.flock):
        try:
            return _flock(fd, operation)
        except BlockingIOError:  # the lock is held: say so, the parent waits for it
            with open(sys.argv[2] + ".refused", "a") as refused:
                refused.write("x")
            raise

    workspace.fcntl.flock = refused_noted

    async def main():
        async with workspace.mirror_lock(Path(sys.argv[1])):
            with open(sys.argv[2], "a") as log:
                log.write("child\\n")

    asyncio.run(main())
""")


async def test_second_process_waits_for_the_mirror_lock(tmp_path):
    """Another process asking for a held mirror lock gets it only after it is released."""
    mirror, order = tmp_path / "m.git", tmp_path / "order.txt"
    async with workspace.mirror_lock(mirror):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(mirror), str(order)],
                                 cwd=str(PROJECT_ROOT))
        refused = order.with_name(order.name + ".refused")
        while len(refused.read_text() if refused.exists() else "") < 2 and child.poll() is None:
            await asyncio.sleep(0.02)  # until the child has asked for the lock and been refused twice
        with open(order, "a") as log:
            log.write("parent releases\n")
    assert child.wait(timeout=30) == 0
    assert order.read_text().splitlines() == ["parent releases", "child"]


async def test_tasks_in_one_process_take_turns(tmp_path):
    """Two tasks of one event loop never hold the same mirror's lock at once."""
    mirror, inside = tmp_path / "m.git", []

    async def hold(name: str):
        async with workspace.mirror_lock(mirror):
            inside.append(name)
            assert len(inside) == 1, inside
            await asyncio.sleep(0.05)
            inside.remove(name)

    await asyncio.gather(*(hold(f"t{n}") for n in range(5)))
