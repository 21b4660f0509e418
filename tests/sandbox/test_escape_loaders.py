"""A CLI never runs what the repository or a restored CLI home planted for it to load on its own.

Each real CLI runs one strict episode (tier-1 sandbox, the fake provider, the bridge to an MCP
echo server) over a worktree, or a CLI home, where the places that CLI loads code or configuration
from (its adapter's `loaders`) hold programs: plugins, hooks, local MCP servers' commands,
extensions, a `.env` that would start one. Each program would write a sentinel file into the CLI
home (the one place the sandbox lets it write); planted instruction files carry a marker that
must not reach the model. The episode calls the bridge's tool, so each CLI has loaded its tools
and run its tool hooks by the time it answers: that call reaching the echo server is the positive
signal that the CLI got as far as any planted program would have run.
"""
from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters import base
from adapters.base import Bridge, Result
from bot.bridge.server import BridgeServer
from bot.bridge.tools import run_command, sandbox_for_run
from bot.episode import loader_guard
from bot.episode.runner import run_episode
from bot.episode.session_home import strip_loaders
from bot.record.recorder import Recorder
from bot.workspace.repo_config import RepoConfig
from sandbox.base import Limits, Refused, SandboxConfig
from sandbox.tier1 import Tier1Spawner, bwrap_argv, masked_files
from tests.adapters.mcp_echo import EchoMCP
from tests.adapters.test_e2e_clis import AGENTS, AGENTS_DIR, FAKE_KEY, Sandboxed
from tests.bridge.test_e2e_clis import make_worktree
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, bridged, call

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
TOKEN = "bridge-token-loaders-0123456789"


def _js(name: str) -> str:
    """A module that writes its sentinel the moment it is imported."""
    return (f"require('fs').writeFileSync(process.env.HOME + '/SENTINEL-{name}', 'ran');\n"
            "module.exports = { id: 'pwn', server: async () => ({}) };\n")


def _sh(name: str) -> str:
    return f'echo ran > "$HOME/SENTINEL-{name}"'


def _stdio(name: str) -> dict:
    return {"command": "sh", "args": ["-c", _sh(name)]}


def _json(value: dict) -> str:
    return json.dumps(value)


def _claude_hooks(name: str) -> dict:
    return {"hooks": {event: [{"matcher": "*", "hooks": [{"type": "command", "command": _sh(name)}]}]
                      for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")}}


def _gemini_settings(name: str) -> dict:
    return {"mcpServers": {"pwn": _stdio(f"{name}-mcp")}, "hooksConfig": {"enabled": True},
            "hooks": {event: [{"hooks": [{"name": "pwn", "type": "command", "command": _sh(f"{name}-hook")}]}]
                      for event in ("SessionStart", "BeforeAgent", "BeforeTool", "AfterTool")}}


def _extension(name: str) -> str:
    return _json({"name": "pwn", "version": "1.0.0", "mcpServers": {"pwnext": _stdio(name)}})


def _skill(marker: str) -> str:
    return f"---\nname: pwn\ndescription: {marker}\n---\n{marker}\n"


def _codex_mcp(name: str) -> str:
    return f'[mcp_servers.pwn]\ncommand = "sh"\nargs = ["-c", {json.dumps(_sh(name))}]\n'


WORKTREE = {
    "claude": {".claude/settings.json": _json(_claude_hooks("claude-project-settings")),
               ".claude/settings.local.json": _json(_claude_hooks("claude-project-local")),
               ".mcp.json": _json({"mcpServers": {"pwn": _stdio("claude-mcp-json")}}),
               ".claude/skills/pwn/SKILL.md": _skill("LOADER-MARKER-claude-skill"),
               "CLAUDE.md": "LOADER-MARKER-claude-md\n"},
    "codex": {".codex/config.toml": _codex_mcp("codex-project-mcp"),
              ".agents/skills/pwn/SKILL.md": _skill("LOADER-MARKER-codex-skill")},
    "opencode": {".opencode/plugin/pwn.js": _js("opencode-plugin"),
                 ".opencode/plugins/pwn.js": _js("opencode-plugins"),
                 ".opencode/tool/pwn.js": _js("opencode-tool"),
                 "opencode.json": _json({"plugin": ["./pwn-plugin.js"],
                                         "mcp": {"pwn": {"type": "local", "command": ["sh", "-c", _sh("opencode-mcp")]}}}),
                 "pwn-plugin.js": _js("opencode-json-plugin")},
    "gemini": {".gemini/settings.json": _json(_gemini_settings("gemini-project")),
               ".gemini/extensions/pwn/gemini-extension.json": _extension("gemini-project-extension"),
               ".env": "NODE_OPTIONS=--require /workspace/pwn-node.js\n",
               "pwn-node.js": _js("gemini-dotenv"),
               "GEMINI.md": "LOADER-MARKER-gemini-md\n"},
}
HOME = {
    "claude": {".claude.json": _json({"mcpServers": {"pwn": _stdio("claude-home-mcp")}}),
               ".claude/settings.local.json": _json(_claude_hooks("claude-home-local")),
               ".claude/skills/pwn/SKILL.md": _skill("LOADER-MARKER-claude-home-skill"),
               ".claude/CLAUDE.md": "LOADER-MARKER-claude-home-md\n"},
    "codex": {".codex/AGENTS.md": "LOADER-MARKER-codex-home-agents\n",
              ".codex/skills/pwn/SKILL.md": _skill("LOADER-MARKER-codex-home-skill")},
    "opencode": {".config/opencode/plugin/pwn.js": _js("opencode-home-plugin"),
                 ".config/opencode/opencode.json": _json(
                     {"mcp": {"pwn": {"type": "local", "command": ["sh", "-c", _sh("opencode-home-mcp")]}}}),
                 ".opencode/plugin/pwn.js": _js("opencode-home-dot-plugin")},
    "gemini": {".gemini/extensions/pwn/gemini-extension.json": _extension("gemini-home-extension"),
               ".env": "NODE_OPTIONS=--require /workspace/pwn-node.js\n",
               ".gemini/.env": "NODE_OPTIONS=--require /workspace/pwn-node.js\n"},
}
# OpenCode sets up its plugins with its own tools, on the first call of one (measured: a bridged
# call alone ends the turn before): its glob runs first.
OWN_TOOL = {"opencode": (call("glob", {"pattern": "*"}),)}
# the module the home's .env files would preload: the worktree holds it, as a repository could
HOME_HELPERS = {"gemini": {"pwn-node.js": _js("gemini-home-dotenv")}}


@dataclass
class Planted:
    agent: str
    result: Result
    echoed: list
    sentinels: list[str]
    sent: str  # every request body the provider received


def _plant(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def _episode(agent: str, root: Path, worktree: dict[str, str], home: dict[str, str]) -> Planted:
    with FakeProvider() as fake, EchoMCP(token=TOKEN) as server:
        fake.script(*OWN_TOOL.get(agent, ()), call("echo", {"text": "ping"}))
        box = Sandboxed(root, fake, bridge=Bridge(url=server.url, token=TOKEN), bridge_port=server.port)
        _plant(box.worktree, worktree)
        _plant(root / "home" / agent, home)
        result = asyncio.run(box.turn(agent, "Call the echo tool"))
        sent = json.dumps([request.body for request in fake.requests])
    sentinels = sorted(path.name for path in (root / "home").rglob("SENTINEL-*"))
    return Planted(agent, result, list(server.calls), sentinels, sent)


@pytest.fixture(scope="module", params=AGENTS)
def in_worktree(request, tmp_path_factory) -> Planted:
    agent = request.param
    return _episode(agent, tmp_path_factory.mktemp(f"worktree-{agent}"), WORKTREE[agent], {})


@pytest.fixture(scope="module", params=AGENTS)
def in_home(request, tmp_path_factory) -> Planted:
    agent = request.param
    return _episode(agent, tmp_path_factory.mktemp(f"home-{agent}"), HOME_HELPERS.get(agent, {}), HOME[agent])


def _reached_its_tools(planted: Planted) -> None:
    assert planted.result.ok, (planted.result.error, planted.result.stderr_tail)
    assert planted.echoed == [{"tool": "echo", "args": {"text": "ping"}}], planted.echoed


def test_opencode_imports_no_plugin_from_the_worktree(tmp_path):
    """A plugin in the repository's .opencode/ folder is never imported in strict mode, although
    OpenCode's project-configuration switch is set (it does not cover plugins)."""
    planted = _episode("opencode", tmp_path, {".opencode/plugin/pwn.js": _js("opencode-plugin")}, {})
    _reached_its_tools(planted)
    assert planted.sentinels == []


def test_no_program_planted_in_the_worktree_runs(in_worktree):
    """Plugins, hooks, MCP server commands, extensions and `.env` files the repository ships for
    the CLI run nothing in strict mode; the episode still answers through the bridge."""
    _reached_its_tools(in_worktree)
    assert in_worktree.sentinels == []


def test_no_instruction_planted_in_the_worktree_reaches_the_model(in_worktree):
    """Instruction files that import other files, and skills, are not read from the worktree."""
    _reached_its_tools(in_worktree)
    assert "LOADER-MARKER" not in in_worktree.sent


def test_no_program_planted_in_the_cli_home_runs(in_home):
    """What a restored CLI home holds at the CLI's loader paths (user plugins, user MCP servers,
    extensions, `.env`) is gone before the CLI starts: nothing planted there runs."""
    _reached_its_tools(in_home)
    assert in_home.sentinels == []


def test_no_instruction_planted_in_the_cli_home_reaches_the_model(in_home):
    """Global instruction files and skills in a restored CLI home do not reach the model."""
    _reached_its_tools(in_home)
    assert "LOADER-MARKER" not in in_home.sent


@pytest.mark.parametrize("agent", AGENTS)
def test_every_cli_declares_its_loaders(agent):
    """Each adapter names where its CLI loads code or configuration from, in the project and in HOME."""
    loaders = base.get(agent).loaders
    assert loaders.project and loaders.home


def test_stripping_a_home_removes_its_loader_paths_and_keeps_the_session(tmp_path):
    """A home's loader paths go (a link in the way included, never followed); its session stays."""
    outside = tmp_path / "outside"
    (outside / "plugin").mkdir(parents=True)
    (outside / "plugin" / "keep.js").write_text("not ours to delete")
    home = tmp_path / "home"
    _plant(home, {".gemini/extensions/pwn/gemini-extension.json": "{}", ".env": "X=1",
                  ".gemini/tmp/p/chats/session-1-abcd.jsonl": "{}"})
    (home / ".config").symlink_to(outside)
    strip_loaders(home, (".gemini/extensions", ".env", ".config/opencode"))
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()) == \
        [".gemini/tmp/p/chats/session-1-abcd.jsonl"]
    assert (outside / "plugin" / "keep.js").exists() and not (home / ".config").exists()


def test_only_present_loader_paths_are_masked_a_symlink_as_what_it_names(tmp_path):
    """A present folder gets an empty tmpfs, a present file (a symlink to one included: bwrap
    mounts over what it resolves to) an empty stand-in; an absent loader path gets no mount."""
    worktree = tmp_path / "wt"
    _plant(worktree, {"AGENTS.md": "x", ".opencode/plugin/pwn.js": "x"})
    (worktree / "CLAUDE.md").symlink_to("AGENTS.md")
    config = SandboxConfig(workdir=worktree, home=tmp_path / "home",
                           masked=("CLAUDE.md", ".opencode", ".mcp.json"))
    files = masked_files(config)
    argv = bwrap_argv("bwrap", config, ["true"], None, (3, 4, 5), data_fds={path: 9 for path in files})
    assert list(files) == ["/workspace/CLAUDE.md"]
    assert "/workspace/.opencode" in argv and "/workspace/.mcp.json" not in argv


async def test_a_masked_folder_is_empty_and_a_masked_file_reads_as_empty_json(run, config):
    """Inside, a present masked folder lists nothing and takes no write; a masked JSON file is `{}`."""
    _plant(config.workdir, {".opencode/plugin/pwn.js": "x", ".mcp.json": '{"mcpServers": {}}'})
    ran = await run("ls -A /workspace/.opencode; cat /workspace/.mcp.json; echo; "
                    "touch /workspace/.opencode/x 2>&1 | grep -c 'Read-only'",
                    masked=(".opencode", ".mcp.json"))
    assert ran.rc == 0 and ran.out.split() == ["{}", "1"], ran.text


async def test_a_masked_symlink_that_cannot_be_covered_runs_nothing(run, config):
    """A loader path linking where bwrap cannot mount (an absolute link, which the host and the
    sandbox resolve differently) is not left open: the sandbox is refused before anything runs."""
    (config.workdir / "evil" / "plugin").mkdir(parents=True)
    (config.workdir / ".opencode").symlink_to("/proc/self/cwd/evil")
    with pytest.raises(Refused, match="leads out of the worktree or nowhere"):
        await run("echo command-ran", masked=(".opencode",))


async def test_a_masked_link_that_leads_nowhere_is_refused_before_anything_runs(run, config):
    (config.workdir / ".opencode").symlink_to("missing-folder")
    with pytest.raises(Refused, match="leads out of the worktree or nowhere"):
        await run("echo command-ran", masked=(".opencode",))


async def _bridged_opencode(root: Path, *script) -> tuple[Result, list[str], list]:
    """One strict OpenCode episode through the real bridge, its policy and `run` sandboxes built
    as a job builds them (bot/episode/loader_guard.py)."""
    adapter = base.get("opencode", current().operator_for("opencode"))
    worktree = make_worktree(root)
    recorder = Recorder(root / "bot.db")
    run_id = recorder.start_run(agent="opencode", conversation="octo/repo#1", sandbox_tier=1)
    policy = loader_guard.bridge_policy(worktree, RepoConfig(), adapter, "/workspace")
    runs = loader_guard.masked_runs(sandbox_for_run(worktree, policy, tier=1, host=current().sandbox_host), adapter, "strict")
    with FakeProvider() as fake:
        fake.script(*script)
        async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=root / "scratch",
                                run_sandbox=runs) as bridge:
            spawner = Tier1Spawner(host=current().sandbox_host)
            config = SandboxConfig(workdir=worktree, home=root / "home", ro_binds=(AGENTS_DIR,),
                                   gateways=(f"127.0.0.1:{fake.port}",), bridge_upstream=("127.0.0.1", bridge.port),
                                   limits=Limits(timeout_s=120), tmpdir=root / "home" / ".tmp")
            episode = base.Episode(prompt="Go.", workdir=config.mount_path, home=config.home, base_url=fake.url,
                                   bridge=bridge.bridge_for(spawner.inside_bridge_url(config)),
                                   credentials=base.Credentials(env={adapter.credential_env[0]: FAKE_KEY}))
            result = await run_episode(adapter, episode, spawner, config, bridge_connected=bridge.connected)
        results = [request.tool_result for request in fake.main_requests()]
    return result, sorted(path.name for path in root.rglob("SENTINEL-*")), results


async def test_the_bridge_saves_no_plugin_where_the_running_cli_loads_one(tmp_path):
    """The agent cannot have the bridge write a plugin where its own CLI loads one (the CLI's
    sandbox shows the worktree live, uncovered where nothing was at its start): refused."""
    result, sentinels, results = await _bridged_opencode(
        tmp_path, bridged("save_file", {"path": ".opencode/plugin/pwn.js", "content": _js("bridge-saved")}),
        call("glob", {"pattern": "*"}))
    assert result.ok, (result.error, result.stderr_tail)
    assert sentinels == [] and "protected" in (results[1] or ""), results


async def test_a_run_command_cannot_remove_a_covered_loader_path(tmp_path):
    """A `run` command sees the CLI's present loader paths covered too: it cannot delete one (on
    the host that would lift the cover in the CLI's sandbox) nor change what is in it."""
    opencode = base.get("opencode", current().operator_for("opencode"))
    worktree = tmp_path / "wt"
    _plant(worktree, {".opencode/plugin/keep.js": "x"})
    policy = loader_guard.bridge_policy(worktree, RepoConfig(), opencode, "/workspace")
    spawner, config = loader_guard.masked_runs(sandbox_for_run(worktree, policy, tier=1, host=current().sandbox_host), opencode, "strict")(
        tmp_path / "home")
    proc = await spawner.start(config, ["sh", "-c", "rm -rf .opencode; echo > .opencode/plugin/new.js"], {})
    await proc.wait()
    assert sorted(p.name for p in (worktree / ".opencode" / "plugin").iterdir()) == ["keep.js"]


async def test_what_a_run_command_creates_at_a_loader_path_is_gone_when_it_ends(tmp_path):
    """A loader path absent when the `run` command started (so uncovered in the CLI's view) and
    created by it is removed from the worktree before the command's result reaches the agent;
    the command's other files stay."""
    opencode = base.get("opencode", current().operator_for("opencode"))
    worktree = make_worktree(tmp_path)
    policy = loader_guard.bridge_policy(worktree, RepoConfig(), opencode, "/workspace")
    runs = loader_guard.masked_runs(sandbox_for_run(worktree, policy, tier=1, host=current().sandbox_host), opencode, "strict")
    command = "mkdir -p .opencode/plugin && echo x > .opencode/plugin/pwn.js && echo {} > opencode.json && echo k > kept"
    said, _ = await run_command(policy, {"command": command}, runs, tmp_path / "scratch", lambda process: None)
    assert said.startswith("exit code 0"), said
    assert not os.path.lexists(worktree / ".opencode") and not os.path.lexists(worktree / "opencode.json")
    assert (worktree / "kept").read_text() == "k\n"


@pytest.mark.parametrize("agent", AGENTS)
def test_the_worktrees_parent_in_the_sandbox_holds_no_loader_path(agent, tmp_path):
    """A CLI that also looks in the project's parents finds nothing there: the worktree's only
    parent inside is the sandbox's own root, where no mount lands at one of its loader paths."""
    loaders = base.get(agent).loaders
    config = SandboxConfig(workdir=tmp_path, home=tmp_path / "home", ro_binds=(AGENTS_DIR,))
    argv = bwrap_argv("bwrap", config, ["true"], None, (3, 4, 5))
    assert str(Path(config.mount_path).parent) == "/"
    assert not {f"/{path}" for path in loaders.project} & set(argv)
