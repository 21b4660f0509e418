"""An agent CLI runs at a lower CPU priority than the bot, under either tier: a CLI that prints
without end or compiles must not take the CPU from the event loop answering other threads."""
from __future__ import annotations

import asyncio
import os
from dataclasses import replace

import pytest

from sandbox import priority
from sandbox.tier0 import Tier0Spawner


def _nice_in(stat: str) -> int:
    """The nice value in a /proc/PID/stat line (field 19; the name in parentheses may hold spaces)."""
    return int(stat.rsplit(")", 1)[1].split()[16])


def _bots_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


async def _running_tier0(config):
    return await Tier0Spawner().start(replace(config, min_tier=0), ["sleep", "30"], {})


async def test_a_tier0_cli_runs_at_a_lower_nice_value_than_the_bot(config):
    """The running CLI's nice value, read from /proc, is the bot's plus the step (at most 19)."""
    proc = await _running_tier0(config)
    try:
        with open(f"/proc/{proc.pid}/stat") as stat:
            assert _nice_in(stat.read()) == min(_bots_nice() + priority.STEP, 19)
    finally:
        await proc.kill()


async def test_a_tier0_clis_session_is_weighed_below_the_bots(config):
    """Where the kernel weighs each session as a group (autogroups), the CLI's own session, read
    from /proc, is set below the bot's: its processes' nice values alone would count only
    against each other."""
    if priority.autogroup_nice("self") is None:
        pytest.skip("this kernel has no autogroups")
    proc = await _running_tier0(config)
    try:
        assert await _autogroup_nice_once_set(proc.pid) == _lowered_autogroup()
    finally:
        await proc.kill()


def _lowered_autogroup() -> int:
    own = priority.autogroup_nice("self")
    assert own is not None
    return min(own + priority.STEP, 19)


async def _autogroup_nice_once_set(pid: int) -> int | None:
    """`pid`'s session's nice value once it is the lowered one, or as it is after 3 s (the kernel
    may ask an unprivileged bot to set it again 100 ms later)."""
    for _ in range(300):
        if priority.autogroup_nice(pid) == _lowered_autogroup():
            break
        await asyncio.sleep(0.01)
    return priority.autogroup_nice(pid)


@pytest.mark.sandbox
async def test_a_tier1_cli_runs_at_a_lower_nice_value_than_the_bot(run):
    """The command inside a tier-1 sandbox reads its own nice value from its /proc: the bot's plus
    the step, set on the sandbox's first process before it starts anything."""
    ran = await run('read -r stat < /proc/self/stat; echo "$stat"')
    assert ran.rc == 0, ran.text
    assert _nice_in(ran.out) == min(_bots_nice() + priority.STEP, 19)


@pytest.mark.sandbox
async def test_a_tier1_clis_session_is_weighed_below_the_bots(run):
    """bubblewrap gives the sandbox a session of its own, which starts at the default weight: the
    command inside reads its session's nice value from its /proc until it is the lowered one
    (it is set once the session is made), for at most 3 s."""
    if priority.autogroup_nice("self") is None:
        pytest.skip("this kernel has no autogroups")
    lowered = _lowered_autogroup()
    ran = await run(f'for i in $(seq 300); do read -r ag < /proc/self/autogroup; '
                    f'case "$ag" in *" nice {lowered}") break;; esac; sleep 0.01; done; echo "$ag"')
    assert ran.rc == 0, ran.text
    assert ran.out.strip().endswith(f" nice {lowered}"), ran.text
