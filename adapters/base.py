"""The adapter contract (DESIGN §4): one module per agent CLI behind these types.

Everything CLI-specific lives in the adapter modules; the runner, the bridge and
governance are shared, so a fifth CLI is a new module, not a new subsystem.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence


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

    def add(self, other: "Usage") -> "Usage":
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


@dataclass
class Invocation:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # additions to the scrubbed env
    stdin: bytes | None = None  # None: stdin is /dev/null
    files: dict[str, bytes] = field(default_factory=dict)  # HOME-relative path -> content
    last_message_file: str | None = None  # HOME-relative path the CLI writes its answer to
    cwd: str | None = None


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


ProbeFn = Callable[[Sequence[str]], "tuple[int, str]"]


class Adapter(Protocol):
    name: str
    binary: str
    default_allowed_hosts: tuple[str, ...]
    supports_resume: bool

    def detect(self, probe: ProbeFn) -> Readiness: ...

    def command(self, episode: Episode) -> Invocation: ...

    def parse(self, line: bytes) -> list[Event]: ...


_REGISTRY: dict[str, Callable[[], Adapter]] = {}


def register(name: str, factory: Callable[[], Adapter]) -> None:
    _REGISTRY[name] = factory


def names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


def get(name: str) -> Adapter:
    _load_builtins()
    try:
        return _REGISTRY[name]()
    except KeyError:
        raise KeyError(f"unknown agent {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def _load_builtins() -> None:
    import importlib

    for module in ("claude_code", "codex", "opencode", "gemini"):
        try:
            importlib.import_module(f"adapters.{module}")
        except ModuleNotFoundError as exc:  # a module still being written
            if exc.name != f"adapters.{module}":
                raise
