"""A sandbox that prints faster than the bot takes its output is held by its own pipe: the bot's
stream stops reading at twice STREAM_LIMIT (asyncio's pause), so a flooding CLI whose lines are
paced (bot/episode/pace.py) waits on its writes instead of filling the bot's memory. Nothing it
printed is lost: all of it is read once the bot reads."""
from __future__ import annotations

from dataclasses import replace

import pytest

from sandbox.base import STREAM_LIMIT
from sandbox.tier0 import Tier0Spawner
from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current
from tests.stream_blocked import until_writer_held

pytestmark = pytest.mark.sandbox
PRINTED = 8 << 20
PIPE_MOST = 1 << 20  # the most a Linux pipe holds (fs.pipe-max-size's default)


@pytest.mark.parametrize("tier", [0, 1])
async def test_a_sandbox_printing_with_nobody_reading_is_held_by_its_pipe_and_loses_nothing(config, tier):
    spawner = Tier0Spawner() if tier == 0 else Tier1Spawner(host=current().sandbox_host)
    proc = await spawner.start(replace(config, min_tier=tier), ["sh", "-c", f"head -c {PRINTED} /dev/zero"], {})
    try:
        await until_writer_held(proc.stdout)
        held = len(proc.stdout._buffer)  # type: ignore[attr-defined]  # asyncio names it no other way
        assert held <= 2 * STREAM_LIMIT + PIPE_MOST, held
        assert held < PRINTED
        read = 0
        while chunk := await proc.stdout.read(1 << 16):
            read += len(chunk)
        assert read == PRINTED and await proc.wait() == 0
    finally:
        await proc.kill()
