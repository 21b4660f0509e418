"""The adapter contract (docs/agents.md): one module per agent CLI behind these types.

Everything CLI-specific lives in the adapter modules; the runner, the bridge and
governance are shared, so a fifth CLI is a new module, not a new subsystem.
"""
from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from adapters.facts import ActionInputs, CredentialKind, OperatorLogin
from adapters.masking.leaks import mask


class EventKind(str, enum.Enum):
    SESSION = "session"
    PROGRESS = "progress"
    THINKING = "thinking"
    TEXT = "text"
    TOOL_USE = "tool_use"
    TOOL_RESULT = "tool_result"
    USAGE = "usage"
    ERROR = "error"
    DONE = "done"


class Tier(str, enum.Enum):
    """How strongly the record vouches for an action."""

    ENFORCED = "enforced"  # went through the bot's own waist
    ATTESTED = "attested"  # the CLI said so
    UNOBSERVED = "unobserved"  # a declared gap


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            cost,
        )


@dataclass
class Event:
    kind: EventKind
    tier: Tier = Tier.ATTESTED
    text: str = ""
    session_id: str | None = None
    usage: Usage | None = None
    error: str | None = None
    terminal: bool = False
    tool: str | None = None  # tool name for tool_use / tool_result
    raw: bytes = b""  # the CLI's own line, verbatim
    data: dict | None = None  # CLI facts the runner checks (e.g. MCP server status at init)


@dataclass
class Credentials:
    """What the CLI may authenticate with. Values reach the CLI only via env or HOME files."""

    env: dict[str, str] = field(default_factory=dict)  # e.g. {"ANTHROPIC_API_KEY": "..."}
    files: dict[str, bytes] = field(default_factory=dict)  # HOME-relative path -> content
    source: str = "operator"  # requester | repository | installation | operator

    def secret_values(self) -> list[str]:
        values = [v for v in self.env.values() if v]
        values += [c.decode("utf-8", "replace") for c in self.files.values() if c]
        return values


@dataclass
class Bridge:
    url: str  # as seen from inside the sandbox, e.g. http://127.0.0.1:8765/mcp
    token: str
    token_env: str = "BOT_BRIDGE_TOKEN"
    server_name: str = "bot"
    tools: tuple[str, ...] = ()


@dataclass
class Episode:
    prompt: str
    workdir: str  # the stable in-sandbox path of the worktree
    home: Path  # the persistent per-(conversation, backend) CLI home
    tmpdir: Path | None = None
    instruction: str = ""  # lower-authority standing preamble
    model: str | None = None
    resume_session: str | None = None
    bridge: Bridge | None = None
    credentials: Credentials = field(default_factory=Credentials)
    mode: str = "strict"  # strict | native
    base_url: str | None = None  # operator LLM gateway (BOT_<AGENT>_BASE_URL)
    # The CLI's web tools (search, fetch), some run on the provider's servers where no egress
    # proxy sees them: offered only when the repository's configuration turns web access on.
    web_access: bool = False
    # In-sandbox folders the agent may also read (never write), e.g. the thread's attachments.
    read_dirs: tuple[str, ...] = ()


@dataclass
class Invocation:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # additions to the scrubbed env
    stdin: bytes | None = None  # None: stdin is /dev/null
    files: dict[str, bytes] = field(default_factory=dict)  # HOME-relative path -> content
    last_message_file: str | None = None  # HOME-relative path the CLI writes its answer to
    cwd: str | None = None
    ephemeral: tuple[str, ...] = ()  # HOME-relative files removed after the run (credentials)
    system_files: dict[str, bytes] = field(default_factory=dict)  # absolute path in the sandbox -> content (read-only)


@dataclass
class Readiness:
    available: bool
    logged_in: bool
    version: str | None
    reason: str = ""
    refuse: bool = False


@dataclass
class Result:
    ok: bool
    text: str
    session_id: str | None
    usage: Usage
    events: list[Event]
    error: str | None = None
    exit_code: int | None = None
    duration_s: float = 0.0
    resumed: bool = False
    agent: str = ""
    failure: str | None = None  # see docs/agents.md: provider, bridge, session_unknown, exit, empty, ...
    outcome: dict = field(default_factory=dict)  # the sandbox floor's SandboxProcess.outcome()
    egress: list = field(default_factory=list)  # sandbox EgressDecision, every proxy decision
    stderr_tail: str = ""  # redacted
    unobserved: tuple[str, ...] = ()  # the adapter's declared gaps, for the provenance
    version: str | None = None


@dataclass(frozen=True)
class Loaders:
    """Where a CLI loads code or configuration from on its own (plugins, hooks, MCP servers,
    extensions, policies, `.env` files, instruction files that import other files). In strict
    mode none of them may come from the worktree or from the CLI home: each present `project`
    path is hidden from the sandbox's view of the worktree, and every `home` path is removed
    from the CLI home before the CLI starts (the adapter's own files are written after)."""

    project: tuple[str, ...] = ()  # relative to the project directory (the worktree's top)
    home: tuple[str, ...] = ()  # relative to HOME; the XDG folders are under HOME in the sandbox
    # The CLI also looks for `project` paths in every parent of the project directory. Inside the
    # sandbox the worktree's only parent is the sandbox's own read-only root, holding none of them.
    parents: bool = False


@dataclass(frozen=True)
class RelayChannel:
    """One credential the model relay can carry for a CLI: the relay holds it on the host and the
    CLI gets the relay's per-episode token in `inside_env` instead."""

    variable: str  # where the resolved credentials hold the key
    provider: str  # the relay's provider name (bot/relay/apis.py)
    bearer: bool  # sent as `Authorization: Bearer`, else in the provider's own key header
    inside_env: tuple[str, ...]  # the variables the CLI reads the (relay's) key from
    through_gateway: bool = True  # usable when the operator set BOT_<AGENT>_BASE_URL


# In `direct_credentials`: any key variable no relay channel carries runs with the key in the sandbox.
ANY_OTHER_KEY = "*"

ProbeFn = Callable[[Sequence[str]], "tuple[int, str]"]


class Adapter(Protocol):
    # read-only members: an adapter's class attributes (tuples of any length) and properties satisfy them
    @property
    def name(self) -> str: ...
    @property
    def executable(self) -> str: ...
    @property
    def credential_env(self) -> tuple[str, ...]: ...
    @property
    def default_allowed_hosts(self) -> tuple[str, ...]: ...
    @property
    def supports_resume(self) -> bool: ...
    @property
    def resume_state(self) -> tuple[str, ...]: ...
    @property
    def relay_channels(self) -> tuple[RelayChannel, ...]: ...
    @property
    def direct_credentials(self) -> tuple[str, ...]: ...
    @property
    def unobserved(self) -> tuple[str, ...]: ...
    @property
    def min_version(self) -> str: ...
    @property
    def binary(self) -> str: ...
    @property
    def loaders(self) -> Loaders: ...
    @property
    def session_id_pattern(self) -> re.Pattern[str]: ...
    @property
    def title(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...
    @property
    def credential_kinds(self) -> tuple[CredentialKind, ...]: ...
    @property
    def action_inputs(self) -> ActionInputs | None: ...
    @property
    def npm_package(self) -> str: ...
    @property
    def provider_keys(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def provider_logins(self) -> str: ...
    @property
    def operator_login(self) -> OperatorLogin | None: ...
    @property
    def chatgpt_login(self) -> str: ...
    @property
    def credential_files(self) -> tuple[str, ...]: ...

    def operator_variables(self) -> tuple[str, ...]:
        """The operator's variables that authenticate the CLI, in the order they are consulted."""

    def detect(self, probe: ProbeFn) -> Readiness: ...

    def command(self, episode: Episode) -> Invocation: ...

    def parse(self, line: bytes) -> list[Event]: ...

    def finish(self, episode: Episode, events: list[Event], exit_code: int | None, stderr: str,
               last_message: str | None) -> Result:
        """The Result of a finished process from its parsed events, exit code, stderr tail and
        last-message file (None when the CLI has none or wrote none)."""


STDERR_TAIL = 2000
# Claude Code, Codex (its thread ids) and Gemini CLI name sessions by lowercase UUIDs.
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NO_SESSION = re.compile(r"(?!)")  # an adapter that declares no grammar resumes nothing
MAX_SESSION_ID = 200


class InvalidSessionId(ValueError):
    """A value offered as a CLI's session id that is not one in that CLI's grammar."""


class SessionGrammar(Protocol):
    """What check_session_id needs of an adapter (every Adapter has it)."""

    @property
    def name(self) -> str: ...
    @property
    def session_id_pattern(self) -> re.Pattern[str]: ...


def check_session_id(adapter: SessionGrammar, value: object) -> None:
    """Raise InvalidSessionId unless `value` is a session id of `adapter`'s CLI. Called wherever an
    id is read (the session map, the Action's cache, the CLI's own output): an id is passed to
    the CLI's argv, and one outside the grammar (an option, `latest`, a path) must never be."""
    if not isinstance(value, str) or len(value) > MAX_SESSION_ID or \
            adapter.session_id_pattern.fullmatch(value) is None:
        shown = repr(value)[:60] if isinstance(value, str) else type(value).__name__
        raise InvalidSessionId(f"{shown} is not a {adapter.name} session id")
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def json_object(line: bytes) -> dict | None:
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def unrecognised(line: bytes) -> list[Event]:
    """A line no parser understood: kept as an attested progress event, never an error."""
    return [Event(EventKind.PROGRESS, text=line.decode("utf-8", "replace")[:500], raw=line)]


def version_of(output: str) -> str | None:
    match = _VERSION.search(output or "")
    return match.group(0) if match else None


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def http_failure(status: int | None) -> str:
    """The failure kind of a provider HTTP error: a rejected key is actionable ("auth")."""
    return "auth" if status in (401, 403) else "provider"


def gateway_root(url: str) -> str:
    """BOT_<AGENT>_BASE_URL is the server root (like ANTHROPIC_BASE_URL); drop a trailing /v1."""
    url = url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


@dataclass(frozen=True)
class Operator:
    """What the bot's operator configured for one agent. The bot reads its own configuration and
    passes this in; adapters never read the environment themselves."""
    binary: str | None = None  # the CLI's path; else its executable name
    model: str | None = None  # else the CLI's default model
    base_url: str | None = None  # an operator gateway for the agent's provider
    credentials_set: tuple[str, ...] = ()  # which of the adapter's credential_env the operator set
    provider: str | None = None  # the provider the operator chose, for a CLI that speaks to several
    key_env: str | None = None  # the variable holding a custom provider's key, for such a CLI


class CliAdapter:
    """What the four adapters share: registry fields, binary lookup, the never-raising parse
    wrapper, version/auth detection and building the Result. Subclasses provide `command`,
    `_parse(obj, raw)`, `_login(probe)` and the hooks below."""

    name = ""
    executable = ""
    default_allowed_hosts: tuple[str, ...] = ()
    unobserved: tuple[str, ...] = ()
    min_version = "0.0.0"
    credential_env: tuple[str, ...] = ()  # variables that authenticate the CLI
    loaders = Loaders()  # every place the CLI loads code or configuration from on its own
    unknown_session_markers: tuple[str, ...] = ()  # stderr text when --resume names a lost session
    session_id_pattern: re.Pattern[str] = NO_SESSION  # the CLI's session ids, whole (fullmatch)
    # HOME-relative globs, one per path component (`*` never crosses a `/`), of the files that
    # make a session resumable; none declared: every turn starts a fresh session.
    resume_state: tuple[str, ...] = ()
    # The credentials the model relay carries; one it does not carry is refused unless declared
    # in `direct_credentials` (variables, HOME-relative login files, or ANY_OTHER_KEY), which run
    # with the key inside the sandbox.
    relay_channels: tuple[RelayChannel, ...] = ()
    direct_credentials: tuple[str, ...] = ()
    title = ""  # the CLI's name in a sentence ("Claude"); none: its `name`
    aliases: tuple[str, ...] = ()  # other names people write for the CLI in a comment
    credential_kinds: tuple[CredentialKind, ...] = ()  # what can be connected on the settings page
    operator_env: tuple[str, ...] = ()  # the operator's variables, in order; none: credential_env
    action_inputs: ActionInputs | None = None
    npm_package = ""  # the package the pinned CLI is installed from (agents-cli/package.json)
    # (provider, its key variable) for a CLI that speaks to several providers, by model prefix
    provider_keys: tuple[tuple[str, str], ...] = ()
    provider_logins = ""  # the variable holding such a CLI's logins, one JSON object per provider
    operator_login: OperatorLogin | None = None  # a login file of the operator's, when no key is set
    chatgpt_login = ""  # the HOME-relative login file whose ChatGPT login the relay holds and refreshes
    credential_files: tuple[str, ...] = ()  # HOME-relative: never left in a cache or an artifact

    @property
    def supports_resume(self) -> bool:
        return bool(self.resume_state)

    def __init__(self, operator: Operator | None = None):
        self.operator = operator or Operator()

    @property
    def binary(self) -> str:
        return self.operator.binary or self.executable

    def operator_variables(self) -> tuple[str, ...]:
        return self.operator_env or self.credential_env

    def model(self, episode: Episode) -> str | None:
        return episode.model or self.operator.model

    def base_url(self, episode: Episode) -> str | None:
        url = episode.base_url or self.operator.base_url
        return gateway_root(url) if url else None

    # parsing -------------------------------------------------------------------

    def parse(self, line: bytes) -> list[Event]:
        """Typed events for one stdout line; never raises, never drops the line."""
        line = bytes(line).rstrip(b"\r\n")
        obj = json_object(line)
        if obj is None:
            return unrecognised(line)
        try:
            events = self._parse(obj, line)
        except Exception:  # a schema drift must not end the episode
            return unrecognised(line)
        for event in events:
            if event.session_id is not None and not self._is_session_id(event.session_id):
                event.session_id = None  # the line is kept; the id is never stored or resumed
        return events or unrecognised(line)

    def _is_session_id(self, value: object) -> bool:
        try:
            check_session_id(self, value)
        except InvalidSessionId:
            return False
        return True

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        raise NotImplementedError

    # detection -----------------------------------------------------------------

    def detect(self, probe: ProbeFn) -> Readiness:
        fix = f"run `make agents`, or point BOT_{self.name.upper()}_BIN at the CLI"
        try:
            rc, out = probe([self.binary, "--version"])
        except OSError as exc:
            rc, out = 127, str(exc)
        version = version_of(out) if rc == 0 else None
        if version is None:
            return Readiness(False, False, None, f"{self.binary} is not runnable "
                             f"({out.strip()[:160] or f'exit {rc}'}); {fix}", refuse=True)
        if version_tuple(version) < version_tuple(self.min_version):
            return Readiness(True, False, version, f"{self.name} {version} is older than the minimum "
                             f"{self.min_version} that can be locked down; {fix}", refuse=True)
        logged_in, reason = self._login(probe)
        return Readiness(True, logged_in, version, reason)

    def _login(self, probe: ProbeFn) -> tuple[bool, str]:
        return self._env_login()

    def _env_login(self) -> tuple[bool, str]:
        if self.operator.base_url:
            return True, f"through the gateway BOT_{self.name.upper()}_BASE_URL"
        present = [name for name in self.credential_env if name in self.operator.credentials_set]
        if present:
            return True, f"key from {present[0]}"
        return False, (f"not logged in: set {' or '.join(self.credential_env)} in the bot's "
                       "environment, or connect a key on the settings page")

    # the result ----------------------------------------------------------------

    def finish(self, episode: Episode, events: list[Event], exit_code: int | None, stderr: str,
               last_message: str | None) -> Result:
        secrets = episode.credentials.secret_values() + ([episode.bridge.token] if episode.bridge else [])
        tail = mask(_ANSI.sub("", stderr[-STDERR_TAIL:]), secrets)
        session = next((e.session_id for e in reversed(events) if self._is_session_id(e.session_id)), None)
        text = self._final_text(events, last_message)
        error, failure = self._failure(episode, events, exit_code, tail, text)
        return Result(ok=error is None, text=text, session_id=session, usage=self._usage(events),
                      events=events, error=mask(error, secrets) if error else None,
                      exit_code=exit_code, agent=self.name, failure=failure, stderr_tail=tail,
                      resumed=bool(episode.resume_session) and session == episode.resume_session,
                      unobserved=self.unobserved,
                      version=next((e.data["version"] for e in events if e.data and e.data.get("version")), None))

    def _failure(self, episode: Episode, events: list[Event], exit_code: int | None, stderr: str,
                 text: str) -> tuple[str | None, str | None]:
        if episode.resume_session and any(marker in stderr for marker in self.unknown_session_markers):
            return (f"{self.name} no longer knows session {episode.resume_session}; "
                    "start a fresh session with a recap of the thread"), "session_unknown"
        bridge = self._bridge_problem(episode, events, exit_code, stderr)
        if bridge and episode.bridge and episode.mode == "strict":
            return bridge, "bridge"
        terminal = [e for e in events if e.kind == EventKind.ERROR and e.terminal]
        if terminal:
            failure = (terminal[-1].data or {}).get("failure", "provider")
            return terminal[-1].error or f"{self.name} reported a failure", failure
        if exit_code not in (0, None):
            return self._exit_error(exit_code, stderr, events)
        if not text:
            return f"{self.name} finished without an answer", "empty"
        return None, None

    def _exit_error(self, exit_code: int, stderr: str, events: list[Event]) -> tuple[str, str]:
        last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
        nothing = "" if events else " before printing anything"
        detail = f": {last[0][:300]}" if last else ""
        return f"{self.name} exited with code {exit_code}{nothing}{detail}", "exit"

    def _bridge_problem(self, episode: Episode, events: list[Event], exit_code: int | None,
                        stderr: str) -> str | None:
        return None

    def _final_text(self, events: list[Event], last_message: str | None) -> str:
        texts = [e.text for e in events if e.kind == EventKind.TEXT and e.text]
        return texts[-1] if texts else (last_message or "").strip()

    def _usage(self, events: list[Event]) -> Usage:
        total = Usage()
        for event in events:
            if event.kind == EventKind.USAGE and event.usage:
                total = total.add(event.usage)
        return total


_REGISTRY: dict[str, Callable[[Operator | None], Adapter]] = {}


def register(name: str, factory: Callable[[Operator | None], Adapter]) -> None:
    _REGISTRY[name] = factory


def names() -> list[str]:
    """Every registered agent: the built-ins in their order, then the others as registered."""
    return list(_tables()[0])


def canonical(word: str) -> str:
    """The agent a name people write stands for (one of its adapter's `aliases`), else the word."""
    return _tables()[1].get(word, word)


_Tables = tuple[tuple[str, ...], dict[str, str]]
_made: list[tuple[tuple[tuple[str, object], ...], _Tables]] = []  # the last registry's, at most one


def _tables() -> _Tables:
    """The agents in order and every name each answers to (its own, then its adapter's `aliases`;
    the first agent in order wins a shared one), made again whenever the registry differs from
    the last time (a registration, a test's substitution): the intake reads both several times
    per webhook delivery, and each reading sorted the registry and built every adapter."""
    _load_builtins()
    key = tuple(_REGISTRY.items())
    last = _made[0] if _made else None  # read once: another thread may replace it meanwhile
    if last is not None and last[0] == key:
        return last[1]
    ordered = _ordered()
    aliases: dict[str, str] = {}
    for name in ordered:
        for word in (name, *get(name).aliases):
            aliases.setdefault(word, name)
    _made[:] = [(key, (ordered, aliases))]
    return ordered, aliases


def _ordered() -> tuple[str, ...]:
    modules = [f"adapters.{module}" for module in _BUILTINS]
    position = {name: i for i, name in enumerate(_REGISTRY)}

    def order(name: str) -> tuple[int, int]:
        module = getattr(_REGISTRY[name], "__module__", "")
        return (modules.index(module) if module in modules else len(modules), position[name])
    return tuple(sorted(_REGISTRY, key=order))


def get(name: str, operator: Operator | None = None) -> Adapter:
    """The adapter for `name`, configured as the operator set it up (bot.config.operator_for)."""
    _load_builtins()
    try:
        return _REGISTRY[name](operator)
    except KeyError:
        raise KeyError(f"unknown agent {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


_BUILTINS = ("claude_code", "codex", "opencode", "gemini")
# Installed packages add agents under this entry-point group: each entry names a module that
# registers its adapter on import, or an adapter class (registered under its `name`).
PLUGIN_GROUP = "bot.adapters"
_plugins_loaded = False
_builtins_loaded = False


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:  # names() runs several times per webhook delivery: the imports once
        return
    import importlib

    complete = True
    for module in _BUILTINS:
        try:
            importlib.import_module(f"adapters.{module}")
        except ModuleNotFoundError as exc:  # a module still being written
            if exc.name != f"adapters.{module}":
                raise
            complete = False
    _load_plugins()
    _builtins_loaded = complete


def _load_plugins() -> None:
    """The adapters of installed packages (the operator's install, never a repository's files)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    for entry in entry_points(group=PLUGIN_GROUP):
        loaded = entry.load()
        name = getattr(loaded, "name", None) if isinstance(loaded, type) else None
        if isinstance(name, str) and name:
            register(name, loaded)
