"""Run cgroups made ahead (sandbox/cgroup_pool.py): each handed out once, only while provably unused
and limited as asked, and a run started from one capped like any other."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox import cgroup_pool, limits
from sandbox.base import Host, Limits
from sandbox.cgroup_pool import CgroupPool
from sandbox.cgroup_set import CgroupSet
from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox

MEMORY, PIDS = 96 << 20, 48


@pytest.fixture
def host() -> Host:
    return current().sandbox_host


@pytest.fixture
def pool(host):
    made = CgroupPool()
    yield made
    made.drain()


def _ready(pool: CgroupPool) -> list[CgroupSet]:
    return [groups for ready in pool._ready.values() for _, groups in ready]


def _taken(pool: CgroupPool, host: Host) -> CgroupSet:
    return pool.take(MEMORY, PIDS, host)


def test_a_ready_set_is_handed_out_once_and_each_run_gets_its_own(pool, host):
    pool.refill(MEMORY, PIDS, host)
    ready = _ready(pool)
    taken = [_taken(pool, host) for _ in range(3)]
    try:
        assert len(ready) == 2 and pool.handed_out == 2
        assert [g.memory for g in taken[:2]] == [g.memory for g in ready]
        assert len({g.memory for g in taken} | {g.pids for g in taken}) == 6  # the third made for itself
    finally:
        for groups in taken:
            groups.remove()


def test_a_set_given_out_is_limited_as_asked(pool, host):
    pool.refill(MEMORY, PIDS, host)
    groups = _taken(pool, host)
    try:
        memory_file = "memory.max" if groups.version == 2 else "memory.limit_in_bytes"
        assert (groups.memory / memory_file).read_text().strip() == str(MEMORY)
        assert (groups.pids / "pids.max").read_text().strip() == str(PIDS)
    finally:
        groups.remove()


def test_sets_made_for_other_caps_are_never_given_out(pool, host):
    pool.refill(MEMORY, PIDS, host)
    groups = pool.take(MEMORY * 2, PIDS + 1, host)
    try:
        assert pool.handed_out == 0 and groups.memory not in {g.memory for g in _ready(pool)}
        assert (groups.pids / "pids.max").read_text().strip() == str(PIDS + 1)
    finally:
        groups.remove()


def _first_ready(pool: CgroupPool, host: Host) -> CgroupSet:
    pool.refill(MEMORY, PIDS, host)
    return _ready(pool)[0]


def _take_skipping(pool: CgroupPool, host: Host, spoiled: CgroupSet) -> None:
    """The spoiled set is never handed out, and the next refill removes it."""
    groups = _taken(pool, host)
    try:
        assert groups.memory != spoiled.memory and pool.handed_out == 1
    finally:
        groups.remove()
    pool.refill(MEMORY, PIDS, host)
    assert spoiled.memory not in {g.memory for g in _ready(pool)}


def test_a_set_with_a_task_in_it_is_never_handed_out(pool, host):
    spoiled = _first_ready(pool, host)
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        (spoiled.pids / "cgroup.procs").write_text(str(sleeper.pid))
        groups = _taken(pool, host)
        try:
            assert groups.memory != spoiled.memory and pool.handed_out == 1
        finally:
            groups.remove()
    finally:
        sleeper.kill()
        sleeper.wait()
    spoiled.remove()


def test_a_set_once_charged_memory_is_never_handed_out(pool, host):
    """A task that joined, used memory and left leaves the set empty but not unused."""
    spoiled = _first_ready(pool, host)
    script = "import sys; open(sys.argv[1], 'w').write('0'); b = bytearray(8 << 20)"
    subprocess.run([sys.executable, "-c", script, str(spoiled.memory / "cgroup.procs")], check=True)
    assert (spoiled.memory / "cgroup.procs").read_text() == ""
    _take_skipping(pool, host, spoiled)


def test_a_set_with_a_folder_gone_is_never_handed_out(pool, host):
    spoiled = _first_ready(pool, host)
    spoiled.pids.rmdir()
    _take_skipping(pool, host, spoiled)


def test_a_set_whose_limit_was_changed_is_never_handed_out(pool, host):
    spoiled = _first_ready(pool, host)
    (spoiled.pids / "pids.max").write_text(str(PIDS * 10))
    _take_skipping(pool, host, spoiled)


def test_a_set_older_than_any_sweep_allows_is_never_handed_out(host):
    pool = CgroupPool(max_age_s=0.0)
    try:
        pool.refill(MEMORY, PIDS, host)
        groups = _taken(pool, host)
        groups.remove()
        assert pool.handed_out == 0
    finally:
        pool.drain()
    assert cgroup_pool.MAX_AGE_S < limits.STALE_AFTER_S / 2


def test_drain_removes_every_ready_set(pool, host):
    pool.refill(MEMORY, PIDS, host)
    ready = _ready(pool)
    pool.drain()
    assert ready and not any(folder.exists() for groups in ready for folder in groups.dirs)


def test_without_a_subtree_nothing_is_pooled_and_the_take_refuses(tmp_path):
    empty = Host(cgroup_root=tmp_path)
    pool = CgroupPool()
    pool.refill(MEMORY, PIDS, empty)
    assert _ready(pool) == []
    with pytest.raises(limits.CgroupUnavailable):
        pool.take(MEMORY, PIDS, empty)


async def _started_from_the_pool(config, script: str, caps: Limits) -> tuple[object, int]:
    """A sandbox started once the run before it (same caps) refilled the pool."""
    cfg = replace(config, limits=caps)
    spawner = Tier1Spawner(host=current().sandbox_host)
    first = await spawner.start(cfg, ["true"], {})
    await asyncio.gather(first.stdout.read(), first.stderr.read())
    await first.wait()
    await first._cleanup  # the refill runs in the run's clean-up
    before = cgroup_pool.POOL.handed_out
    proc = await spawner.start(cfg, ["sh", "-c", script], {})
    return proc, cgroup_pool.POOL.handed_out - before


async def test_a_run_from_the_pool_is_in_its_cgroups_with_the_caps(config):
    proc, handed = await _started_from_the_pool(config, "sleep 20", Limits(memory_bytes=80 << 20, pids=24,
                                                                            timeout_s=30))
    try:
        groups = proc._groups
        assert handed == 1
        assert (groups.memory / "memory.limit_in_bytes").read_text().strip() == str(80 << 20)
        assert (groups.pids / "pids.max").read_text().strip() == "24"
        assert all((folder / "cgroup.procs").read_text().split() for folder in (groups.memory, groups.pids))
    finally:
        await proc.kill()


async def test_a_run_from_the_pool_stops_at_its_pids_cap(config):
    fork = "i=0; while [ $i -lt 60 ]; do sleep 20 & i=$((i+1)); done 2>/dev/null; echo spawned"
    proc, handed = await _started_from_the_pool(config, fork, Limits(pids=16, timeout_s=30))
    await asyncio.gather(proc.stdout.read(), proc.stderr.read())
    await proc.kill()
    assert handed == 1 and proc.outcome()["pids_max_hit"] is True


async def test_a_run_from_the_pool_is_oom_killed_past_its_memory_cap(config):
    eat = "python3 -c 'b = b\"x\" * (512 << 20); print(\"survived\")'"
    proc, handed = await _started_from_the_pool(config, eat, Limits(memory_bytes=96 << 20, timeout_s=30))
    out, _ = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
    await proc.wait()
    assert handed == 1 and b"survived" not in out and proc.outcome()["oom_killed"] is True


def _fake_v1(root: Path) -> Host:
    """A directory laid out like a v1 cgroup mount (no v2 controllers), as tests/sandbox/test_limits.py does."""
    for controller in ("memory", "pids"):
        (root / controller).mkdir(parents=True)
        (root / controller / "cgroup.procs").write_text("")
    return Host(cgroup_root=root)


def test_a_refill_removes_sets_a_killed_bot_left_but_not_young_ones(tmp_path):
    host = _fake_v1(tmp_path)
    left = [tmp_path / "pids" / limits.GROUP_NAME / name for name in ("old-one", "young-one")]
    for folder in left:
        folder.mkdir(parents=True)
    old = time.time() - limits.STALE_AFTER_S - 5
    os.utime(left[0], (old, old))
    limits._swept.add(left[0].parent)  # this process's one-time sweep has run already
    limits._swept.add(tmp_path / "memory" / limits.GROUP_NAME)
    pool = CgroupPool()
    pool.refill(MEMORY, PIDS, host)
    assert not left[0].exists() and left[1].exists()
