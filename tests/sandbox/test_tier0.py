"""Tier 0, the process jail used only when the operator sets BOT_SANDBOX_TIER=0."""
from __future__ import annotations

import asyncio
from dataclasses import replace

from sandbox.base import Limits
from sandbox.tier0 import Tier0Spawner


async def _run(config, script: str, env: dict | None = None):
    proc = await Tier0Spawner().start(replace(config, min_tier=0), ["sh", "-c", script], env or {})
    out, _ = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
    rc = await proc.wait()
    return rc, out.decode(), proc.outcome()


async def test_environment_is_scrubbed(config, monkeypatch):
    """Host variables outside the base set do not reach the child; the caller's do."""
    monkeypatch.setenv("HOST_ONLY_TOKEN", "leak-me")
    rc, out, _ = await _run(config, 'echo "[$HOST_ONLY_TOKEN] [$GIVEN]"', {"GIVEN": "yes"})
    assert out == "[] [yes]\n"


async def test_home_and_tmpdir_are_the_episodes(config):
    """HOME is the episode home and TMPDIR a folder of its own."""
    rc, out, _ = await _run(config, 'echo "$HOME"; echo "$TMPDIR"')
    home, tmp = out.split()
    assert home == str(config.home) and tmp == str(config.home / ".tmp")


async def test_timeout_kills_the_session(config):
    """Past the wall clock the whole session is killed and the outcome says so."""
    rc, out, outcome = await _run(replace(config, limits=Limits(timeout_s=1)), "echo a; sleep 30")
    assert out == "a\n" and outcome["timed_out"] is True and outcome["tier"] == 0
