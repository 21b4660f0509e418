"""Claude Code (`claude -p --output-format stream-json`).

Prompt on stdin (the variadic --tools/--allowedTools/--mcp-config would swallow a trailing
prompt); bridge by --mcp-config file with the bearer expanded from env; strict lockdown by
--tools (only Read, Grep, Glob, which read the worktree only: reads outside it ask, and dontAsk
refuses; each of the episode's read folders, the thread's attachments, is an --add-dir, so
Read opens files there too) + dontAsk + an allow-list of the bridge server; project settings ignored
(--setting-sources user) so a repository cannot add hooks; Claude's own sandbox off; WebSearch and
WebFetch offered only when the repository turns web access on.
"""
from __future__ import annotations

import json

from adapters.base import (
    UUID,
    Bridge,
    CliAdapter,
    Episode,
    Event,
    EventKind,
    Invocation,
    Loaders,
    ProbeFn,
    RelayChannel,
    Usage,
    http_failure,
    json_object,
    register,
)
from adapters.facts import ANTHROPIC_API, ANTHROPIC_OAUTH, ActionInputs, CredentialKind

QUIET_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
             "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1",
             # its default retries a rejected key (401) with backoff for minutes; 3 still rides out a 529
             "CLAUDE_CODE_MAX_RETRIES": "3"}
READ_TOOLS = ("Read", "Grep", "Glob")  # not in the default set of 2.1.x, offered when named
NATIVE_TOOLS = ("Edit", "Write", "Bash")
# WebSearch runs on Anthropic's servers (no egress proxy sees it): only with web access on.
WEB_TOOLS = ("WebSearch", "WebFetch")
DENIED_IN_STRICT = NATIVE_TOOLS + ("NotebookEdit",)
MCP_CONFIG = ".bot/claude-mcp.json"
SETTINGS = ".claude/settings.json"


class ClaudeCode(CliAdapter):
    name = "claude"
    executable = "claude"
    default_allowed_hosts = ("api.anthropic.com",)
    unobserved = ("claude's model calls", "its context compaction",
                  "its direct channel to api.anthropic.com")
    min_version = "2.1.0"
    credential_env = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN")
    # .claude/: settings(.local).json (hooks, permissions, MCP servers), agents, commands, skills,
    # hooks, output styles, rules; .mcp.json (stdio MCP servers, i.e. programs); CLAUDE.md and
    # CLAUDE.local.md (their @imports reach any file), also read from every parent of the project;
    # .claude-plugin/ (a plugin marketplace). HOME: the same folders under ~/.claude and
    # ~/.claude.json (user and per-project MCP servers, allowed tools).
    loaders = Loaders(
        project=(".claude", ".mcp.json", "CLAUDE.md", "CLAUDE.local.md", ".claude-plugin"),
        home=(".claude/settings.json", ".claude/settings.local.json", ".claude/agents", ".claude/commands",
              ".claude/skills", ".claude/plugins", ".claude/hooks", ".claude/output-styles", ".claude/rules",
              ".claude/CLAUDE.md", ".claude.json", ".mcp.json"),
        parents=True)
    unknown_session_markers = ("No conversation found with session ID",)
    session_id_pattern = UUID
    resume_state = (".claude/projects/*/*.jsonl",)  # <cwd with / as -> / <session id>.jsonl
    relay_channels = (RelayChannel("CLAUDE_CODE_OAUTH_TOKEN", "anthropic", True, ("CLAUDE_CODE_OAUTH_TOKEN",)),
                      RelayChannel("ANTHROPIC_API_KEY", "anthropic", False, ("ANTHROPIC_API_KEY",)))
    title = "Claude"
    aliases = ("claude-code", "claudecode")
    credential_kinds = (
        CredentialKind("oauth_token", "Claude subscription token",
                       "Run `claude setup-token` and paste the token it prints.",
                       env=("CLAUDE_CODE_OAUTH_TOKEN",), shape=ANTHROPIC_OAUTH),
        CredentialKind("api_key", "Anthropic API key", "Create one at console.anthropic.com → API keys.",
                       env=("ANTHROPIC_API_KEY",), shape=ANTHROPIC_API))
    operator_env = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
    action_inputs = ActionInputs(("anthropic-api-key", "ANTHROPIC_API_KEY"),
                                 subscription=("claude-code-oauth-token", "CLAUDE_CODE_OAUTH_TOKEN"))
    npm_package = "@anthropic-ai/claude-code"
    credential_files = (".claude/.credentials.json",)

    def command(self, episode: Episode) -> Invocation:
        native = episode.mode == "native"
        builtins = READ_TOOLS + (NATIVE_TOOLS if native else ()) + (WEB_TOOLS if episode.web_access else ())
        # Read/Grep/Glob are offered but not pre-allowed: a read inside the cwd needs no permission,
        # one outside it (a path or a symlink resolved out of the worktree) asks, and dontAsk refuses.
        allowed = [tool for tool in builtins if tool not in READ_TOOLS]
        argv = [self.binary, "-p", "--output-format", "stream-json", "--verbose",
                "--strict-mcp-config", "--setting-sources", "user", "--permission-mode", "dontAsk",
                "--tools", ",".join(builtins)]
        for folder in episode.read_dirs:  # its read tools may open files there without asking
            argv += ["--add-dir", folder]
        files = {SETTINGS: _settings(native, episode.web_access)} | episode.credentials.files
        env = dict(QUIET_ENV) | episode.credentials.env
        if episode.bridge:
            files[MCP_CONFIG] = _mcp_config(episode.bridge)
            argv += ["--mcp-config", str(episode.home / MCP_CONFIG)]
            allowed.append(f"mcp__{episode.bridge.server_name}")
            env[episode.bridge.token_env] = episode.bridge.token
        if allowed:
            argv += ["--allowedTools", ",".join(allowed)]
        if episode.resume_session:
            argv.append(f"--resume={episode.resume_session}")  # one argument: never an option
        if model := self.model(episode):
            argv += ["--model", model]
        if episode.instruction:
            argv += ["--append-system-prompt", episode.instruction]
        if base := self.base_url(episode):
            env["ANTHROPIC_BASE_URL"] = base
        return Invocation(argv=argv, env=env, stdin=episode.prompt.encode(), files=files,
                          ephemeral=tuple(episode.credentials.files))

    def _login(self, probe: ProbeFn) -> tuple[bool, str]:
        rc, out = probe([self.binary, "auth", "status", "--json"])
        status = json_object(out[out.find("{"):].encode()) if rc == 0 and "{" in out else None
        if status and status.get("loggedIn"):
            return True, f"logged in ({status.get('authMethod', 'unknown')})"
        logged_in, reason = self._env_login()
        return logged_in, reason if logged_in else \
            "not logged in: set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`"

    # parsing -------------------------------------------------------------------

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        kind, session = obj.get("type"), obj.get("session_id")
        if kind == "system" and obj.get("subtype") == "init":
            servers = {s.get("name"): s.get("status") for s in obj.get("mcp_servers") or []}
            return [Event(EventKind.SESSION, session_id=session, raw=raw, text=str(obj.get("model", "")),
                          data={"mcp_servers": servers, "tools": obj.get("tools") or [],
                                "version": obj.get("claude_code_version")})]
        if kind == "assistant":
            return _assistant(obj, session, raw)
        if kind == "user":
            return _tool_results(obj, session, raw)
        if kind == "result":
            return _result(obj, session, raw)
        if kind == "system" and obj.get("subtype") == "api_retry":
            return [Event(EventKind.ERROR, session_id=session, raw=raw, data={"status": obj.get("error_status")},
                          error=f"the provider answered {obj.get('error_status')} ({obj.get('error')}); "
                                f"retry {obj.get('attempt')} of {obj.get('max_retries')}")]
        return [Event(EventKind.PROGRESS, session_id=session, raw=raw, text=str(obj.get("subtype") or kind))]

    def _final_text(self, events: list[Event], last_message: str | None) -> str:
        done = [e.text for e in events if e.kind == EventKind.DONE and e.text]
        return done[-1] if done else super()._final_text(events, last_message)

    def _bridge_problem(self, episode: Episode, events: list[Event], exit_code: int | None,
                        stderr: str) -> str | None:
        if not episode.bridge:
            return None
        for event in events:
            if event.kind == EventKind.SESSION and event.data is not None:
                status = event.data["mcp_servers"].get(episode.bridge.server_name)
                if status != "connected":
                    return f"the bot's tool bridge did not connect to claude (status: {status or 'absent'})"
        return None


def _settings(native: bool, web_access: bool) -> bytes:
    deny = ([] if native else list(DENIED_IN_STRICT)) + ([] if web_access else list(WEB_TOOLS))
    return json.dumps({"sandbox": {"enabled": False}, "permissions": {"deny": deny},
                       "includeCoAuthoredBy": False, "autoUpdates": False}, indent=1).encode()


def _mcp_config(bridge: Bridge) -> bytes:
    server = {"type": "http", "url": bridge.url,
              "headers": {"Authorization": f"Bearer ${{{bridge.token_env}}}"}}
    return json.dumps({"mcpServers": {bridge.server_name: server}}, indent=1).encode()


def _assistant(obj: dict, session: str | None, raw: bytes) -> list[Event]:
    events = []
    for block in (obj.get("message") or {}).get("content") or []:
        kind = block.get("type")
        if kind == "text":
            events.append(Event(EventKind.TEXT, text=block.get("text", ""), session_id=session, raw=raw))
        elif kind == "thinking":
            events.append(Event(EventKind.THINKING, text=block.get("thinking", ""), session_id=session, raw=raw))
        elif kind == "tool_use":
            events.append(Event(EventKind.TOOL_USE, tool=block.get("name"), session_id=session, raw=raw,
                                text=json.dumps(block.get("input"))[:2000]))
    return events


def _tool_results(obj: dict, session: str | None, raw: bytes) -> list[Event]:
    events = []
    for block in (obj.get("message") or {}).get("content") or []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block.get("content")
            text = content if isinstance(content, str) else json.dumps(content)
            events.append(Event(EventKind.TOOL_RESULT, text=text[:2000], session_id=session, raw=raw,
                                error=text[:500] if block.get("is_error") else None))
    return events


def _result(obj: dict, session: str | None, raw: bytes) -> list[Event]:
    usage = obj.get("usage") or {}
    spent = Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0),
                  int(usage.get("cache_read_input_tokens") or 0), obj.get("total_cost_usd"))
    events = [Event(EventKind.USAGE, usage=spent, session_id=session, raw=raw)]
    denials = [d.get("tool_name") for d in obj.get("permission_denials") or []]
    if obj.get("is_error"):
        status, text = obj.get("api_error_status"), str(obj.get("result") or "")
        failure = http_failure(status) if status else ("provider" if text.startswith("API Error") else "agent")
        events.append(Event(EventKind.ERROR, terminal=True, session_id=session, raw=raw,
                            error=text or f"claude failed ({obj.get('subtype')})",
                            data={"failure": failure, "status": status}))
    else:
        events.append(Event(EventKind.DONE, text=str(obj.get("result") or ""), session_id=session, raw=raw,
                            data={"permission_denials": denials, "num_turns": obj.get("num_turns")}))
    return events


register("claude", ClaudeCode)
