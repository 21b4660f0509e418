"""What the bridge may not do to the running CLI's own loader paths in strict mode.

The strict CLI's sandbox covers each loader path present in the worktree when it starts
(adapters.base.Loaders, sandbox/tier1.py:mask_mounts), but it sees the worktree live: a file the
bridge writes there during the episode appears in its view at once, and removing a covered path
on the host lifts its cover there. So for the episode the bridge's writes (save, edit, delete)
treat those paths as protected, and each `run` sandbox covers them too, so a command can neither
change nor remove what the CLI's sandbox covers.
"""
from __future__ import annotations

from pathlib import Path

from adapters.base import Adapter
from bot.bridge.admission import Admission
from bot.bridge.tools import RunSandbox
from bot.workspace.repo_config import RepoConfig
from sandbox.base import SandboxConfig, Spawner


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
    """The `run` tool's sandboxes, covering the CLI's project loader paths in strict mode."""
    if mode != "strict":
        return make

    def masked(home: Path) -> tuple[Spawner, SandboxConfig]:
        spawner, config = make(home)
        config.masked = adapter.loaders.project
        return spawner, config

    return masked
