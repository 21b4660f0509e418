"""A `run` command's sandbox (tier 1: the layer launcher, bubblewrap, the command) never outlives
the episode, however it ends: its call cancelled, the bridge closed under it (Ctrl-C in `bot run`,
a worker's shutdown cancelling the job) or `@bot stop`."""
from __future__ import annotations

import asyncio
import contextlib

from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.bridge.tools import sandbox_for_run
from tests.bridge.conftest import call
from tests.entry_settings import current
from tests.leftovers import left_running

COMMAND = "sleep 120; touch late"


def tier1_bridge(worktree, recorder, run_id, tmp_path, **kw) -> BridgeServer:
    policy = Admission(worktree)
    return BridgeServer(worktree, policy, recorder, run_id, scratch_root=tmp_path / "s",
                        run_sandbox=sandbox_for_run(worktree, policy, tier=1, host=current().sandbox_host), **kw)


async def started(bridge: BridgeServer) -> None:
    while not bridge._running:
        await asyncio.sleep(0.02)


async def test_a_cancelled_run_call_leaves_no_process(worktree, recorder, run_id, tmp_path):
    async with tier1_bridge(worktree, recorder, run_id, tmp_path) as bridge:
        running = asyncio.create_task(bridge.call_tool("run", {"command": COMMAND}))
        await started(bridge)
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        assert await asyncio.to_thread(left_running, str(tmp_path)) == []


async def test_closing_the_bridge_during_a_run_call_leaves_no_process(worktree, recorder, run_id, tmp_path):
    async with tier1_bridge(worktree, recorder, run_id, tmp_path) as bridge:
        running = asyncio.create_task(call(bridge, "run", command=COMMAND))
        await started(bridge)
    assert await asyncio.to_thread(left_running, str(tmp_path)) == []
    running.cancel()
    with contextlib.suppress(BaseException):
        await running


async def test_a_stop_during_a_run_call_leaves_no_process(worktree, recorder, run_id, tmp_path):
    stop = asyncio.Event()
    async with tier1_bridge(worktree, recorder, run_id, tmp_path, stop=stop) as bridge:
        running = asyncio.create_task(call(bridge, "run", command=COMMAND))
        await started(bridge)
        stop.set()
        text, _ = await asyncio.wait_for(running, 60)
    assert not text.startswith("exit code 0") and not (worktree / "late").exists()
    assert await asyncio.to_thread(left_running, str(tmp_path)) == []
