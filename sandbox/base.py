"""The spawner contract (docs/sandbox.md): start an agent CLI under a floor, or refuse.

A spawner never silently runs a command with less containment than asked for:
when the host cannot meet `SandboxConfig.min_tier`, `start()` raises `Refused`
with the reason and the fix.
"""
from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

INSIDE_PROXY_PORT = 3128
INSIDE_BRIDGE_PORT = 8765
REFUSED_EXIT_CODE = 70  # `bot sandbox exec` exit status when the floor refused
# What a sandbox's output stream holds before it stops reading the pipe (asyncio pauses the pipe at
# twice this): a CLI printing faster than the bot takes its lines (a paced run, bot/episode/pace.py)
# is then held by its own pipe, not by the bot's memory. The readers take chunks, never whole lines.
STREAM_LIMIT = 64 << 10


class Refused(RuntimeError):
    """The host cannot provide the configured floor; nothing was run."""

    def __init__(self, reason: str, fix: str = ""):
        super().__init__(reason if not fix else f"{reason} Fix: {fix}")
        self.reason = reason
        self.fix = fix


@dataclass(frozen=True)
class Host:
    """What the operator configured about this machine. The bot reads its configuration and
    passes this in (bot.config.sandbox_host); the sandbox reads no configuration of its own."""
    cgroup_root: Path = Path("/sys/fs/cgroup")
    cgroup_parent: str | None = None  # a subtree of each hierarchy delegated to the bot
    tool_dirs: tuple[Path, ...] = ()  # where agent CLIs are installed (bound read-only for probes)


@dataclass
class Limits:
    memory_bytes: int = 2 << 30
    pids: int = 512
    timeout_s: float = 600.0
    tmpfs_bytes: int = 512 << 20  # /tmp and /dev/shm, each a tmpfs of this size
    open_files: int = 4096
    connections: int = 64  # served at once per listener (egress proxy, bridge relay); more are refused
    worktree_growth_bytes: int = 1 << 30  # how much the writable worktree may grow in one episode
    home_bytes: int = 512 << 20  # how much the persistent CLI home may hold

    def describe(self) -> str:
        return f"{_human_bytes(self.memory_bytes)} · {int(self.timeout_s)} s · {self.pids} pids"


@dataclass
class SandboxConfig:
    workdir: Path  # host path of the worktree
    home: Path  # host path of this episode's CLI home (read-write)
    mount_path: str = "/workspace"  # where the worktree appears inside (stable across turns)
    writable: bool = False  # worktree writable (native mode, `run` tool) or read-only (strict)
    allowed_hosts: tuple[str, ...] = ()  # "api.openai.com", ".googleapis.com", "10.0.0.5:8443"
    gateways: tuple[str, ...] = ()  # operator gateways "host:port", allowed even when private
    limits: Limits = field(default_factory=Limits)
    min_tier: int = 1
    ro_binds: tuple[Path, ...] = ()  # extra read-only host paths (the agent CLI install folder)
    bridge_upstream: tuple[str, int] | None = None  # host address of the MCP bridge
    tmpdir: Path | None = None  # host TMPDIR for tier 0 (tier 1 uses its own tmpfs)
    allow_unix_sockets: bool = False  # tier 1: socket(AF_UNIX) allowed inside (seccomp knob)
    egress_log: Path | None = None  # tier 1: one JSON line per egress decision
    run_id: str | None = None  # names the run's cgroups; random when None
    # tier 1: absolute path inside -> content, placed read-only; owned by root inside when the bot
    # runs as root (a CLI's system-wide settings, which it trusts only when root owns them)
    system_files: dict[str, bytes] = field(default_factory=dict)
    # tier 1: worktree-relative paths the command must not see (a CLI's own loaders: plugins,
    # hooks, settings). Each present one is covered read-only, a folder by an empty folder and a
    # file by an empty file; one that is absent stays absent (the worktree is then read-only).
    masked: tuple[str, ...] = ()


@dataclass
class EgressDecision:
    host: str
    port: int
    allowed: bool
    reason: str
    address: str | None = None
    bytes_up: int = 0
    bytes_down: int = 0
    sni: str | None = None
    time: float = 0.0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class SandboxProcess(Protocol):
    pid: int
    stdout: asyncio.StreamReader
    stderr: asyncio.StreamReader
    tier: int
    egress: list[EgressDecision]  # every proxy decision, appended live

    async def wait(self) -> int: ...

    async def kill(self) -> None:
        """Kill everything the episode started; nothing survives."""

    def outcome(self) -> dict:
        """What the floor observed: timed_out, oom_killed, pids_max_hit, exit code."""


class Spawner(Protocol):
    tier: int

    def inside_bridge_url(self, config: SandboxConfig, path: str = "/mcp") -> str | None:
        """The bridge URL as the sandboxed process must use it."""

    async def probe(self, argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[int, str]:
        """Best-effort run for detection (version/auth probes)."""

    async def start(
        self,
        config: SandboxConfig,
        argv: Sequence[str],
        env: dict[str, str],
        stdin: bytes | None = None,
        cwd: str | None = None,
    ) -> SandboxProcess:
        """Start argv under the floor or raise Refused. env values never reach argv."""


def _human_bytes(n: float) -> str:
    unit = "B"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            break
        n /= 1024
    return f"{n:.0f} {unit}" if n == int(n) else f"{n:.1f} {unit}"


BASE_ENV_NAMES = ("PATH", "LANG", "LC_ALL", "TERM", "TZ")


def base_env(home: Path | str, tmpdir: Path | str) -> dict[str, str]:
    """The scrubbed environment every sandboxed process starts from."""
    import os

    env = {name: os.environ[name] for name in BASE_ENV_NAMES if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env.update(HOME=str(home), TMPDIR=str(tmpdir), XDG_CONFIG_HOME=f"{home}/.config",
               XDG_DATA_HOME=f"{home}/.local/share", XDG_CACHE_HOME=f"{home}/.cache",
               XDG_STATE_HOME=f"{home}/.local/state",
               PYTHONDONTWRITEBYTECODE="1")  # no __pycache__ left in the worktree as a "change"
    return env
