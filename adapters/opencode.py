"""OpenCode (`opencode run --format json`).

Prompt on stdin (argv parts with spaces reach the model wrapped in quotes); the whole config
inline in OPENCODE_CONFIG_CONTENT (the highest-precedence source) with the repository's own
config, Claude-Code compatibility files and external skills switched off, so a repository
cannot loosen the permissions; strict mode denies edit, bash and read (it follows symlinks out of
the worktree) and paths outside the project (except the episode's read folders, the thread's
attachments, which it may read), and webfetch and websearch are
denied unless the repository turns web access on (denied tools vanish from the request); the bridge
as a remote MCP server with the bearer from env.
OpenCode has no end-of-turn event: the answer is the last text part, success is exit 0.
"""
from __future__ import annotations

import json
import posixpath
import re

from adapters.base import (
    ANY_OTHER_KEY,
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
from adapters.facts import ANTHROPIC_API, OPENAI_API, ActionInputs, CredentialKind

QUIET_ENV = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
             "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
             "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
             "OPENCODE_DISABLE_CLAUDE_CODE": "1", "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
             # it npm-installs @opencode-ai/plugin into every config dir at start (registry.npmjs.org)
             "npm_config_offline": "true"}
# Its `read` follows a repository's symlink out of the worktree (measured: /proc/self/environ,
# the provider key), so strict mode denies it; reads go through the bridge. An explicit path
# outside the project would "ask", which ends a headless run without an answer: deny instead.
# Read folders (the attachments) are the one exception, allowed by path pattern (_strict).
STRICT = {"edit": "deny", "bash": "deny", "read": "deny", "external_directory": "deny"}
NATIVE = {"edit": "allow", "bash": "allow"}
WEB_TOOLS = ("webfetch", "websearch")  # websearch runs at a search provider, out of the proxy's sight
GATEWAY = "bot_gateway"
GATEWAY_KEY_ENV = "OPENAI_API_KEY"
INSTRUCTIONS = ".bot/opencode-instructions.md"
# OpenCode provider id -> (the key variable it reads, its API's path under a base URL)
PROVIDER_KEYS = {"anthropic": ("ANTHROPIC_API_KEY", "/v1"), "openai": ("OPENAI_API_KEY", "/v1"),
                 "google": ("GOOGLE_GENERATIVE_AI_API_KEY", "/v1beta"),
                 "openrouter": ("OPENROUTER_API_KEY", "/v1"), "groq": ("GROQ_API_KEY", "/v1"),
                 "mistral": ("MISTRAL_API_KEY", "/v1"), "xai": ("XAI_API_KEY", "/v1"),
                 "deepseek": ("DEEPSEEK_API_KEY", "/v1")}
OWN_KEY_HEADER = ("anthropic", "google")  # their APIs take the key in a header of their own, not as a bearer
AUTH_CONTENT = "OPENCODE_AUTH_CONTENT"  # OpenCode's auth.json (its own variable), as the settings page stores it


def _auth_json_problem(parsed: object) -> str | None:
    """Why a pasted document is not OpenCode's auth.json (one object per provider), or None."""
    if isinstance(parsed, dict) and all(isinstance(login, dict) for login in parsed.values()):
        return None
    return "each provider's entry is an object."


class OpenCode(CliAdapter):
    name = "opencode"
    executable = "opencode"
    default_allowed_hosts = ("api.anthropic.com", "api.openai.com")
    unobserved = ("opencode's model calls (including its title-generation call)",
                  "its context compaction", "its direct channel to the model provider")
    min_version = "1.18.0"
    credential_env = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENCODE_API_KEY")
    # .opencode/: plugin(s)/*.{js,ts} (imported into the CLI's own process, even with
    # OPENCODE_DISABLE_PROJECT_CONFIG set), tool(s), agent(s), command(s), mode(s), opencode.json;
    # opencode.json(c) and tui.json(c) (plugins, MCP servers with a command) found up from the
    # project; .claude/ and .agents/ (skills). HOME: ~/.opencode, $XDG_CONFIG_HOME/opencode (the
    # same folders and config), its package cache (npm plugins), ~/.claude, ~/.agents.
    loaders = Loaders(
        project=(".opencode", "opencode.json", "opencode.jsonc", "tui.json", "tui.jsonc", ".claude", ".agents"),
        home=(".opencode", ".config/opencode", ".cache/opencode", ".claude", ".agents"),
        parents=True)
    unknown_session_markers = ("Session not found",)
    # ses_ + 12 hex digits of time and counter + 14 random base62 characters (its Identifier)
    session_id_pattern = re.compile(r"ses_[0-9a-f]{12}[0-9A-Za-z]{14}")
    # $XDG_DATA_HOME/opencode/opencode.db (SQLite, with its WAL while it is open)
    resume_state = tuple(f".local/share/opencode/opencode.db{tail}" for tail in ("", "-wal", "-shm"))
    # OpenCode's own provider for each key, its baseURL pointed at the relay; an operator gateway
    # is one OpenAI-compatible provider reading OPENAI_API_KEY, so only that key goes through it
    relay_channels = tuple(RelayChannel(variable, provider, provider not in OWN_KEY_HEADER, (variable,),
                                        through_gateway=variable == GATEWAY_KEY_ENV)
                           for provider, (variable, _path) in PROVIDER_KEYS.items())
    # its auth.json with an OAuth login or several logins, and a custom provider's key
    direct_credentials = (AUTH_CONTENT, ANY_OTHER_KEY)
    title = "OpenCode"
    aliases = ("open-code",)
    credential_kinds = (
        CredentialKind("anthropic_api_key", "Anthropic API key for OpenCode",
                       "Used when OpenCode runs an Anthropic model.", env=("ANTHROPIC_API_KEY",), shape=ANTHROPIC_API),
        CredentialKind("openai_api_key", "OpenAI API key for OpenCode",
                       "Used when OpenCode runs an OpenAI model.", env=("OPENAI_API_KEY",), shape=OPENAI_API),
        CredentialKind("auth_json", "OpenCode auth.json",
                       "Run `opencode auth login` and paste ~/.local/share/opencode/auth.json.",
                       env=(AUTH_CONTENT,), json_file=True, json_check=_auth_json_problem))
    action_inputs = ActionInputs(("openai-api-key", "OPENAI_API_KEY"))
    npm_package = "opencode-ai"
    credential_files = (".local/share/opencode/auth.json",)
    provider_keys = tuple((provider, variable) for provider, (variable, _path) in PROVIDER_KEYS.items())
    provider_logins = AUTH_CONTENT

    def operator_variables(self) -> tuple[str, ...]:
        """A custom provider's variable when the operator named one; at a gateway the key its
        OpenAI-compatible provider reads; else the key of the provider chosen (or the model's prefix)."""
        if self.operator.key_env:
            return (self.operator.key_env,)
        if self.operator.base_url:
            return (GATEWAY_KEY_ENV,)
        provider = self.operator.provider or (self.operator.model or "").partition("/")[0]
        if provider in PROVIDER_KEYS:
            return (PROVIDER_KEYS[provider][0],)
        return ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")

    def command(self, episode: Episode) -> Invocation:
        permission = (NATIVE if episode.mode == "native" else _strict(episode.read_dirs, episode.workdir)) | \
            {tool: "allow" if episode.web_access else "deny" for tool in WEB_TOOLS}
        config: dict = {"autoupdate": False, "share": "disabled", "permission": permission}
        env = QUIET_ENV | episode.credentials.env
        files = dict(episode.credentials.files)
        argv = [self.binary, "run", "--format", "json"]
        model = self.model(episode)
        if base := self.base_url(episode):
            relayed = None if self.operator.base_url else _relayed(config, base, episode.credentials.env)
            if relayed is None:
                model = _gateway(config, base, model)
                env.setdefault(GATEWAY_KEY_ENV, "gateway-holds-the-key")
        if model:
            config["model"] = config["small_model"] = model
        if episode.bridge:
            bridge = episode.bridge
            config["mcp"] = {bridge.server_name: {
                "type": "remote", "url": bridge.url, "enabled": True, "oauth": False,
                "headers": {"Authorization": f"Bearer {{env:{bridge.token_env}}}"}}}
            env[bridge.token_env] = bridge.token
        if episode.instruction:
            files[INSTRUCTIONS] = episode.instruction.encode()
            config["instructions"] = [str(episode.home / INSTRUCTIONS)]
        if episode.resume_session:
            argv.append(f"--session={episode.resume_session}")  # one argument: never an option
        env["OPENCODE_CONFIG_CONTENT"] = json.dumps(config)
        env["OPENCODE_PERMISSION"] = json.dumps(permission)
        return Invocation(argv=argv, env=env, stdin=episode.prompt.encode(), files=files,
                          ephemeral=tuple(episode.credentials.files))

    # parsing -------------------------------------------------------------------

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        kind, session, part = obj.get("type"), obj.get("sessionID"), obj.get("part") or {}
        if kind == "text":
            return [Event(EventKind.TEXT, text=part.get("text", ""), session_id=session, raw=raw)]
        if kind == "reasoning":
            return [Event(EventKind.THINKING, text=part.get("text", ""), session_id=session, raw=raw)]
        if kind == "tool_use":
            return _tool(part, session, raw)
        if kind == "step_finish":
            tokens = part.get("tokens") or {}
            spent = Usage(int(tokens.get("input") or 0), int(tokens.get("output") or 0),
                          int((tokens.get("cache") or {}).get("read") or 0), part.get("cost"))
            return [Event(EventKind.USAGE, usage=spent, session_id=session, raw=raw)]
        if kind == "error":
            return [_error(obj.get("error") or {}, session, raw)]
        if kind == "step_start":
            return [Event(EventKind.SESSION, session_id=session, raw=raw)]
        return [Event(EventKind.PROGRESS, text=str(kind), session_id=session, raw=raw)]


def _strict(read_dirs: tuple[str, ...], workdir: str) -> dict:
    """STRICT, with `read` allowed for files in each read folder (the thread's attachments, which
    the bot wrote: no symlink there). Its read permission is asked with the path relative to the
    project (`../data/attachments/x/01-log.txt`, normalised, so no `..` after the folder) and
    external_directory with the absolute folder; the last matching pattern wins, so `*` first
    denies everything else. A folder inside the worktree is never allowed this way: a repository
    symlink there would be followed (why `read` is denied at all)."""
    outside = [folder.rstrip("/") for folder in read_dirs
               if posixpath.relpath(folder, workdir).startswith("../")]
    if not outside:
        return STRICT
    relative = {f"{posixpath.relpath(folder, workdir)}/*": "allow" for folder in outside}
    absolute = {f"{folder}/*": "allow" for folder in outside}
    return STRICT | {"read": {"*": "deny"} | relative, "external_directory": {"*": "deny"} | absolute}


def _relayed(config: dict, base: str, env: dict[str, str]) -> str | None:
    """The model relay (a base URL that is not the operator's gateway): OpenCode's own provider for
    the key it holds, its baseURL pointed at the relay, so OpenCode runs its default model of that
    provider. The key variable holds the relay's token; the relay puts the real key in its place.
    Returns the provider id, or None when no known provider's key is present."""
    for provider, (variable, api_path) in PROVIDER_KEYS.items():
        if variable in env:
            config["provider"] = {provider: {"options": {"baseURL": f"{base}{api_path}",
                                                         "apiKey": f"{{env:{variable}}}"}}}
            return provider
    return None


def _gateway(config: dict, base: str, model: str | None) -> str:
    """An OpenAI-compatible provider at the operator's gateway; returns provider/model."""
    model_id = (model or "default").split("/", 1)[-1]
    config["provider"] = {GATEWAY: {
        "npm": "@ai-sdk/openai-compatible", "name": "bot gateway",
        "options": {"baseURL": f"{base}/v1", "apiKey": f"{{env:{GATEWAY_KEY_ENV}}}"},
        "models": {model_id: {"name": model_id, "tool_call": True,
                              "limit": {"context": 200000, "output": 32000}}}}}
    return f"{GATEWAY}/{model_id}"


def _tool(part: dict, session: str | None, raw: bytes) -> list[Event]:
    state, tool = part.get("state") or {}, part.get("tool")
    use = Event(EventKind.TOOL_USE, tool=tool, session_id=session, raw=raw,
                text=json.dumps(state.get("input"))[:2000])
    if state.get("status") not in ("completed", "error"):
        return [use]
    error = state.get("error") if state.get("status") == "error" else None
    return [use, Event(EventKind.TOOL_RESULT, tool=tool, session_id=session, raw=raw, error=error,
                       text=str(state.get("output") or "")[:2000])]


def _error(error: dict, session: str | None, raw: bytes) -> Event:
    data = error.get("data") or {}
    message = data.get("message") or error.get("name") or "opencode failed"
    status = data.get("statusCode")
    return Event(EventKind.ERROR, terminal=True, session_id=session, raw=raw,
                 error=f"{message} (HTTP {status})" if status else str(message),
                 data={"failure": http_failure(status) if error.get("name") == "APIError" else "agent",
                       "status": status})


register("opencode", OpenCode)
