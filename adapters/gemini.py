"""Gemini CLI (`gemini -o stream-json`).

Prompt on stdin; settings (auth type, telemetry off, the bridge as a trusted MCP server with
the bearer expanded from env) written both as user settings and as system settings (the
highest precedence, so a repository's .gemini/settings.json cannot override them); only the
bot's MCP server allowed; strict mode keeps the headless default approval mode (shell and
write tools are not offered) plus a policy file denying them; the web tools are denied in
either mode unless the repository turns web access on; the episode's read folders (the thread's
attachments) join its workspace (--include-directories), beside the worktree the only place its
read tools reach; the workspace is trusted by env (else exit 55). The answer is the concatenated
assistant deltas; exit codes carry meaning (41 auth, 42 input, 52 config, 53 turn limit,
55 trust, else HTTP status & 0xFF).
"""
from __future__ import annotations

import json
import re

from adapters.base import (
    UUID,
    CliAdapter,
    Episode,
    Event,
    EventKind,
    Invocation,
    Loaders,
    RelayChannel,
    Usage,
    http_failure,
    register,
)
from adapters.facts import GEMINI_API, ActionInputs, CredentialKind

SETTINGS = ".gemini/settings.json"
# Gemini ignores system settings unless root owns the file and every folder above it: placed by the sandbox
SYSTEM_SETTINGS = "/etc/gemini-cli/settings.json"
POLICY = ".bot/gemini-policy.toml"
MEMORY = ".gemini/GEMINI.md"  # global context: a lower-authority standing instruction
NATIVE_WRITE_TOOLS = ("run_shell_command", "write_file", "replace")
# google_web_search is a grounded request to the Gemini API (Google runs the search, out of the
# egress proxy's sight): both only when the repository turns web access on.
WEB_TOOLS = ("google_web_search", "web_fetch")
EXIT_MEANING = {41: ("auth", "gemini rejected its credentials (exit 41): check GEMINI_API_KEY or the settings page"),
                42: ("agent", "gemini rejected its input (exit 42)"),
                52: ("config", "gemini found its configuration invalid (exit 52)"),
                53: ("agent", "gemini reached its turn limit (exit 53)"),
                55: ("config", "gemini refused an untrusted workspace (exit 55)")}
ERROR_CODE = re.compile(r'"code"\s*:\s*(\d{3})')
HTTP_STATUSES = (400, 401, 403, 404, 408, 429, 500, 502, 503, 504)


class Gemini(CliAdapter):
    name = "gemini"
    executable = "gemini"
    default_allowed_hosts = ("generativelanguage.googleapis.com",)
    unobserved = ("gemini's model calls (including its model-router call)", "its context compaction",
                  "its direct channel to generativelanguage.googleapis.com")
    min_version = "0.61.0"
    credential_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA")
    # .gemini/: settings.json (MCP servers with a command, hooks, tools), extensions, commands,
    # policies, agents, skills, system.md, .env; .env (read into its environment, looked up from
    # the project through every parent, then ~/.gemini/.env and ~/.env); GEMINI.md (@imports);
    # .agents/skills. HOME: the same under ~/.gemini, ~/.env, ~/.agents.
    loaders = Loaders(
        project=(".gemini", ".env", "GEMINI.md", ".agents"),
        home=(".gemini/settings.json", ".gemini/extensions", ".gemini/commands", ".gemini/policies",
              ".gemini/agents", ".gemini/skills", ".gemini/hooks", ".gemini/system.md", ".gemini/.env",
              ".gemini/GEMINI.md", ".env", ".agents"),
        parents=True)
    unknown_session_markers = ("Error resuming session",)
    session_id_pattern = UUID  # its --resume also takes `latest` or an index: never given
    resume_state = (".gemini/tmp/*/chats/session-*.jsonl",)  # <project>/chats/session-<ts>-<id8>.jsonl
    relay_channels = (RelayChannel("GEMINI_API_KEY", "google", False, ("GEMINI_API_KEY",)),)
    title = "Gemini"
    aliases = ("gemini-cli",)
    credential_kinds = (CredentialKind("api_key", "Gemini API key",
                                       "Create one at aistudio.google.com → Get API key.",
                                       env=("GEMINI_API_KEY",), shape=GEMINI_API),)
    operator_env = ("GEMINI_API_KEY",)
    action_inputs = ActionInputs(("gemini-api-key", "GEMINI_API_KEY"))
    npm_package = "@google/gemini-cli"
    credential_files = (".gemini/oauth_creds.json",)

    def command(self, episode: Episode) -> Invocation:
        home, native = episode.home, episode.mode == "native"
        env = {"GEMINI_CLI_TRUST_WORKSPACE": "true", "NO_COLOR": "1"} | episode.credentials.env
        server = episode.bridge.server_name if episode.bridge else "bot"
        argv = [self.binary, "-o", "stream-json", "--allowed-mcp-server-names", server]
        for folder in episode.read_dirs:  # in its workspace: its read tools may open files there
            argv += ["--include-directories", folder]
        settings = _settings(episode)
        files = {SETTINGS: settings} | episode.credentials.files
        env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = SYSTEM_SETTINGS
        if native:
            argv += ["--approval-mode", "yolo"]
        if policy := _policy(episode):
            files[POLICY] = policy
            argv += ["--policy", str(home / POLICY)]
        if episode.bridge:
            env[episode.bridge.token_env] = episode.bridge.token
        files[MEMORY] = episode.instruction.encode()
        if base := self.base_url(episode):
            env["GOOGLE_GEMINI_BASE_URL"] = base
            env.setdefault("GEMINI_API_KEY", "gateway-holds-the-key")
        if model := self.model(episode):
            argv += ["-m", model]
        if episode.resume_session:
            argv.append(f"--resume={episode.resume_session}")  # one argument: never an option
        return Invocation(argv=argv, env=env, stdin=episode.prompt.encode(), files=files,
                          ephemeral=tuple(episode.credentials.files), system_files={SYSTEM_SETTINGS: settings})

    # parsing -------------------------------------------------------------------

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        kind = obj.get("type")
        if kind == "init":
            return [Event(EventKind.SESSION, session_id=obj.get("session_id"), text=str(obj.get("model", "")), raw=raw)]
        if kind == "message":
            assistant = obj.get("role") == "assistant"
            return [Event(EventKind.TEXT if assistant else EventKind.PROGRESS, text=str(obj.get("content", "")),
                          raw=raw)]
        if kind == "tool_use":
            return [Event(EventKind.TOOL_USE, tool=obj.get("tool_name"), raw=raw,
                          text=json.dumps(obj.get("parameters"))[:2000])]
        if kind == "tool_result":
            failed = obj.get("status") == "error"
            return [Event(EventKind.TOOL_RESULT, raw=raw, text=str(obj.get("output", ""))[:2000],
                          error=str(obj.get("error") or obj.get("output") or "tool failed") if failed else None)]
        if kind == "result":
            return _result(obj, raw)
        if kind == "error":
            return [Event(EventKind.ERROR, error=str(obj.get("message", "")), raw=raw)]
        return [Event(EventKind.PROGRESS, text=str(kind), raw=raw)]

    def _final_text(self, events: list[Event], last_message: str | None) -> str:
        """The assistant deltas after the last tool exchange, concatenated."""
        answer: list[str] = []
        for event in events:
            if event.kind in (EventKind.TOOL_USE, EventKind.TOOL_RESULT):
                answer = []
            elif event.kind == EventKind.TEXT:
                answer.append(event.text)
        return "".join(answer).strip()

    def _exit_error(self, exit_code: int, stderr: str, events: list[Event]) -> tuple[str, str]:
        if exit_code in EXIT_MEANING:
            failure, message = EXIT_MEANING[exit_code]
            return message, failure
        statuses = [s for s in HTTP_STATUSES if s & 0xFF == exit_code]
        if statuses:
            failure = http_failure(statuses[0])
            return f"the model provider answered HTTP {statuses[0]} (gemini exit {exit_code})", failure
        return super()._exit_error(exit_code, stderr, events)


def _auth_type(env: dict[str, str]) -> str:
    if env.get("GOOGLE_GENAI_USE_VERTEXAI"):
        return "vertex-ai"
    if env.get("GOOGLE_GENAI_USE_GCA"):
        return "oauth-personal"
    return "gemini-api-key"


def _settings(episode: Episode) -> bytes:
    settings: dict = {"security": {"auth": {"selectedType": _auth_type(episode.credentials.env)}},
                      "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                      "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                      "hooksConfig": {"enabled": False},  # a repository's hooks would be a native shell
                      "mcpServers": {}}
    if bridge := episode.bridge:
        settings["mcpServers"][bridge.server_name] = {
            "httpUrl": bridge.url, "trust": True, "timeout": 30000,
            "headers": {"Authorization": f"Bearer ${{{bridge.token_env}}}"}}
    return json.dumps(settings, indent=1).encode()


def _policy(episode: Episode) -> bytes:
    """Strict: allow each bridge tool by name (Gemini rejects an mcpName rule without a toolName)
    and deny the native shell and writes. Either mode: deny the web tools unless web access is on."""
    strict, bridge = episode.mode != "native", episode.bridge
    server, tools = (bridge.server_name, bridge.tools) if bridge and strict else ("", ())
    rules = [f'[[rule]]\nmcpName = "{server}"\ntoolName = "{tool}"\n'
             f'decision = "allow"\npriority = 200\n' for tool in tools]
    denied = (NATIVE_WRITE_TOOLS if strict else ()) + (() if episode.web_access else WEB_TOOLS)
    if denied:
        names = ", ".join(f'"{name}"' for name in denied)
        rules.append(f"[[rule]]\ntoolName = [{names}]\ndecision = \"deny\"\npriority = 900\n")
    return "\n".join(rules).encode()


def _result(obj: dict, raw: bytes) -> list[Event]:
    stats = obj.get("stats") or {}
    spent = Usage(int(stats.get("input_tokens") or 0), int(stats.get("output_tokens") or 0),
                  int(stats.get("cached") or 0))
    events = [Event(EventKind.USAGE, usage=spent, raw=raw)]
    if obj.get("status") == "error":
        message = str((obj.get("error") or {}).get("message") or "gemini reported an error")
        status = ERROR_CODE.search(message)
        events.append(Event(EventKind.ERROR, terminal=True, raw=raw, error=message,
                            data={"failure": http_failure(int(status.group(1)) if status else None)}))
    else:
        events.append(Event(EventKind.DONE, raw=raw))
    return events


register("gemini", Gemini)
