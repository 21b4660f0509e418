"""What the bridge may not do to the running CLI's own loader paths in strict mode.

The strict CLI's sandbox covers each loader path present in the worktree when it starts
(adapters.base.Loaders, sandbox/tier1.py:mask_mounts), but it sees the worktree live: a file the
bridge writes there during the episode appears in its view at once, and removing a covered path
on the host lifts its cover there. So for the episode the bridge's writes (save, edit, delete)
treat those paths as protected, each `run` sandbox covers them too (a command can neither change
nor remove what the CLI's sandbox covers), and what a command created at one is removed when it
ends, before its result reaches the agent.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adapters.base import Adapter
from bot.bridge.admission import Admission
from bot.bridge.tools import RunSandbox
from bot.episode.session_home import strip_loaders
from bot.workspace.repo_config import RepoConfig
from sandbox.base import SandboxConfig, SandboxProcess, Spawner


def loader_globs(adapter: Adapter) -> tuple[str, ...]:
    """Each project loader path and everything below it, as protected-path globs."""
    return tuple(glob for path in adapter.loaders.project for glob in (path, f"{path}/**"))


def bridge_policy(worktree: Path, repo_config: RepoConfig, adapter: Adapter, mount_path: str) -> Admission:
    """The bridge's admission for one episode: the repository's, and in strict mode the CLI's
    loader paths protected as well."""
    extra = loader_globs(adapter) if repo_config.mode == "strict" else ()
    return Admission.from_repo_config(worktree, repo_config, mount_path=mount_path,
                                      protected=tuple(repo_config.protected_paths) + extra)


def masked_runs(make: RunSandbox, adapter: Adapter, mode: str) -> RunSandbox:
    """The `run` tool's sandboxes in strict mode: the CLI's present project loader paths covered,
    and any its command created removed from the worktree once it has ended."""
    if mode != "strict":
        return make

    def masked(home: Path) -> tuple[Spawner, SandboxConfig]:
        spawner, config = make(home)
        config.masked = adapter.loaders.project
        return _Clearing(spawner, Path(config.workdir), adapter.loaders.project), config

    return masked


class _Clearing:
    """A spawner whose runs leave none of `paths` behind that was absent when they started."""

    def __init__(self, spawner: Spawner, worktree: Path, paths: tuple[str, ...]):
        self._spawner, self._worktree, self._paths = spawner, worktree, paths
        self.tier = spawner.tier

    def inside_bridge_url(self, config: SandboxConfig, path: str = "/mcp") -> str | None:
        return self._spawner.inside_bridge_url(config, path)

    async def probe(self, argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[int, str]:
        return await self._spawner.probe(argv, env)

    async def start(self, config: SandboxConfig, argv: Sequence[str], env: dict[str, str],
                    stdin: bytes | None = None, cwd: str | None = None) -> SandboxProcess:
        absent = tuple(path for path in self._paths if not os.path.lexists(self._worktree / path))
        process = await self._spawner.start(config, argv, env, stdin, cwd)
        return _ClearedOnEnd(process, self._worktree, absent)


class _ClearedOnEnd:
    """A run's process; when it has ended (its writes applied), the paths absent at its start go."""

    def __init__(self, process: SandboxProcess, worktree: Path, absent: tuple[str, ...]):
        self._process, self._worktree, self._absent = process, worktree, absent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._process, name)

    async def wait(self) -> int:
        code = await self._process.wait()
        strip_loaders(self._worktree, self._absent)
        return code

    async def kill(self) -> None:
        await self._process.kill()
        strip_loaders(self._worktree, self._absent)
