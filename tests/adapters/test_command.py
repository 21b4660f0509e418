"""command(): argv, env names and HOME files per CLI and mode; never a secret in argv."""
from __future__ import annotations

import json

import pytest

from adapters import base
from adapters.base import Credentials
from tests.adapters.helpers import bridge, episode
from tests.entry_settings import current

SECRET = "sk-test-secret-value-0123456789"
AGENTS = tuple(base.names())  # the registry: every adapter


def _argv_text(inv) -> str:
    return "\0".join(inv.argv)


def _command(agent, tmp_path, **overrides):
    return base.get(agent, current().operator_for(agent)).command(episode(tmp_path, **overrides))


def _value_after(argv, flag):
    return argv[argv.index(flag) + 1]


@pytest.mark.parametrize("agent", AGENTS)
def test_registry_knows_every_agent(agent):
    """get(name) returns the adapter of that name."""
    assert base.get(agent).name == agent and agent in base.names()


@pytest.mark.parametrize("agent", AGENTS)
def test_no_secret_reaches_argv(agent, tmp_path):
    """Credentials and the bridge token travel in env or HOME files, never argv."""
    creds = Credentials(env={"ANTHROPIC_API_KEY": SECRET, "OPENAI_API_KEY": SECRET, "GEMINI_API_KEY": SECRET})
    inv = _command(agent, tmp_path, credentials=creds, bridge=bridge(), base_url="http://127.0.0.1:9")
    assert SECRET not in _argv_text(inv) and bridge().token not in _argv_text(inv)
    assert inv.env["BOT_BRIDGE_TOKEN"] == bridge().token


@pytest.mark.parametrize("agent", AGENTS)
def test_prompt_goes_on_stdin(agent, tmp_path):
    """Every CLI gets the prompt on stdin (variadic flags, codex's stdin read, opencode quoting)."""
    inv = _command(agent, tmp_path, prompt="fix the bug please")
    assert inv.stdin == b"fix the bug please" and "fix the bug please" not in inv.argv


@pytest.mark.parametrize("agent", AGENTS)
def test_binary_override_by_env(agent, tmp_path, monkeypatch):
    """BOT_<AGENT>_BIN replaces the CLI path."""
    monkeypatch.setenv(f"BOT_{agent.upper()}_BIN", "/opt/x/cli")
    assert _command(agent, tmp_path).argv[0] == "/opt/x/cli"


@pytest.mark.parametrize("agent", AGENTS)
def test_model_from_env(agent, tmp_path, monkeypatch):
    """BOT_<AGENT>_MODEL selects the model."""
    monkeypatch.setenv(f"BOT_{agent.upper()}_MODEL", "some-model")
    inv = _command(agent, tmp_path)
    assert "some-model" in _argv_text(inv) + inv.env.get("OPENCODE_CONFIG_CONTENT", "")


# --- Claude Code ------------------------------------------------------------------------------

def test_claude_strict_offers_only_read_and_the_bridge(tmp_path):
    """Strict mode: read-only built-ins (not pre-allowed), dontAsk, mcp__bot allowed, native tools denied."""
    inv = _command("claude", tmp_path, bridge=bridge())
    assert _value_after(inv.argv, "--tools") == "Read,Grep,Glob"
    assert _value_after(inv.argv, "--permission-mode") == "dontAsk"
    assert _value_after(inv.argv, "--allowedTools") == "mcp__bot"  # reads outside the cwd are refused
    settings = json.loads(inv.files[".claude/settings.json"])
    assert settings["sandbox"]["enabled"] is False and "Bash" in settings["permissions"]["deny"]


def test_claude_web_tools_only_with_web_access(tmp_path):
    """WebSearch and WebFetch are denied unless the repository turns web access on."""
    off, on = _command("claude", tmp_path), _command("claude", tmp_path, web_access=True)
    assert {"WebSearch", "WebFetch"} <= set(json.loads(off.files[".claude/settings.json"])["permissions"]["deny"])
    assert _value_after(on.argv, "--tools") == "Read,Grep,Glob,WebSearch,WebFetch"
    assert json.loads(on.files[".claude/settings.json"])["permissions"]["deny"] == \
        ["Edit", "Write", "Bash", "NotebookEdit"]


def test_claude_native_allows_edit_and_bash(tmp_path):
    """Native mode adds Edit, Write and Bash."""
    inv = _command("claude", tmp_path, mode="native")
    assert _value_after(inv.argv, "--tools") == "Read,Grep,Glob,Edit,Write,Bash"


def test_claude_mcp_config_file_expands_token_from_env(tmp_path):
    """The bridge config is a HOME file whose Authorization header names the env var."""
    inv = _command("claude", tmp_path, bridge=bridge())
    assert _value_after(inv.argv, "--mcp-config") == str(tmp_path / "home" / ".bot/claude-mcp.json")
    server = json.loads(inv.files[".bot/claude-mcp.json"])["mcpServers"]["bot"]
    assert server == {"type": "http", "url": "http://127.0.0.1:8765/mcp",
                      "headers": {"Authorization": "Bearer ${BOT_BRIDGE_TOKEN}"}}


def test_claude_ignores_project_settings(tmp_path):
    """Only user settings load, so a repository's .claude/settings.json cannot add hooks."""
    inv = _command("claude", tmp_path)
    assert _value_after(inv.argv, "--setting-sources") == "user" and "--strict-mcp-config" in inv.argv


def test_claude_resume(tmp_path):
    """A backend session id becomes --resume=ID (one argument: the id is never read as an option)."""
    assert "--resume=abc" in _command("claude", tmp_path, resume_session="abc").argv


def test_claude_gateway_and_quiet_env(tmp_path):
    """A gateway sets ANTHROPIC_BASE_URL (root, no /v1); telemetry and updates are off."""
    inv = _command("claude", tmp_path, base_url="http://127.0.0.1:9/v1")
    assert inv.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert inv.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1" and inv.env["DISABLE_AUTOUPDATER"] == "1"


def test_claude_oauth_token_travels_in_env(tmp_path):
    """An OAuth token from `claude setup-token` is passed as CLAUDE_CODE_OAUTH_TOKEN."""
    inv = _command("claude", tmp_path, credentials=Credentials(env={"CLAUDE_CODE_OAUTH_TOKEN": SECRET}))
    assert inv.env["CLAUDE_CODE_OAUTH_TOKEN"] == SECRET


def test_claude_instruction_is_appended_to_the_system_prompt(tmp_path):
    """The standing instruction ranks below Claude's own system prompt."""
    inv = _command("claude", tmp_path, instruction="Be brief.")
    assert _value_after(inv.argv, "--append-system-prompt") == "Be brief."


# --- Codex -----------------------------------------------------------------------------------

def _codex_config(inv) -> dict[str, str]:
    pairs = [inv.argv[i + 1] for i, arg in enumerate(inv.argv) if arg == "-c"]
    return dict(pair.split("=", 1) for pair in pairs)


def test_codex_fresh_reads_prompt_from_stdin_and_writes_last_message(tmp_path):
    """exec --json ... -o FILE -: prompt on stdin, answer file in HOME, analytics off."""
    inv = _command("codex", tmp_path)
    assert inv.argv[1:3] == ["exec", "--json"] and inv.argv[-1] == "-"
    assert _value_after(inv.argv, "-o") == str(tmp_path / "home" / inv.last_message_file)
    assert _codex_config(inv)["analytics.enabled"] == "false"


def test_codex_resume_has_no_sandbox_flag(tmp_path):
    """exec resume ID - with the sandbox mode given by -c (resume rejects --sandbox)."""
    inv = _command("codex", tmp_path, resume_session="0199-thread")
    assert inv.argv[1:3] == ["exec", "resume"] and inv.argv[-2:] == ["0199-thread", "-"]
    assert "--sandbox" not in inv.argv and _codex_config(inv)["sandbox_mode"] == '"read-only"'


def test_codex_strict_removes_shell_tools(tmp_path):
    """Strict mode switches off the shell and unified exec tools."""
    config = _codex_config(_command("codex", tmp_path))
    assert config["features.shell_tool"] == "false" and config["features.unified_exec"] == "false"


def test_codex_bridge_tools_are_direct_in_code_mode(tmp_path):
    """The bridge's namespace is direct-only: its tools are offered as plain calls, not deferred
    behind a search inside code mode's `exec`."""
    config = _codex_config(_command("codex", tmp_path, bridge=bridge()))
    assert config["features.code_mode.direct_only_tool_namespaces"] == '["mcp__bot"]'


@pytest.mark.parametrize("mode", ("strict", "native"))
def test_codex_web_search_only_with_web_access(mode, tmp_path):
    """OpenAI's web_search is disabled unless the repository turns web access on."""
    assert _codex_config(_command("codex", tmp_path, mode=mode))["web_search"] == '"disabled"'
    assert _codex_config(_command("codex", tmp_path, mode=mode, web_access=True))["web_search"] == '"live"'


def test_codex_plugin_sync_is_off(tmp_path):
    """Plugins off: otherwise Codex contacts github.com and chatgpt.com at every start."""
    assert _codex_config(_command("codex", tmp_path))["features.plugins"] == "false"


def test_codex_native_turns_its_own_sandbox_off(tmp_path):
    """Native mode: Codex's sandbox cannot nest in ours, so it is danger-full-access with shell on."""
    config = _codex_config(_command("codex", tmp_path, mode="native"))
    assert config["sandbox_mode"] == '"danger-full-access"' and "features.shell_tool" not in config


def test_codex_bridge_is_required_and_preapproved(tmp_path):
    """The bot's MCP server: url, bearer env var, approve, required."""
    config = _codex_config(_command("codex", tmp_path, bridge=bridge()))
    assert config["mcp_servers.bot.url"] == '"http://127.0.0.1:8765/mcp"'
    assert config["mcp_servers.bot.bearer_token_env_var"] == '"BOT_BRIDGE_TOKEN"'
    assert config["mcp_servers.bot.default_tools_approval_mode"] == '"approve"'
    assert config["mcp_servers.bot.required"] == "true"


def test_codex_gateway_is_a_custom_provider(tmp_path):
    """A gateway becomes a custom Responses provider at <root>/v1 keyed by the credential var."""
    inv = _command("codex", tmp_path, base_url="http://127.0.0.1:9",
                   credentials=Credentials(env={"OPENAI_API_KEY": SECRET}))
    config = _codex_config(inv)
    assert config["model_provider"] == '"bot_gateway"'
    assert config["model_providers.bot_gateway.base_url"] == '"http://127.0.0.1:9/v1"'
    assert config["model_providers.bot_gateway.env_key"] == '"OPENAI_API_KEY"'


def test_codex_home_outside_tmp_with_auth_json(tmp_path):
    """CODEX_HOME is in the episode HOME and a ChatGPT auth.json credential is a file there."""
    inv = _command("codex", tmp_path, credentials=Credentials(files={".codex/auth.json": b'{"x":1}'}))
    assert inv.env["CODEX_HOME"] == str(tmp_path / "home" / ".codex")
    assert inv.files[".codex/auth.json"] == b'{"x":1}' and inv.ephemeral == (".codex/auth.json",)


def test_codex_api_key_is_offered_as_codex_api_key(tmp_path):
    """OPENAI_API_KEY is mirrored to CODEX_API_KEY, which `codex exec` reads."""
    inv = _command("codex", tmp_path, credentials=Credentials(env={"OPENAI_API_KEY": SECRET}))
    assert inv.env["CODEX_API_KEY"] == SECRET


# --- OpenCode --------------------------------------------------------------------------------

def _opencode_config(inv) -> dict:
    return json.loads(inv.env["OPENCODE_CONFIG_CONTENT"])


def test_opencode_strict_denies_edit_bash_and_the_web(tmp_path):
    """Strict permissions in the inline config and OPENCODE_PERMISSION; project config off."""
    inv = _command("opencode", tmp_path)
    assert _opencode_config(inv)["permission"] == {"edit": "deny", "bash": "deny", "read": "deny",
                                                    "external_directory": "deny", "webfetch": "deny",
                                                    "websearch": "deny"}
    assert json.loads(inv.env["OPENCODE_PERMISSION"])["bash"] == "deny"
    assert inv.env["OPENCODE_DISABLE_PROJECT_CONFIG"] == "1" and inv.env["OPENCODE_DISABLE_AUTOUPDATE"] == "1"


@pytest.mark.parametrize("mode", ("strict", "native"))
def test_opencode_web_tools_only_with_web_access(mode, tmp_path):
    """webfetch and websearch are allowed only when the repository turns web access on."""
    on = json.loads(_command("opencode", tmp_path, mode=mode, web_access=True).env["OPENCODE_PERMISSION"])
    off = json.loads(_command("opencode", tmp_path, mode=mode).env["OPENCODE_PERMISSION"])
    assert (on["webfetch"], on["websearch"], off["webfetch"], off["websearch"]) == ("allow", "allow", "deny", "deny")


def test_opencode_npm_is_offline(tmp_path):
    """npm offline: otherwise OpenCode installs its plugin package from registry.npmjs.org at start."""
    assert _command("opencode", tmp_path).env["npm_config_offline"] == "true"


def test_opencode_bridge_header_uses_env_placeholder(tmp_path):
    """The remote MCP server's header takes the token from {env:BOT_BRIDGE_TOKEN}."""
    server = _opencode_config(_command("opencode", tmp_path, bridge=bridge()))["mcp"]["bot"]
    assert server["headers"] == {"Authorization": "Bearer {env:BOT_BRIDGE_TOKEN}"} and server["type"] == "remote"


def test_opencode_resume_by_session(tmp_path):
    """--session=ses_… resumes."""
    assert "--session=ses_1" in _command("opencode", tmp_path, resume_session="ses_1").argv


def test_opencode_gateway_provider(tmp_path):
    """A gateway is an openai-compatible provider at <root>/v1, selected as the model."""
    config = _opencode_config(_command("opencode", tmp_path, base_url="http://127.0.0.1:9", model="m1"))
    assert config["provider"]["bot_gateway"]["options"]["baseURL"] == "http://127.0.0.1:9/v1"
    assert config["model"] == "bot_gateway/m1"


# --- Gemini ----------------------------------------------------------------------------------

def test_gemini_settings_select_auth_and_silence_telemetry(tmp_path):
    """settings.json selects gemini-api-key auth (else exit 41) and turns telemetry/updates off."""
    settings = json.loads(_command("gemini", tmp_path).files[".gemini/settings.json"])
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["telemetry"]["enabled"] is False and settings["general"]["enableAutoUpdate"] is False


def test_gemini_trusts_the_bridge_only(tmp_path):
    """The bot's server is trusted with a ${VAR} bearer and is the only MCP server allowed."""
    inv = _command("gemini", tmp_path, bridge=bridge())
    server = json.loads(inv.files[".gemini/settings.json"])["mcpServers"]["bot"]
    assert server["trust"] is True and server["headers"]["Authorization"] == "Bearer ${BOT_BRIDGE_TOKEN}"
    assert _value_after(inv.argv, "--allowed-mcp-server-names") == "bot"


def test_gemini_hooks_are_off(tmp_path):
    """Hooks off: a repository's .gemini/settings.json hooks would run commands natively."""
    settings = json.loads(_command("gemini", tmp_path).files[".gemini/settings.json"])
    assert settings["hooksConfig"] == {"enabled": False}


def test_gemini_strict_policy_denies_shell_and_writes(tmp_path):
    """Strict mode adds a policy file denying run_shell_command, write_file and replace."""
    inv = _command("gemini", tmp_path, bridge=bridge())
    policy = inv.files[".bot/gemini-policy.toml"].decode()
    assert _value_after(inv.argv, "--policy") == str(tmp_path / "home" / ".bot/gemini-policy.toml")
    assert '"run_shell_command"' in policy and 'decision = "deny"' in policy


@pytest.mark.parametrize("mode", ("strict", "native"))
def test_gemini_web_tools_denied_without_web_access(mode, tmp_path):
    """google_web_search and web_fetch are denied by policy in either mode unless web access is on."""
    import tomllib

    def denied(inv) -> set[str]:
        policy = inv.files.get(".bot/gemini-policy.toml", b"").decode()
        return {name for rule in tomllib.loads(policy).get("rule", []) if rule["decision"] == "deny"
                for name in rule["toolName"]}

    assert {"google_web_search", "web_fetch"} <= denied(_command("gemini", tmp_path, mode=mode))
    assert not {"google_web_search", "web_fetch"} & denied(_command("gemini", tmp_path, mode=mode, web_access=True))


def test_gemini_trusts_the_workspace_and_uses_the_gateway(tmp_path):
    """GEMINI_CLI_TRUST_WORKSPACE (else exit 55) and GOOGLE_GEMINI_BASE_URL for a gateway."""
    inv = _command("gemini", tmp_path, base_url="http://127.0.0.1:9")
    assert inv.env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert inv.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9"


def test_gemini_vertex_credentials_select_vertex_auth(tmp_path):
    """GOOGLE_GENAI_USE_VERTEXAI credentials select vertex-ai auth."""
    inv = _command("gemini", tmp_path, credentials=Credentials(env={"GOOGLE_GENAI_USE_VERTEXAI": "true"}))
    assert json.loads(inv.files[".gemini/settings.json"])["security"]["auth"]["selectedType"] == "vertex-ai"


def test_gemini_resume(tmp_path):
    """--resume=<uuid> resumes."""
    assert "--resume=u-1" in _command("gemini", tmp_path, resume_session="u-1").argv


def test_claude_login_probe_garbage_is_not_logged_in(tmp_path):
    """An auth probe printing garbage reads as logged out, with the variables to set."""
    logged_in, reason = base.get("claude")._login(lambda argv: (0, "{not json"))
    assert not logged_in and "ANTHROPIC_API_KEY" in reason


def test_gemini_strict_policy_allows_each_bridge_tool_by_name(tmp_path):
    """Every allow rule names its tool: Gemini rejects the whole policy file for an mcpName rule
    without a toolName (and then its deny rules would not apply)."""
    import tomllib

    inv = base.get("gemini").command(episode(tmp_path, bridge=bridge()))
    rules = tomllib.loads(inv.files[".bot/gemini-policy.toml"].decode())["rule"]
    allowed = [r for r in rules if r["decision"] == "allow"]
    assert [(r["mcpName"], r["toolName"]) for r in allowed] == [("bot", "read_thread"), ("bot", "write_file")]
    assert all("toolName" in r for r in rules)


ATTACHMENTS = "/data/attachments/octo-repo-12"


def test_claude_may_read_the_attachments_folder(tmp_path):
    """Each read folder is an added directory of Claude's (its Read opens files there without
    asking); no write tool comes with it in strict mode."""
    inv = _command("claude", tmp_path, read_dirs=(ATTACHMENTS,))
    assert _value_after(inv.argv, "--add-dir") == ATTACHMENTS and inv.argv.count("--add-dir") == 1
    assert _value_after(inv.argv, "--tools") == "Read,Grep,Glob"
    assert "--add-dir" not in _command("claude", tmp_path).argv


def test_gemini_includes_the_attachments_folder_in_its_workspace(tmp_path):
    """Each read folder joins Gemini's workspace, which its read tools are confined to."""
    inv = _command("gemini", tmp_path, read_dirs=(ATTACHMENTS,))
    assert _value_after(inv.argv, "--include-directories") == ATTACHMENTS
    assert "--include-directories" not in _command("gemini", tmp_path).argv


@pytest.mark.parametrize("agent", AGENTS)
def test_read_folder_argument_is_followed_by_a_flag_or_nothing(agent, tmp_path):
    """A variadic folder flag never swallows the next argument (the prompt is on stdin)."""
    argv = _command(agent, tmp_path, read_dirs=(ATTACHMENTS,)).argv
    after = [argv[i + 2] for i, part in enumerate(argv[:-2]) if argv[i + 1] == ATTACHMENTS]
    assert all(part.startswith("-") for part in after), argv


def _opencode_permission(inv) -> dict:
    return json.loads(inv.env["OPENCODE_PERMISSION"])


def test_opencode_reads_only_the_attachments_folder(tmp_path):
    """OpenCode's read stays denied but for files in the read folder (by its path relative to the
    project, as OpenCode asks), and only that folder passes its outside-the-project check."""
    permission = _opencode_permission(_command("opencode", tmp_path, read_dirs=(ATTACHMENTS,)))
    assert permission["read"] == {"*": "deny", f"..{ATTACHMENTS}/*": "allow"}
    assert permission["external_directory"] == {"*": "deny", f"{ATTACHMENTS}/*": "allow"}
    assert (permission["edit"], permission["bash"]) == ("deny", "deny")
    assert json.loads(_command("opencode", tmp_path, read_dirs=(ATTACHMENTS,)).env["OPENCODE_CONFIG_CONTENT"])[
        "permission"] == permission


def test_opencode_never_allows_a_read_folder_inside_the_worktree(tmp_path):
    """A folder inside the worktree would let `read` follow a repository symlink: not allowed."""
    permission = _opencode_permission(_command("opencode", tmp_path, read_dirs=("/workspace/attached",)))
    assert permission["read"] == "deny" and permission["external_directory"] == "deny"
