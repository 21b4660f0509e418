"""The container's own cgroup as one episode's caps, read from cgroup trees laid out in tmp dirs
(BOT_CGROUP_ROOT points the code at them): v1 as this host and podman on it have it, v2 as a
container with a cgroup namespace sees it. The real kernel's side is in
tests/sandbox/test_own_cgroup_host.py and the container test."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox import limits, own_cgroup, preflight
from sandbox.base import Host

GIB = 1 << 30


def v1_tree(root: Path, memory: str | None = str(2 * GIB), pids: str | None = "512",
            listed: bool = True) -> Path:
    """A v1 memory and pids hierarchy as a container sees its own cgroups: at the mount's root."""
    for controller, name, value in (("memory", "memory.limit_in_bytes", memory), ("pids", "pids.max", pids)):
        folder = root / controller
        folder.mkdir(parents=True)
        (folder / "cgroup.procs").write_text(f"1\n{os.getpid()}\n" if listed else "1\n")
        if value is not None:
            (folder / name).write_text(value + "\n")
    (root / "memory" / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
    (root / "memory" / "memory.max_usage_in_bytes").write_text(str(GIB))
    (root / "pids" / "pids.events").write_text("max 7\n")
    return root


def no_subtree(root: Path) -> None:
    """A file where the run's cgroups would be made: no subtree can be had, as on a read-only mount."""
    for controller in ("memory", "pids"):
        (root / controller / limits.GROUP_NAME).write_text("")


def v2_tree(root: Path, memory: str = str(GIB), pids: str = "256") -> Path:
    root.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpu io\n")  # no memory+pids to hand down
    (root / "cgroup.procs").write_text(f"{os.getpid()}\n")
    (root / "memory.max").write_text(memory + "\n")
    (root / "pids.max").write_text(pids + "\n")
    (root / "memory.events").write_text("low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n")
    (root / "memory.peak").write_text(str(GIB // 2))
    (root / "pids.events").write_text("max 0\n")
    return root


def test_v1_caps_are_read_from_the_cgroup_that_lists_this_process(tmp_path: Path) -> None:
    group = own_cgroup.find(v1_tree(tmp_path))
    assert group is not None and group.version == 1
    assert own_cgroup.read_caps(group) == own_cgroup.Caps(2 * GIB, 512)


def test_v2_caps_are_read_from_memory_max_and_pids_max(tmp_path: Path) -> None:
    group = own_cgroup.find(v2_tree(tmp_path / "cg"))
    assert group is not None and group.version == 2
    assert own_cgroup.read_caps(group) == own_cgroup.Caps(GIB, 256)


def test_a_cgroup_that_does_not_list_this_process_caps_nothing(tmp_path: Path) -> None:
    found = own_cgroup.verdict(v1_tree(tmp_path, listed=False), 2 * GIB, 512)
    assert found.group is None and not found.serves
    assert "no cgroup under BOT_CGROUP_ROOT lists this process" in found.refusal()


def test_max_is_no_cap(tmp_path: Path) -> None:
    found = own_cgroup.verdict(v1_tree(tmp_path, pids="max"), 2 * GIB, 512)
    assert not found.serves and "pids: no cap" in found.refusal()


def test_a_limit_file_longer_than_its_bound_is_no_cap(tmp_path: Path) -> None:
    found = own_cgroup.verdict(v1_tree(tmp_path, memory="1" * (own_cgroup.VALUE_CAP + 1)), 2 * GIB, 512)
    assert found.caps.memory is None and not found.serves


def test_a_run_without_a_subtree_runs_under_the_containers_own_caps(tmp_path: Path) -> None:
    root = v1_tree(tmp_path)
    no_subtree(root)
    groups = limits.create("run1", 2 * GIB, 512, Host(cgroup_root=root))
    assert isinstance(groups, own_cgroup.ContainerCgroup) and groups.scope == "container"
    assert groups.join_paths() == [limits.OOM_FIRST]


def test_a_subtree_is_preferred_when_one_can_be_made(tmp_path: Path) -> None:
    groups = limits.create("run1", 2 * GIB, 512, Host(cgroup_root=v1_tree(tmp_path)))
    assert groups.scope == "run" and groups.memory == tmp_path / "memory" / limits.GROUP_NAME / "run1"


def test_own_caps_above_a_runs_limits_refuse_it_naming_both_ways(tmp_path: Path) -> None:
    root = v1_tree(tmp_path, memory=str(4 * GIB), pids="2048")
    no_subtree(root)
    with pytest.raises(limits.CgroupUnavailable) as refused:
        limits.create("run1", 2 * GIB, 512, Host(cgroup_root=root))
    said = str(refused.value)
    assert "cannot create cgroup" in said  # the subtree's failure
    assert "memory 4 GiB above 2 GiB, pids 2048 above 512" in said and "mem_limit and pids_limit" in said


def test_a_run_asking_less_than_the_containers_caps_is_refused(tmp_path: Path) -> None:
    """A repository's lower limit cannot be had from a container capped higher: refused, not loosened."""
    root = v1_tree(tmp_path)
    no_subtree(root)
    with pytest.raises(limits.CgroupUnavailable, match="memory 2 GiB above 1 GiB"):
        limits.create("run1", GIB, 512, Host(cgroup_root=root))


def test_oom_kills_and_pids_max_hits_are_deltas_around_the_run(tmp_path: Path) -> None:
    root = v1_tree(tmp_path)
    no_subtree(root)
    groups = limits.create("run1", 2 * GIB, 512, Host(cgroup_root=root))
    assert (groups.oom_kills(), groups.pids_max_hits()) == (0, 0)  # 3 and 7 were before the run
    (root / "memory" / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 4\n")
    (root / "pids" / "pids.events").write_text("max 9\n")
    assert (groups.oom_kills(), groups.pids_max_hits()) == (1, 2)


def test_v2_counters_are_read_from_memory_events_and_pids_events(tmp_path: Path) -> None:
    root = v2_tree(tmp_path / "cg")
    groups = limits.create("run1", 2 * GIB, 512, Host(cgroup_root=root))
    (root / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n")
    (root / "pids.events").write_text("max 5\n")
    assert groups.version == 2 and (groups.oom_kills(), groups.pids_max_hits()) == (1, 5)


def test_the_peak_is_the_containers_only_when_reached_during_the_run(tmp_path: Path) -> None:
    root = v1_tree(tmp_path)
    no_subtree(root)
    groups = limits.create("run1", 2 * GIB, 512, Host(cgroup_root=root))
    assert groups.peak_memory() == 0  # the container's 1 GiB peak came before the run
    (root / "memory" / "memory.max_usage_in_bytes").write_text(str(GIB + 4096))
    assert groups.peak_memory() == GIB + 4096


def test_ending_a_run_under_the_containers_caps_signals_no_process_of_the_cgroup(tmp_path: Path) -> None:
    """The container's cgroup lists the worker (here: this test's process): kill_all leaves it alive,
    and removing the run's cgroups removes none of the container's."""
    root = v1_tree(tmp_path)
    no_subtree(root)
    groups = limits.create("run1", 2 * GIB, 512, Host(cgroup_root=root))
    groups.kill_all()
    groups.remove()
    assert (root / "memory" / "cgroup.procs").exists() and (root / "pids" / "pids.max").exists()


def test_sandbox_check_says_the_containers_own_caps_and_one_episode_at_a_time(tmp_path: Path) -> None:
    root = v1_tree(tmp_path)
    no_subtree(root)
    assert preflight._cgroup_check(Host(cgroup_root=root)) == (
        "cgroup memory+pids caps", True, "caps: the container's own cgroup (memory 2 GiB, pids 512), one episode "
        "at a time")


def test_sandbox_check_without_either_way_names_both_in_one_line(tmp_path: Path) -> None:
    root = v1_tree(tmp_path, memory="max", pids="max")
    no_subtree(root)
    name, ok, detail = preflight._cgroup_check(Host(cgroup_root=root))
    assert not ok and "\n" not in detail
    assert detail.startswith("needs the cgroup this process is in (the container's) capped at memory 2 GiB and "
                             "pids 512 or below, to run one episode at a time (it has memory: no cap, pids: no cap")
    assert "or, to run several at once, run the bot as root, or delegate a cgroup subtree" in detail


def test_the_check_names_a_subtree_it_can_make(tmp_path: Path) -> None:
    name, ok, detail = preflight._cgroup_check(Host(cgroup_root=v1_tree(tmp_path)))
    assert ok and detail.startswith("cgroup v1: ") and "BOT_WORKERS at once" in detail


CAP_TEXT = st.one_of(
    st.none(),  # the file is missing
    st.just("max"),
    st.integers(min_value=0, max_value=1 << 40).map(str),
    st.integers(min_value=0, max_value=1 << 40).map(lambda n: f" {n}\n"),
    st.text(st.characters(codec="ascii"), max_size=30),  # garbage
    st.binary(max_size=30).map(lambda b: b.decode("latin-1")),
)


def whole(text: str | None) -> int | None:
    if text is None or not text.strip().isascii() or not text.strip().isdigit() or len(text.strip()) > 20:
        return None
    return int(text.strip())


@settings(max_examples=300, deadline=None)
@given(memory=CAP_TEXT, pids=CAP_TEXT, memory_limit=st.integers(1, 1 << 40), pids_limit=st.integers(1, 1 << 16))
def test_own_caps_serve_only_when_both_are_whole_numbers_at_or_below_the_limits(
        tmp_path_factory: pytest.TempPathFactory, memory: str | None, pids: str | None, memory_limit: int,
        pids_limit: int) -> None:
    root = v1_tree(tmp_path_factory.mktemp("cg"), memory=memory, pids=pids)
    found = own_cgroup.verdict(root, memory_limit, pids_limit)
    want_memory, want_pids = whole(memory), whole(pids)
    expected = (want_memory is not None and want_pids is not None and want_memory <= memory_limit
                and want_pids <= pids_limit)
    assert found.serves == expected
    assert found.caps == own_cgroup.Caps(want_memory, want_pids)
    if not expected:
        assert found.refusal().startswith("the cgroup this process is in")
