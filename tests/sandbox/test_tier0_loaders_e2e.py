"""Each real CLI, strict, at tier 0 (no filesystem view to cover its loaders in), over a worktree
holding a planted program or instruction at every project loader path its adapter declares:
nothing planted runs and no planted instruction reaches the model, while the episode still
answers through the bridge (the positive signal that the CLI got as far as a planted program
would have run). Tier 0 starts a strict CLI in a project folder of its own (sandbox/tier0.py)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from adapters import base
from adapters.base import Bridge, Credentials, Episode
from bot.episode.runner import run_episode
from sandbox.base import Limits, SandboxConfig
from sandbox.tier0 import Tier0Spawner
from tests.adapters.mcp_echo import EchoMCP
from tests.adapters.test_e2e_clis import AGENTS, FAKE_KEY
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, call
from tests.sandbox.test_escape_loaders import OWN_TOOL, TOKEN, WORKTREE, Planted, _js, _json, _plant, _sh, _skill

pytestmark = [pytest.mark.e2e]


def _hooks(name: str) -> dict:
    return {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": _sh(name)}]}]}}


# Beyond test_escape_loaders' plantings, one for each declared project path it leaves out.
MORE = {
    "claude": {"CLAUDE.local.md": "LOADER-MARKER-claude-local-md\n",
               ".claude-plugin/plugin.json": _json({"name": "pwn", "hooks": _hooks("claude-plugin")["hooks"]})},
    "codex": {},
    "opencode": {"opencode.jsonc": _json({"plugin": ["./pwn-jsonc.js"]}), "pwn-jsonc.js": _js("opencode-jsonc"),
                 "tui.json": _json({"plugin": ["./pwn-tui.js"]}), "tui.jsonc": _json({"plugin": ["./pwn-tui.js"]}),
                 "pwn-tui.js": _js("opencode-tui"),
                 ".claude/skills/pwn/SKILL.md": _skill("LOADER-MARKER-opencode-claude-skill"),
                 ".agents/skills/pwn/SKILL.md": _skill("LOADER-MARKER-opencode-agents-skill")},
    "gemini": {".agents/skills/pwn/SKILL.md": _skill("LOADER-MARKER-gemini-agents-skill")},
}


def planted(agent: str, worktree: Path) -> dict[str, str]:
    """Every planting for `agent`, its paths into the sandbox (`/workspace`) made the host's."""
    files = WORKTREE[agent] | MORE[agent]
    return {path: text.replace("/workspace", str(worktree)) for path, text in files.items()}


def _covers(path: str, loader: str) -> bool:
    return path == loader or path.startswith(loader + "/")


@pytest.mark.parametrize("agent", AGENTS)
def test_every_declared_project_loader_has_a_planting(agent, tmp_path):
    """The plantings cover each project path the adapter declares: the e2e below tests them all."""
    paths = planted(agent, tmp_path)
    assert [loader for loader in base.get(agent).loaders.project if not any(_covers(p, loader) for p in paths)] == []


async def _turn(agent: str, root: Path, fake: FakeProvider, server: EchoMCP):
    adapter, spawner = base.get(agent, current().operator_for(agent)), Tier0Spawner()
    worktree, home = root / "worktree", root / "home" / agent
    config = SandboxConfig(workdir=worktree, home=home, min_tier=0, limits=Limits(timeout_s=120),
                           bridge_upstream=("127.0.0.1", server.port), tmpdir=home / ".tmp")
    episode = Episode(prompt="Call the echo tool", workdir=str(worktree), home=home, base_url=fake.url,
                      bridge=Bridge(url=spawner.inside_bridge_url(config), token=TOKEN, tools=("echo",)),
                      credentials=Credentials(env={adapter.credential_env[0]: FAKE_KEY}))
    return await run_episode(adapter, episode, spawner, config)


@pytest.fixture(scope="module", params=AGENTS)
def at_tier0(request, tmp_path_factory) -> Planted:
    agent, root = request.param, tmp_path_factory.mktemp(f"tier0-{request.param}")
    _plant(root / "worktree", planted(agent, root / "worktree"))
    with FakeProvider() as fake, EchoMCP(token=TOKEN) as server:
        fake.script(*OWN_TOOL.get(agent, ()), call("echo", {"text": "ping"}))
        result = asyncio.run(_turn(agent, root, fake, server))
        sent = json.dumps([request.body for request in fake.requests])
    sentinels = sorted(path.name for path in root.rglob("SENTINEL-*"))
    return Planted(agent, result, list(server.calls), sentinels, sent)


def test_no_program_planted_at_a_loader_runs_at_tier0(at_tier0):
    assert at_tier0.result.ok, (at_tier0.result.error, at_tier0.result.stderr_tail)
    assert at_tier0.echoed == [{"tool": "echo", "args": {"text": "ping"}}], at_tier0.echoed
    assert at_tier0.sentinels == []


def test_no_instruction_planted_at_a_loader_reaches_the_model_at_tier0(at_tier0):
    assert at_tier0.result.ok, (at_tier0.result.error, at_tier0.result.stderr_tail)
    assert "LOADER-MARKER" not in at_tier0.sent
