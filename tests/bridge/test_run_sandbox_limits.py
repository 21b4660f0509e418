"""A bridged `run` gets the episode's caps (the operator's BOT_LIMIT_* and the repository's
limits), each call timed by the run tool's own timeout; before, it got the defaults."""
from __future__ import annotations

from pathlib import Path

from bot.bridge.admission import Admission
from bot.bridge.tools import sandbox_for_run
from sandbox.base import Limits
from tests.entry_settings import current


def test_a_run_sandbox_keeps_the_episodes_caps_with_the_run_timeout(tmp_path: Path):
    policy = Admission(tmp_path, run_timeout_s=45)
    episode = Limits(timeout_s=900, memory_bytes=3 << 30, worktree_growth_bytes=16 << 20, home_bytes=8 << 20)
    _, config = sandbox_for_run(tmp_path, policy, tier=1, limits=episode, host=current().sandbox_host)(tmp_path / "home")
    assert (config.limits.timeout_s, config.limits.memory_bytes, config.limits.worktree_growth_bytes,
            config.limits.home_bytes) == (45, 3 << 30, 16 << 20, 8 << 20)


def test_without_the_episodes_limits_a_run_sandbox_has_the_defaults_and_the_run_timeout(tmp_path: Path):
    _, config = sandbox_for_run(tmp_path, Admission(tmp_path, run_timeout_s=45), tier=1, host=current().sandbox_host)(tmp_path / "home")
    assert config.limits == Limits(timeout_s=45)
