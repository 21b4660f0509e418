"""System files: settings a CLI trusts only when root owns them (and the agent must not change),
placed read-only by the sandbox outside the agent's HOME."""
from __future__ import annotations

import asyncio
import os
from dataclasses import replace

import pytest

from sandbox.tier0 import Tier0Spawner
from tests.conftest import is_root

SETTINGS = "/etc/cli-under-test/settings.json"
CONTENT = b'{"hooks": {"enabled": false}}\n'


@pytest.mark.sandbox
async def test_system_file_is_readable_inside_and_cannot_be_changed(run):
    ran = await run(f"cat {SETTINGS}; echo x >> {SETTINGS} 2>&1; rm -f {SETTINGS} 2>&1; "
                    f"mv {SETTINGS} /etc/moved 2>&1; cat {SETTINGS}", system_files={SETTINGS: CONTENT})
    assert ran.out.startswith(CONTENT.decode())
    assert ran.out.endswith(CONTENT.decode())
    assert "Read-only file system" in ran.out


@pytest.mark.sandbox
@pytest.mark.skipif(not is_root(), reason="files the sandbox makes are root's only when the bot is root")
async def test_system_file_and_every_folder_above_it_are_roots_and_not_group_writable(run):
    """What Gemini CLI checks before it honours its system settings (else a repository's
    workspace settings, hooks included, win)."""
    script = ("import os, sys\np = sys.argv[1]\nwhile p != '/':\n    s = os.stat(p)\n"
              "    print(p, s.st_uid, oct(s.st_mode & 0o022))\n    p = os.path.dirname(p)\n")
    ran = await run(f"python3 -c \"{script}\" {SETTINGS}", system_files={SETTINGS: CONTENT})
    rows = [line.split() for line in ran.out.splitlines()]
    assert [row[0] for row in rows] == [SETTINGS, "/etc/cli-under-test", "/etc"]
    assert all(uid == "0" and bits == "0o0" for _, uid, bits in rows), rows


@pytest.mark.sandbox
async def test_system_file_path_must_be_absolute_and_normalised(run):
    with pytest.raises(ValueError):
        await run("true", system_files={"/etc/../root/x": CONTENT})


async def test_tier0_points_an_environment_value_at_its_copy_of_a_system_file(config):
    """Tier 0 cannot place files at absolute paths: it writes them under HOME and the
    environment value naming the system file names the copy instead."""
    cfg = replace(config, min_tier=0, system_files={SETTINGS: CONTENT})
    proc = await Tier0Spawner().start(cfg, ["sh", "-c", 'cat "$SETTINGS_PATH"'], {"SETTINGS_PATH": SETTINGS})
    out, _ = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
    assert await proc.wait() == 0
    assert out == CONTENT
    copy = config.home / ".bot" / "system" / "etc_cli-under-test_settings.json"
    assert copy.read_bytes() == CONTENT and os.stat(copy).st_mode & 0o077 == 0
