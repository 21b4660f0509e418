"""Choosing and laying out the run's cgroups: v2 when its controllers are there, else v1.

The v2-with-controllers layout cannot be had on this host (hybrid, v2 holds only hugetlb), so
those cases run against a directory tree laid out like cgroupfs; the real host is used too.
"""
from __future__ import annotations

import pytest

from sandbox import limits
from tests.entry_settings import current


@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    root = tmp_path / "cgroup"
    root.mkdir()
    monkeypatch.setenv("BOT_CGROUP_ROOT", str(root))
    return root


def test_v2_used_when_memory_and_pids_controllers_available(fake_root):
    """A v2 root offering memory and pids gets one leaf with memory.max, swap 0 and pids.max."""
    (fake_root / "cgroup.controllers").write_text("cpu memory pids\n")
    (fake_root / "cgroup.subtree_control").write_text("")
    (fake_root / "cgroup.procs").write_text("")
    groups = limits.create("run1", 256 << 20, 64, current().sandbox_host)
    leaf = fake_root / "bot-sandbox" / "run1"
    assert groups.version == 2 and groups.memory == leaf and groups.pids == leaf
    assert (leaf / "memory.max").read_text() == str(256 << 20)
    assert (leaf / "memory.swap.max").read_text() == "0"
    assert (leaf / "pids.max").read_text() == "64"
    assert groups.join_paths() == [str(leaf / "cgroup.procs")]


def test_v1_used_when_v2_lacks_controllers(fake_root):
    """A hybrid layout (v2 with hugetlb only) falls back to v1 memory and pids, v2 leaf for kill."""
    for controller in ("memory", "pids"):
        (fake_root / controller).mkdir()
        (fake_root / controller / "cgroup.procs").write_text("")
    unified = fake_root / "unified"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("hugetlb\n")
    (unified / "cgroup.procs").write_text("")
    groups = limits.create("run2", 128 << 20, 32, current().sandbox_host)
    assert groups.version == 1
    assert (groups.memory / "memory.limit_in_bytes").read_text() == str(128 << 20)
    assert (groups.pids / "pids.max").read_text() == "32"
    assert groups.join_paths()[-1] == "?" + str(unified / "bot-sandbox" / "run2" / "cgroup.procs")


def test_no_controllers_anywhere_is_unavailable(fake_root):
    """Without v2 controllers and without v1 hierarchies there is no cgroup floor."""
    with pytest.raises(limits.CgroupUnavailable):
        limits.create("run3", 1 << 30, 64, current().sandbox_host)


@pytest.mark.sandbox
def test_host_cgroups_created_limited_and_removed():
    """On this host a real cgroup set is created with the limits, then removed."""
    groups = limits.create("unit-host", 96 << 20, 48, current().sandbox_host)
    try:
        assert (groups.pids / "pids.max").read_text().strip() == "48"
        limit_file = "memory.max" if groups.version == 2 else "memory.limit_in_bytes"
        assert int((groups.memory / limit_file).read_text()) == 96 << 20
    finally:
        groups.remove()
    assert not groups.memory.exists() and not groups.pids.exists()


def test_stale_run_cgroups_swept_on_create(fake_root):
    """Run cgroups a crashed bot left behind (old, empty) are removed when the next run starts."""
    import os
    import time
    (fake_root / "cgroup.controllers").write_text("memory pids\n")
    (fake_root / "cgroup.subtree_control").write_text("")
    (fake_root / "cgroup.procs").write_text("")
    stale, recent = fake_root / "bot-sandbox" / "old-run", fake_root / "bot-sandbox" / "recent-run"
    stale.mkdir(parents=True)
    recent.mkdir()
    old = time.time() - 3600
    os.utime(stale, (old, old))
    limits.create("next-run", 64 << 20, 16, current().sandbox_host)
    assert not stale.exists() and recent.exists()
