"""The run tool holds only what it shows of a command's output (bot/bridge/tools.py:HeadTail): a
command printing without end within its time limit costs the host at most the cap."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.bridge.tools import GIT_POINTER_CAP, HeadTail, cap_output, sandbox_for_run
from tests.bridge.conftest import call, git
from tests.entry_settings import current


@settings(max_examples=300)
@given(blocks=st.lists(st.binary(max_size=5000), max_size=30), cap=st.integers(min_value=2, max_value=20_000))
def test_the_streamed_output_shows_what_the_whole_would_and_holds_no_more_than_the_cap(blocks, cap):
    kept = HeadTail(cap)
    for block in blocks:
        kept.feed(block)
        assert kept.held <= cap
    assert kept.text() == cap_output(b"".join(blocks), cap)


async def test_a_git_pointer_grown_past_its_cap_by_a_command_is_restored(worktree, recorder, run_id, tmp_path):
    """The `.git` file is compared up to a pointer's size, never read whole: one a command made
    huge is restored like any other change."""
    linked = tmp_path / "linked"
    git(worktree, "worktree", "add", "-q", "--detach", str(linked))
    pointer = (linked / ".git").read_bytes()
    policy = Admission(linked)
    async with BridgeServer(linked, policy, recorder, run_id, scratch_root=tmp_path / "s",
                            run_sandbox=sandbox_for_run(linked, policy, tier=0, host=current().sandbox_host)) as bridge:
        text, _ = await call(bridge, "run", command=f"cat .git > grown; head -c {GIT_POINTER_CAP} /dev/zero >> grown; "
                                                    "mv grown .git")
    assert (linked / ".git").read_bytes() == pointer and "it was restored" in text
