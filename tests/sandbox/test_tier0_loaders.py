"""Tier 0 keeps every declared loader of every adapter out, as tier 1 does by covering them.

The property, over every project loader path each adapter declares (planted in the worktree as a
file and as a folder): a strict CLI started the way the runner starts it at tier 0 finds none of
them where it starts or in any parent of it, which is where a CLI looks (OpenCode and Codex
search the project's parents too). The stand-in CLI below does exactly that search and prints
what it finds; the real CLIs are in test_tier0_loaders_e2e.py."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adapters import base
from adapters.base import CliAdapter, Episode, Event, EventKind, Invocation, Loaders
from bot.episode.runner import run_episode
from sandbox.base import Limits, SandboxConfig
from sandbox.tier0 import PROJECT_FOLDER, Tier0Spawner

AGENTS = tuple(base.names())
LOADERS = [(agent, path) for agent in AGENTS for path in base.get(agent).loaders.project]
# A CLI's project search: its start folder and every parent up to /, each declared path looked for.
FINDER = """
import json, os, sys
found, folder = [], os.getcwd()
while True:
    found += [os.path.join(folder, p) for p in sys.argv[1:] if os.path.lexists(os.path.join(folder, p))]
    if folder == "/":
        break
    folder = os.path.dirname(folder)
print(json.dumps({"text": json.dumps({"cwd": os.getcwd(), "found": found})}))
"""


class LoaderSearch(CliAdapter):
    """A CLI with `agent`'s declared loaders that reports which of them it can find."""

    name = "loader-search"

    def __init__(self, agent: str):
        self.loaders: Loaders = base.get(agent).loaders

    def command(self, episode: Episode) -> Invocation:
        return Invocation(argv=[sys.executable, "-c", FINDER, *self.loaders.project])

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        return [Event(EventKind.TEXT, text=str(obj["text"]), raw=raw)]


def _plant(worktree: Path, path: str, kind: str) -> None:
    target = worktree / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "folder":
        (target / "plugin").mkdir(parents=True)
        (target / "plugin" / "pwn.js").write_text("planted")
    else:
        target.write_text('{"plugin": ["./pwn.js"]}')


async def _search(tmp_path: Path, agent: str, mode: str = "strict") -> dict:
    worktree, home = tmp_path / "data" / "worktrees" / "t", tmp_path / "data" / "homes" / "t" / agent
    worktree.mkdir(parents=True, exist_ok=True)
    episode = Episode(prompt="p", workdir=str(worktree), home=home, mode=mode)
    config = SandboxConfig(workdir=worktree, home=home, min_tier=0, writable=mode == "native",
                           limits=Limits(timeout_s=30))
    result = await run_episode(LoaderSearch(agent), episode, Tier0Spawner(), config)
    assert result.ok, (result.error, result.stderr_tail)
    return json.loads(result.text)


@pytest.mark.parametrize("kind", ["file", "folder"])
@pytest.mark.parametrize("agent, path", LOADERS)
async def test_a_strict_cli_at_tier0_finds_no_loader_the_worktree_holds(tmp_path, agent, path, kind):
    _plant(tmp_path / "data" / "worktrees" / "t", path, kind)
    seen = await _search(tmp_path, agent)
    worktree = str(tmp_path / "data" / "worktrees" / "t")
    assert seen["cwd"] != worktree and not [found for found in seen["found"] if found.startswith(worktree)]


async def test_a_strict_cli_at_tier0_starts_in_an_empty_project_folder_of_its_own(tmp_path):
    home = tmp_path / "data" / "homes" / "t" / "opencode"
    left = home / PROJECT_FOLDER / ".opencode" / "plugin"
    left.mkdir(parents=True)
    (left / "pwn.js").write_text("left by an earlier run")
    seen = await _search(tmp_path, "opencode")
    assert seen == {"cwd": str(home / PROJECT_FOLDER), "found": []}


async def test_a_project_folder_replaced_by_a_link_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    (outside / ".opencode").mkdir(parents=True)
    home = tmp_path / "data" / "homes" / "t" / "opencode"
    (home / ".bot").mkdir(parents=True)
    (home / PROJECT_FOLDER).symlink_to(outside)
    seen = await _search(tmp_path, "opencode")
    assert seen["found"] == [] and (outside / ".opencode").is_dir()


async def test_a_native_cli_at_tier0_still_works_in_the_worktree(tmp_path):
    """Native mode asks for no masking (the repository's own config is the user's choice there)."""
    seen = await _search(tmp_path, "opencode", mode="native")
    assert seen["cwd"] == str(tmp_path / "data" / "worktrees" / "t")


async def test_a_run_command_at_tier0_still_starts_in_the_worktree(tmp_path):
    """The `run` tool's sandbox is writable and works in the worktree, masked paths or not."""
    worktree = tmp_path / "wt"
    worktree.mkdir()
    config = SandboxConfig(workdir=worktree, home=tmp_path / "home", min_tier=0, writable=True,
                           masked=base.get("opencode").loaders.project, limits=Limits(timeout_s=30))
    proc = await Tier0Spawner().start(config, ["pwd"], {})
    out = await proc.stdout.read()
    await proc.wait()
    assert out.decode().strip() == str(worktree)
