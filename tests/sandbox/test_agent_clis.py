"""The real agent CLIs start inside tier 1 (node/bun runtimes under the read-only install)."""
from __future__ import annotations

import pytest

from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current
from tests.sandbox.conftest import AGENTS_DIR

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]

EXPECTED = {"claude": "2.1.197", "codex": "0.171.0", "opencode": "1.18.33", "gemini": "0.61.0"}


@pytest.mark.parametrize("agent", sorted(EXPECTED))
async def test_cli_version_runs_inside(agent):
    """`<cli> --version` runs inside tier 1 and prints the pinned version."""
    binary = AGENTS_DIR / "node_modules" / ".bin" / agent
    rc, output = await Tier1Spawner(host=current().sandbox_host).probe([str(binary), "--version"])
    assert rc == 0, output
    assert EXPECTED[agent] in output
