"""Codex (`codex exec --json`).

Prompt on stdin as `-` (codex reads stdin to EOF anyway; the runner closes it); everything by
`-c` with the user config ignored; `exec resume` gets `sandbox_mode` by -c (it rejects
--sandbox); analytics off (else +5 s at exit); the bridge `required` so a failed handshake
exits 1 instead of silently dropping the tools; strict mode removes the shell tools and
keeps Codex's policy read-only (its bwrap cannot nest inside ours, but without a shell tool
it never starts one); native mode turns Codex's sandbox off: ours is the boundary.

Codex's default model runs "code mode" (its catalog says `tool_mode: code_mode_only`, which no
feature switch overrides): its own tools are nested in a JavaScript `exec` tool and MCP tools
are deferred behind a namespace the model must search for. The bridge's namespace is made
`direct_only`, so the model is offered the bridge's tools as plain function calls at once
(and `exec` cannot call them: every bridged call is a visible `mcp_tool_call`). `exec` itself
is a V8 isolate without modules, process, network or shell; its nested tools are
apply_patch (refused by the read-only policy), view_image, goals and MCP resources.
Web search runs on OpenAI's servers, out of the egress proxy's sight: off unless the
repository turns web access on.
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
    ProbeFn,
    RelayChannel,
    Usage,
    http_failure,
    register,
)
from adapters.facts import OPENAI_API, ActionInputs, CredentialKind, OperatorLogin

LAST_MESSAGE = ".bot/codex-last-message.txt"
CODEX_HOME = ".codex"
AUTH_FILE = CODEX_HOME + "/auth.json"


def _auth_json_problem(parsed: object) -> str | None:
    """Why a pasted document is not Codex's login file, or None."""
    if isinstance(parsed, dict) and (parsed.get("tokens") or parsed.get("OPENAI_API_KEY")):
        return None
    return ("it has neither \u201ctokens\u201d nor \u201cOPENAI_API_KEY\u201d (run `codex login`, "
            "then paste ~/.codex/auth.json).")
CHATGPT_BASE = "/backend-api/codex"  # ChatGPT's Codex backend under a base URL (a ChatGPT login)
REQUIRED_MCP_FAILED = "required MCP servers failed to initialize"
CONFIG_NOTE = b"# Managed by the bot (CODEX_HOME must exist); settings are passed with -c.\n"
HTTP_STATUS = re.compile(r"unexpected status (\d{3})")
STRICT_FEATURES_OFF = ("shell_tool", "unified_exec")


def toml(value: object) -> str:
    """A TOML value for `-c key=value` (JSON strings and booleans are valid TOML)."""
    return json.dumps(value)


class Codex(CliAdapter):
    name = "codex"
    executable = "codex"
    default_allowed_hosts = ("api.openai.com",)
    unobserved = ("codex's model calls", "its context compaction",
                  "its direct channel to api.openai.com",
                  "its code-mode exec scripts (absent from its --json stream)")
    min_version = "0.171.0"
    credential_env = ("CODEX_API_KEY", "OPENAI_API_KEY")
    # .codex/: project-scoped config.toml (MCP servers with a command, i.e. programs; features),
    # hooks.json, rules (exec policy), skills; .agents/skills; looked up from the project up to its
    # root. CODEX_HOME (~/.codex): the same, AGENTS.md / AGENTS.override.md (global instructions),
    # managed_config.toml, plugins, prompts; ~/.agents/skills.
    loaders = Loaders(
        project=(".codex", ".agents"),
        home=(".codex/config.toml", ".codex/managed_config.toml", ".codex/requirements.toml",
              ".codex/hooks.json", ".codex/rules", ".codex/skills", ".codex/plugins", ".codex/prompts",
              ".codex/AGENTS.md", ".codex/AGENTS.override.md", ".agents"),
        parents=True)
    unknown_session_markers = ("no rollout found for thread id",)
    session_id_pattern = UUID  # its thread ids (`exec resume` also takes a thread name: never given)
    resume_state = (".codex/sessions/*/*/*/rollout-*.jsonl",)  # YYYY/MM/DD/rollout-<ts>-<thread id>.jsonl
    # the relay carries Codex's key in CODEX_API_KEY whichever variable held it
    relay_channels = (RelayChannel("OPENAI_API_KEY", "openai", True, ("CODEX_API_KEY",)),
                      RelayChannel("CODEX_API_KEY", "openai", True, ("CODEX_API_KEY",)))
    # a login file holding neither a ChatGPT login nor an API key (a ChatGPT login is relayed)
    direct_credentials = (AUTH_FILE,)
    title = "Codex"
    aliases = ("codex-cli",)
    credential_kinds = (
        CredentialKind("auth_json", "ChatGPT subscription (Codex auth.json)",
                       "Run `codex login` and paste the content of ~/.codex/auth.json.",
                       file=AUTH_FILE, json_file=True, json_check=_auth_json_problem),
        CredentialKind("api_key", "OpenAI API key", "Create one at platform.openai.com → API keys.",
                       env=("OPENAI_API_KEY", "CODEX_API_KEY"), shape=OPENAI_API))
    operator_env = ("OPENAI_API_KEY", "CODEX_API_KEY")
    action_inputs = ActionInputs(("openai-api-key", "OPENAI_API_KEY"))
    npm_package = "@openai/codex"
    operator_login = OperatorLogin(AUTH_FILE, setting="BOT_CODEX_AUTH_FILE", home_variable="CODEX_HOME",
                                   kind="auth_json")
    chatgpt_login = AUTH_FILE
    credential_files = (AUTH_FILE,)

    def command(self, episode: Episode) -> Invocation:
        home = episode.home
        argv = [self.binary, "exec"] + (["resume"] if episode.resume_session else [])
        argv += ["--json", "--skip-git-repo-check", "--ignore-user-config",
                 "-o", str(home / LAST_MESSAGE)]
        for key, value in self._config(episode):
            argv += ["-c", f"{key}={value}"]
        if model := self.model(episode):
            argv += ["-m", model]
        if episode.resume_session:  # after `--`: positional, even if it starts with `-`
            argv += ["--", episode.resume_session]
        argv.append("-")
        return Invocation(argv=argv, env=self._env(episode), stdin=episode.prompt.encode(),
                          files={CODEX_HOME + "/config.toml": CONFIG_NOTE} | episode.credentials.files,
                          last_message_file=LAST_MESSAGE, ephemeral=tuple(episode.credentials.files))

    def _config(self, episode: Episode) -> list[tuple[str, str]]:
        strict = episode.mode != "native"
        config = [("approval_policy", toml("never")),
                  ("sandbox_mode", toml("read-only" if strict else "danger-full-access")),
                  ("analytics.enabled", "false"), ("check_for_update_on_startup", "false"),
                  ("history.persistence", toml("none")),
                  ("features.plugins", "false"),  # else it syncs plugins from github.com and chatgpt.com
                  ("features.apps", "false")]  # else a ChatGPT login connects ChatGPT's apps (chatgpt.com/…/mcp)
        if strict:
            config += [(f"features.{feature}", "false") for feature in STRICT_FEATURES_OFF]
        config.append(("web_search", toml("live" if episode.web_access else "disabled")))
        if episode.instruction:
            config.append(("developer_instructions", toml(episode.instruction)))
        if base := self.base_url(episode):
            chatgpt = _chatgpt_login(episode.credentials.files)
            config += [("model_provider", toml("bot_gateway")),
                       ("model_providers.bot_gateway.name", toml("bot gateway")),
                       ("model_providers.bot_gateway.base_url",
                        toml(f"{base}{CHATGPT_BASE}" if chatgpt else f"{base}/v1")),
                       ("model_providers.bot_gateway.wire_api", toml("responses"))]
            key = next((k for k in self.credential_env if k in episode.credentials.env), None)
            if chatgpt:  # its auth.json's tokens as the bearer, and the account id header
                config.append(("model_providers.bot_gateway.requires_openai_auth", "true"))
            elif key:
                config.append(("model_providers.bot_gateway.env_key", toml(key)))
        if bridge := episode.bridge:
            prefix = f"mcp_servers.{bridge.server_name}"
            config += [(f"{prefix}.url", toml(bridge.url)),
                       (f"{prefix}.bearer_token_env_var", toml(bridge.token_env)),
                       (f"{prefix}.default_tools_approval_mode", toml("approve")),
                       (f"{prefix}.required", "true"),
                       ("features.code_mode.direct_only_tool_namespaces", toml([f"mcp__{bridge.server_name}"]))]
        return config

    def _env(self, episode: Episode) -> dict[str, str]:
        env = {"CODEX_HOME": str(episode.home / CODEX_HOME)} | episode.credentials.env
        if "OPENAI_API_KEY" in env and "CODEX_API_KEY" not in env:
            env["CODEX_API_KEY"] = env["OPENAI_API_KEY"]  # `exec` reads CODEX_API_KEY
        if episode.bridge:
            env[episode.bridge.token_env] = episode.bridge.token
        return env

    def _login(self, probe: ProbeFn) -> tuple[bool, str]:
        rc, out = probe([self.binary, "login", "status"])
        if rc == 0:
            return True, out.strip().splitlines()[-1][:80] if out.strip() else "logged in"
        logged_in, reason = self._env_login()
        return logged_in, reason if logged_in else \
            "not logged in: set CODEX_API_KEY (or OPENAI_API_KEY), or connect a ChatGPT login (auth.json)"

    # parsing -------------------------------------------------------------------

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        kind = obj.get("type")
        if kind == "thread.started":
            return [Event(EventKind.SESSION, session_id=obj.get("thread_id"), raw=raw)]
        if kind == "turn.completed":
            usage = obj.get("usage") or {}
            spent = Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0),
                          int(usage.get("cached_input_tokens") or 0))
            return [Event(EventKind.USAGE, usage=spent, raw=raw), Event(EventKind.DONE, raw=raw)]
        if kind == "turn.failed":
            message = _readable((obj.get("error") or {}).get("message", ""))
            status = HTTP_STATUS.search(message)
            return [Event(EventKind.ERROR, terminal=True, error=message or "codex turn failed", raw=raw,
                          data={"failure": http_failure(int(status.group(1)) if status else None)})]
        if kind == "error":
            return [Event(EventKind.ERROR, error=_readable(obj.get("message", "")), raw=raw)]
        if kind and kind.startswith("item."):
            return _item(kind, obj.get("item") or {}, raw)
        return [Event(EventKind.PROGRESS, text=str(kind), raw=raw)]

    def _final_text(self, events: list[Event], last_message: str | None) -> str:
        if last_message and last_message.strip():
            return last_message.strip()
        return super()._final_text(events, None)

    def _bridge_problem(self, episode: Episode, events: list[Event], exit_code: int | None,
                        stderr: str) -> str | None:
        if exit_code and REQUIRED_MCP_FAILED in stderr:
            return "the bot's tool bridge did not connect to codex (required MCP server failed to initialize)"
        return None


def _item(kind: str, item: dict, raw: bytes) -> list[Event]:
    itype, done = item.get("type"), kind == "item.completed"
    if itype == "agent_message":
        return [Event(EventKind.TEXT if done else EventKind.PROGRESS, text=item.get("text", ""), raw=raw)]
    if itype == "reasoning":
        return [Event(EventKind.THINKING, text=item.get("text", ""), raw=raw)]
    if itype == "error":
        return [Event(EventKind.ERROR, error=item.get("message", ""), raw=raw)]
    if itype == "mcp_tool_call":
        tool = f"mcp__{item.get('server')}__{item.get('tool')}"
        if not done:
            return [Event(EventKind.TOOL_USE, tool=tool, text=json.dumps(item.get("arguments"))[:2000], raw=raw)]
        error = (item.get("error") or {}).get("message")
        return [Event(EventKind.TOOL_RESULT, tool=tool, error=error, raw=raw,
                      text=json.dumps(item.get("result"))[:2000])]
    if itype == "command_execution":
        return [Event(EventKind.TOOL_RESULT if done else EventKind.TOOL_USE, tool="shell", raw=raw,
                      text=str(item.get("command", "")) if not done else str(item.get("aggregated_output", ""))[:2000],
                      error=None if item.get("status") in ("completed", "in_progress") else item.get("status"))]
    if itype == "file_change":
        paths = ", ".join(f"{c.get('kind')} {c.get('path')}" for c in item.get("changes") or [])
        return [Event(EventKind.TOOL_RESULT if done else EventKind.TOOL_USE, tool="file_change", text=paths, raw=raw)]
    return [Event(EventKind.PROGRESS, text=str(itype), raw=raw)]


def _chatgpt_login(files: dict[str, bytes]) -> bool:
    """Whether the episode's auth.json is a ChatGPT login (OAuth tokens), which Codex sends to
    ChatGPT's Codex backend (`<base>/backend-api/codex/responses`), not to the API."""
    try:
        doc = json.loads(files.get(AUTH_FILE) or b"null")
    except ValueError:
        return False
    return isinstance(doc, dict) and isinstance(doc.get("tokens"), dict)


def _readable(message: str) -> str:
    """Codex nests the provider's JSON error body in its message; keep its human part."""
    try:
        inner = json.loads(message)
    except (ValueError, TypeError):
        return message
    if isinstance(inner, dict) and isinstance(inner.get("error"), dict):
        return str(inner["error"].get("message") or message)
    return message


register("codex", Codex)
