"""The agent CLI's version for a run's provenance, probed on the host without trusting anything a
repository or an agent wrote.

Why a host probe and not the version the CLI reports in its own stream: only Claude Code announces
its version there, and that stream is written by a process an agent steers, so a recorded version
would be whatever the sandbox printed. The binary itself is the operator's: `BOT_<AGENT>_BIN`, or the
pinned install in BOT_AGENTS_DIR, which the sandbox binds read-only. So the probe runs that binary,
and only with `--version` (never a login check), under these rules, because it runs on the host:

- the working directory is a fresh empty directory, never the process's own (which for `bot run`
  is the user's checkout): nothing in a checkout — `.npmrc`, `node_modules/.bin`, a relative PATH
  entry — can resolve into a repository;
- the program is looked up only in absolute PATH entries;
- the environment is the sandbox's scrubbed base (bot/sandbox base_env) with HOME and TMPDIR in
  that empty directory: no provider keys, no NODE_OPTIONS, not the service user's CLI config.

The answer is cached per process and binary: the pinned install does not change under a running bot.
"""
from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from adapters.base import Adapter, version_of
from sandbox.base import base_env

log = logging.getLogger("bot.episode.cli_version")
PROBE_TIMEOUT_S = 30
_versions: dict[tuple[str, str], str | None] = {}


async def adapter_version(adapter: Adapter) -> str | None:
    """The CLI's version (e.g. "0.63.0"), or None when it cannot be probed; cached."""
    key = (adapter.name, adapter.binary)
    if key not in _versions:
        _versions[key] = await asyncio.to_thread(probe_version, adapter.binary)
    return _versions[key]


def probe_version(binary: str) -> str | None:
    """`<binary> --version` in a fresh directory with the scrubbed environment (see the module)."""
    with tempfile.TemporaryDirectory(prefix="bot-version-") as scratch:
        env = base_env(scratch, scratch)
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if os.path.isabs(p))
        program = _program(binary, env["PATH"])
        if program is None:
            log.warning("version probe: %s is neither an absolute path nor on an absolute PATH entry", binary)
            return None
        try:
            done = subprocess.run([program, "--version"], cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=PROBE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("version probe of %s failed: %s", Path(program).name, exc)
            return None
    if done.returncode != 0:
        return None
    return version_of((done.stdout + done.stderr).decode("utf-8", "replace"))


def _program(binary: str, path: str) -> str | None:
    """An absolute path as is; a bare name looked up in `path`; a relative path (which would resolve
    against the process's directory) never."""
    if os.path.isabs(binary):
        return binary
    if os.sep in binary:
        return None
    return shutil.which(binary, path=path)
