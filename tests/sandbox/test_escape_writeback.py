"""Escape suite, write-back: what a capped layer holds reaches the host within the same cap.

A sandbox writes into a tmpfs of its cap (tests/sandbox/test_escape_disk.py); when it ends, the
launcher copies that layer onto the host folder (sandbox/layer_apply.py). What is cheap inside
must not become expensive outside: a sparse file, a file under more names than the host takes,
folders (which cost no bytes on a tmpfs and a block each on the host), a chain of folders a
thousand deep. The copy's budget is the cap, in allocated bytes and inodes; it looks no deeper
than `MAX_DEPTH` levels, and so does the next start's ownership hand-over. Part of the escape
suite, so also run as an unprivileged user (tests/sandbox/test_unprivileged_escape.py).
"""
from __future__ import annotations

import os
from dataclasses import replace

import pytest

from adapters.base import Episode
from sandbox.base import Limits
from sandbox.bounded_tree import MAX_DEPTH, remove_path
from sandbox.tier1 import Tier1Spawner
from tests.conftest import is_root
from tests.entry_settings import current
from tests.sandbox.shell_adapter import ShellAdapter
from tests.sandbox.tree_usage import depth, usage
from tests.workspace.test_deep_trees import chain

pytestmark = pytest.mark.sandbox
CAP = 16 << 20
GIB = 1 << 30
ANSWER = 'echo \'{"text": "done"}\''
REASON_ROOT_ONLY = "an unprivileged bot and its sandbox share one uid"
DEEP_CHAIN = """python3 - <<'EOF'
import os
for _ in range(1000):
    os.mkdir("d")
    os.chdir("d")
open("bottom.txt", "w").close()
EOF"""


def _capped(cap: int = CAP) -> Limits:
    return Limits(worktree_growth_bytes=cap, timeout_s=120, memory_bytes=512 << 20)


def _links_past_the_host(folder) -> str:
    """One 1 MiB file under more names than the host's filesystem lets one file have."""
    names = os.pathconf(folder, "PC_LINK_MAX") + 1500
    return f"""python3 - <<'EOF'
import os
with open("f", "wb") as handle:
    handle.write(os.urandom(1 << 20))
for number in range({names}):
    os.link("f", f"n{{number}}")
EOF"""


async def _episode(config, script: str, **limits):
    from bot.episode.runner import run_episode
    cfg = replace(config, writable=True, limits=Limits(timeout_s=120, **limits))
    episode = Episode(prompt="p", workdir=cfg.mount_path, home=cfg.home, mode="native")
    return await run_episode(ShellAdapter(script), episode, Tier1Spawner(host=current().sandbox_host), cfg)


async def test_a_sparse_file_far_past_the_cap_lands_sparse(run, config):
    before = usage(config.workdir)[0]
    ran = await run("truncate -s 1G sparse && printf end >> sparse", writable=True, limits=_capped())
    assert ran.rc == 0, ran.err
    sparse = config.workdir / "sparse"
    assert sparse.stat().st_size == GIB + 3
    with open(sparse, "rb") as handle:
        handle.seek(GIB)
        assert handle.read() == b"end"
    assert usage(config.workdir)[0] - before <= CAP


async def test_a_file_under_more_names_than_the_host_takes_costs_no_more_than_the_cap(run, config):
    """A tmpfs counts each name against its inodes, so only a cap of some 256 MiB holds more
    names than ext4 gives one file (65000); past those, each name is a copy of the file."""
    link_max = os.pathconf(config.workdir, "PC_LINK_MAX")
    if link_max > 1 << 17:
        pytest.skip("the host's filesystem takes more names per file than this test can make")
    cap = (link_max + 2048) * 4096  # the layer's tmpfs gets one inode per 4 KiB of its size
    before = usage(config.workdir)[0]
    ran = await run(_links_past_the_host(config.workdir), writable=True, limits=_capped(cap))
    assert ran.rc == 0, ran.err
    assert usage(config.workdir)[0] - before <= cap
    assert {"layer": "worktree", "bytes": cap} in ran.outcome["disk_full"]


async def test_folders_that_cost_nothing_inside_cost_the_host_no_more_than_the_cap(run, config):
    """A folder takes no bytes of a tmpfs and a block of most host filesystems."""
    cap = 1 << 20
    before = usage(config.workdir)
    ran = await run("mkdir many && cd many && seq 1 1000 | xargs mkdir", writable=True, limits=_capped(cap))
    assert ran.rc == 0, ran.err
    after = usage(config.workdir)
    assert after[0] - before[0] <= cap and after[1] - before[1] <= 1024


async def test_an_episode_whose_write_back_reaches_the_cap_ends_with_the_limit_named(config):
    result = await _episode(config, f"mkdir many && cd many && seq 1 1000 | xargs mkdir; {ANSWER}",
                            worktree_growth_bytes=1 << 20)
    assert (result.ok, result.failure) == (False, "killed")
    assert result.error.startswith("stopped: the worktree reached its 1 MiB disk cap (BOT_LIMIT_WORKTREE"), result.error


async def test_a_chain_of_folders_a_thousand_deep_lands_no_deeper_than_the_bound(run, config):
    try:
        ran = await run(DEEP_CHAIN, writable=True, limits=_capped())
        assert ran.rc == 0, ran.err
        assert depth(config.workdir) == MAX_DEPTH
        assert ran.outcome["write_back_dropped"] == [{"layer": "worktree", "dropped": {"too_deep": 1}}]
    finally:
        remove_path(config.workdir / "d")  # pytest's own clean-up would recurse


async def test_an_episode_that_nests_folders_past_the_bound_fails_naming_what_was_left_out(config):
    try:
        result = await _episode(config, f"{DEEP_CHAIN}\n{ANSWER}", worktree_growth_bytes=CAP)
    finally:
        remove_path(config.workdir / "d")
    assert (result.ok, result.failure) == (False, "killed")
    assert result.error == ("the sandbox's changes to the worktree could not be kept: "
                            f"1 folder nested deeper than {MAX_DEPTH} levels left out")


async def test_fifos_and_sockets_the_sandbox_leaves_are_dropped_and_recorded(run, config):
    script = ("mkfifo pipe && python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock')\" "
              "&& echo kept > kept.txt")
    ran = await run(script, writable=True, allow_unix_sockets=True, limits=_capped())
    assert ran.rc == 0, ran.err
    assert (config.workdir / "kept.txt").read_text() == "kept\n"
    assert not os.path.lexists(config.workdir / "pipe") and not os.path.lexists(config.workdir / "sock")
    assert ran.outcome["write_back_dropped"] == [{"layer": "worktree", "dropped": {"fifo": 1, "socket": 1}}]


@pytest.mark.skipif(not is_root(), reason=REASON_ROOT_ONLY)
async def test_a_worktree_a_thousand_folders_deep_is_handed_over_down_to_the_bound(run, config):
    """The ownership hand-over (bot as root) walks without recursion and names what it left."""
    chain(config.workdir)
    try:
        ran = await run("stat -c %u d/d", limits=_capped())
        assert ran.rc == 0, ran.err
        assert ran.out.strip() == "65533"
        assert ran.outcome["hand_over_too_deep"] == [str(config.workdir.joinpath(*["d"] * MAX_DEPTH))]
    finally:
        remove_path(config.workdir / "d")
