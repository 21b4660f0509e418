"""Secrets travel only in the child's environment: never in any process's argv."""
from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox
SECRET = "sk-test-7f3a9c1e5d2b4a6f8e0c"


def _cmdlines_containing(value: str) -> list[str]:
    hits = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if value in cmdline:
                hits.append(f"{entry.name}: {cmdline!r}")
    return hits


async def test_secret_never_in_any_cmdline(config):
    """While a sandbox runs with a secret in its env, no /proc/*/cmdline on the host holds it."""
    proc = await Tier1Spawner(host=current().sandbox_host).start(config, ["sh", "-c", 'echo ready; exec sleep 30'],
                                      {"API_KEY": SECRET})
    try:
        assert await proc.stdout.readline() == b"ready\n"
        assert _cmdlines_containing(SECRET) == []
    finally:
        await proc.kill()


async def test_secret_reaches_the_child_environment(run):
    """The same secret is visible to the sandboxed process through its environment."""
    ran = await run('test "$API_KEY" = "$EXPECTED" && echo match',
                    env={"API_KEY": SECRET, "EXPECTED": SECRET})
    assert ran.out == "match\n"


async def test_secret_not_in_cmdline_inside(run):
    """Inside the sandbox, no process's cmdline holds the secret either."""
    script = ("import glob, os; key = os.environ['API_KEY'].encode(); "
              "print(sum(key in open(p, 'rb').read() for p in glob.glob('/proc/[0-9]*/cmdline')))")
    ran = await run(f'python3 -c "{script}"', env={"API_KEY": SECRET})
    assert ran.out.strip() == "0"
