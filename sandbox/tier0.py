"""Tier 0: a process jail. Scrubbed environment, own session, own HOME and TMPDIR,
rlimit backstops. No filesystem or network isolation: used only when the operator
sets BOT_SANDBOX_TIER=0 (and by tests that exercise an adapter without bubblewrap).

The command runs as the bot's own user. System files (placed at absolute paths in tier 1)
are written under HOME/.bot/system instead, and an environment value naming one is
pointed at that copy.

Tier 1 covers a strict CLI's project loaders (`SandboxConfig.masked`: its plugins, hooks, MCP
servers, instruction files) in its view of the worktree; tier 0 has no view to cover them in. So
a strict CLI (loaders to keep out, a read-only worktree asked for) never starts in the worktree:
it starts in a project folder of its own, HOME/.bot/project, emptied before every start, and
reaches the worktree through the bridge. That folder's parents are the CLI home, whose loader
paths the runner strips before every start, and the bot's data dir. A writable sandbox (the
`run` tool's) starts in the worktree, as its command needs to.
"""
from __future__ import annotations

import asyncio
import os
import resource
import shutil
import signal
from collections.abc import Callable, Sequence
from pathlib import Path

from sandbox import priority
from sandbox.base import STREAM_LIMIT, EgressDecision, Refused, SandboxConfig, base_env


class Tier0Process:
    tier = 0

    def __init__(self, proc: asyncio.subprocess.Process, timeout_s: float):
        self._proc = proc
        self.pid = proc.pid
        assert proc.stdout is not None and proc.stderr is not None  # started with both piped
        self.stdout: asyncio.StreamReader = proc.stdout
        self.stderr: asyncio.StreamReader = proc.stderr
        self.egress: list[EgressDecision] = []
        self._timed_out = False
        self._killed = False
        self._watchdog = asyncio.get_running_loop().call_later(timeout_s, self._on_timeout)

    def _on_timeout(self) -> None:
        self._timed_out = True
        self._killpg()

    def _killpg(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    async def wait(self) -> int:
        rc = await self._proc.wait()
        self._watchdog.cancel()
        self._killpg()  # daemons left in the session die with the episode
        return rc

    async def kill(self) -> None:
        self._killed = True
        self._killpg()
        await self._proc.wait()

    def outcome(self) -> dict:
        return {"tier": 0, "exit_code": self._proc.returncode, "timed_out": self._timed_out,
                "killed": self._killed, "oom_killed": False, "pids_max_hit": False}


class Tier0Spawner:
    tier = 0

    def inside_bridge_url(self, config: SandboxConfig, path: str = "/mcp") -> str | None:
        if config.bridge_upstream is None:
            return None
        host, port = config.bridge_upstream
        return f"http://{host}:{port}{path}"

    async def probe(self, argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, env=env, start_new_session=True)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 30)
        except TimeoutError:
            os.killpg(proc.pid, signal.SIGKILL)
            return 124, "probe timed out"
        return proc.returncode or 0, out.decode("utf-8", "replace")

    async def start(self, config: SandboxConfig, argv: Sequence[str], env: dict[str, str],
                    stdin: bytes | None = None, cwd: str | None = None) -> Tier0Process:
        if config.min_tier > 0:
            raise Refused("tier 0 cannot meet a tier-1 floor.", "install bubblewrap or set BOT_SANDBOX_TIER=0")
        tmpdir = config.tmpdir or config.home / ".tmp"
        tmpdir.mkdir(parents=True, exist_ok=True)
        full_env = base_env(config.home, tmpdir) | _place_system_files(config, env)
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=start_folder(config, cwd), env=full_env,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True, preexec_fn=_backstops(config), limit=STREAM_LIMIT)
        priority.lower_nice(proc.pid)
        priority.lower_session(proc.pid, lambda: proc.returncode is None)  # it leads a session of its own
        if stdin is not None:
            assert proc.stdin is not None  # piped when there is stdin
            proc.stdin.write(stdin)
            await proc.stdin.drain()
            proc.stdin.close()
        return Tier0Process(proc, config.limits.timeout_s)


PROJECT_FOLDER = ".bot/project"  # under HOME: where a strict CLI starts at tier 0


def start_folder(config: SandboxConfig, cwd: str | None = None) -> str:
    """Where the command starts: the worktree (or `cwd`), except for a strict CLI whose loaders
    must stay out (`masked`, read-only), which starts in an empty project folder of its own."""
    if not config.masked or config.writable:
        return cwd or str(config.workdir)
    folder = Path(config.home) / PROJECT_FOLDER
    try:
        if folder.is_symlink() or folder.exists():
            _clear(folder)
        folder.mkdir(mode=0o700, parents=True)
    except (OSError, RecursionError) as exc:
        why = getattr(exc, "strerror", None) or type(exc).__name__
        raise Refused(f"tier 0 could not prepare the CLI's own project folder ({why}), so its "
                      "loaders could not be kept out of the worktree: nothing was run.",
                      "run at tier 1 (install bubblewrap; in the Action, a runner with passwordless sudo and "
                      "sandbox-tier 1)") from exc
    return str(folder)


def _clear(folder: Path) -> None:
    """Remove what a run left in the project folder (never following a link)."""
    if folder.is_symlink() or not folder.is_dir():
        folder.unlink()
    else:
        shutil.rmtree(folder)


def _place_system_files(config: SandboxConfig, env: dict[str, str]) -> dict[str, str]:
    if not config.system_files:
        return env
    folder = config.home / ".bot" / "system"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    moved = {}
    for path, content in config.system_files.items():
        copy = folder / path.strip("/").replace("/", "_")
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        moved[path] = str(copy)
    return {name: moved.get(value, value) for name, value in env.items()}


def _backstops(config: SandboxConfig) -> Callable[[], None]:
    nofile = config.limits.open_files

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply
