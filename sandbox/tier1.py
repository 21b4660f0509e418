"""Tier 1: bubblewrap over a skeleton of the host, an empty network namespace with
injected loopback listeners (egress proxy, MCP bridge, loopback gateways), seccomp,
cgroup memory/pids caps and a wall clock. Refuses (raises Refused) when any part of
that floor cannot be had; never runs with less.
"""
from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Sequence

from sandbox import egress, inject, limits, seccomp
from sandbox.base import (INSIDE_BRIDGE_PORT, INSIDE_PROXY_PORT, Limits, Refused, SandboxConfig,
                          base_env)
from sandbox.process import Tier1Process

STREAM_LIMIT = 1 << 24  # CLIs emit long JSON lines
SANDBOX_TMP = "/tmp"
PROXY_URL = f"http://127.0.0.1:{INSIDE_PROXY_PORT}"
NO_PROXY = "127.0.0.1,localhost,::1"
# Each bind costs ~0.15 ms per start: only what node, git, python and TLS clients read.
ETC_ALLOWLIST = ("passwd", "group", "hosts", "nsswitch.conf", "ssl", "ca-certificates",
                 "alternatives", "localtime", "ld.so.cache", "gitconfig")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
FIX_BWRAP = "install bubblewrap (apt-get install bubblewrap) and make sure `bwrap` is on PATH"
FIX_USERNS = ("enable unprivileged user namespaces (sysctl user.max_user_namespaces > 0; on Ubuntu "
              "24.04 an AppArmor profile granting `userns` to bwrap), or run the bot as root")
FIX_CGROUP = ("run the bot as root, or delegate a cgroup subtree to its user (v1: chown a memory and a "
              "pids subtree; v2: systemd Delegate=yes) and name it in BOT_CGROUP_PARENT")


def _fix_for(bwrap_error: str) -> str:
    if any(word in bwrap_error for word in ("namespace", "uid map", "RTM_NEWADDR", "setting up")):
        return FIX_USERNS
    return "see the bwrap error; run `bot sandbox check` on this host"


def find_bwrap() -> str:
    path = shutil.which("bwrap", path=os.environ.get("PATH", ""))
    if path is None:
        raise Refused("bubblewrap (bwrap) was not found on PATH.", FIX_BWRAP)
    return path


def loopback_gateways(config: SandboxConfig) -> list[int]:
    """Ports of operator gateways on the host's loopback: relayed inside at the same URL."""
    ports = []
    for entry in config.gateways:
        host, port = egress.split_host_port(entry, default_port=None)
        if egress.normalize_host(host) in LOOPBACK_NAMES and port is not None:
            ports.append(port)
    return ports


def inside_env(config: SandboxConfig, env: dict[str, str]) -> dict[str, str]:
    full = base_env(config.home, SANDBOX_TMP) | env
    full.update(HTTPS_PROXY=PROXY_URL, HTTP_PROXY=PROXY_URL, https_proxy=PROXY_URL,
                http_proxy=PROXY_URL, NO_PROXY=NO_PROXY, no_proxy=NO_PROXY, NODE_USE_ENV_PROXY="1")
    full.pop("ALL_PROXY", None)
    full.pop("all_proxy", None)
    return full


def _system_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    for name in ETC_ALLOWLIST:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def git_mounts(workdir: Path, mount_path: str, home: Path | None = None) -> list[str]:
    """The worktree's git data, read-only: the agent can read history but never plant hooks
    or config that the bot's own host-side git would run. A linked worktree's admin dir (and
    the repository it belongs to) is bound at its host path so `.git`'s pointer resolves.

    The `.git` entry is in the agent-writable worktree, so it is checked before anything is
    bound: a symlink is never followed, and a `gitdir:` pointer counts only when it names a
    linked-worktree admin dir (`<repo>/worktrees/<name>`) outside the worktree and the home
    whose own `gitdir` file points back at this worktree, as `git worktree add` leaves it.
    Anything else binds nothing (git inside then fails; no host directory is exposed)."""
    dotgit = workdir / ".git"
    if dotgit.is_symlink():
        return []
    if dotgit.is_dir():
        return ["--ro-bind", str(dotgit), f"{mount_path}/.git"]
    if not dotgit.is_file():
        return []
    common = _linked_repository(workdir, dotgit.read_text(errors="replace").strip(), home)
    return ["--ro-bind", str(common), str(common)] if common is not None else []


def _linked_repository(workdir: Path, pointer: str, home: Path | None) -> Path | None:
    """The repository a genuine linked worktree's `.git` pointer belongs to, else None."""
    if not pointer.startswith("gitdir:"):
        return None
    try:
        real_workdir = workdir.resolve()
        gitdir = (workdir / pointer[len("gitdir:"):].strip()).resolve()
        common = gitdir.parent.parent
        untrusted = [real_workdir] + ([Path(home).resolve()] if home is not None else [])
        if gitdir.parent.name != "worktrees" or any(
                gitdir.is_relative_to(place) or place.is_relative_to(common) for place in untrusted):
            return None
        backlink = Path((gitdir / "gitdir").read_text().strip())
        common_file = gitdir / "commondir"
        named = (gitdir / common_file.read_text().strip()).resolve() if common_file.is_file() else common
    except (OSError, ValueError):
        return None
    if backlink.resolve() != real_workdir / ".git" or named != common:
        return None
    if not ((common / "HEAD").is_file() and (common / "objects").is_dir()):
        return None
    return common


def bwrap_argv(bwrap: str, config: SandboxConfig, argv: Sequence[str], cwd: str | None,
               fds: tuple[int, int, int]) -> list[str]:
    """The whole bwrap command line: paths and fd numbers only, never an env value."""
    seccomp_fd, info_fd, block_fd = fds
    lim = config.limits
    args = [bwrap, *_system_mounts(), "--dev", "/dev", "--proc", "/proc",
            "--size", str(lim.tmpfs_bytes), "--tmpfs", SANDBOX_TMP,
            "--size", str(lim.tmpfs_bytes), "--tmpfs", "/dev/shm", "--tmpfs", "/run",
            "--dir", "/var", "--symlink", "/tmp", "/var/tmp"]
    for path in config.ro_binds:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(config.home), str(config.home)]
    args += ["--bind" if config.writable else "--ro-bind", str(config.workdir), config.mount_path]
    args += git_mounts(Path(config.workdir), config.mount_path, Path(config.home))
    args += ["--remount-ro", "/"]  # bwrap's root tmpfs (mount points, /etc skeleton) stays read-only
    args += ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
             "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox",
             "--seccomp", str(seccomp_fd), "--info-fd", str(info_fd), "--block-fd", str(block_fd),
             "--chdir", cwd or config.mount_path, "--", *argv]
    return args


class Tier1Spawner:
    tier = 1

    def __init__(self, resolve: egress.Resolver = egress.system_resolve):
        self.resolve = resolve  # the proxy's DNS lookup (tests give names private answers)

    def preflight(self, config: SandboxConfig) -> list[tuple[str, bool, str]]:
        from sandbox import preflight
        return preflight.checks()

    def inside_bridge_url(self, config: SandboxConfig, path: str = "/mcp") -> str | None:
        if config.bridge_upstream is None:
            return None
        return f"http://127.0.0.1:{INSIDE_BRIDGE_PORT}{path}"

    async def probe(self, argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[int, str]:
        """Run a detection command (a CLI's --version) in a throwaway tier-1 sandbox."""
        from bot import config as bot_config
        with tempfile.TemporaryDirectory(prefix="bot-probe-") as scratch:
            home = Path(scratch) / "home"
            home.mkdir()
            cfg = SandboxConfig(workdir=Path(scratch), home=home, ro_binds=_probe_binds(bot_config, argv),
                                limits=Limits(timeout_s=30))
            try:
                proc = await self.start(cfg, argv, env or {})
            except Refused as exc:
                return 70, f"refused: {exc}"
            out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
            rc = await proc.wait()
            return (124 if proc.outcome()["timed_out"] else rc), (out + err).decode("utf-8", "replace")

    async def start(self, config: SandboxConfig, argv: Sequence[str], env: dict[str, str],
                    stdin: bytes | None = None, cwd: str | None = None) -> Tier1Process:
        bwrap = find_bwrap()
        for path in (config.workdir, *config.ro_binds):
            if not Path(path).exists():
                raise FileNotFoundError(f"sandbox mount source does not exist: {path}")
        try:
            filter_fd = seccomp.program_fd(config.allow_unix_sockets)
        except seccomp.UnsupportedArch as exc:
            raise Refused(str(exc), "run the bot on an x86_64 host") from None
        config.home.mkdir(parents=True, exist_ok=True)
        run_id = config.run_id or secrets.token_hex(8)
        try:
            groups = limits.create(run_id, config.limits.memory_bytes, config.limits.pids)
        except limits.CgroupUnavailable as exc:
            os.close(filter_fd)
            raise Refused(f"no usable cgroup for the memory and process caps: {exc}", FIX_CGROUP) from None
        try:
            return await self._launch(bwrap, config, argv, env, stdin, cwd, filter_fd, groups)
        except BaseException:
            groups.remove()
            raise

    async def _launch(self, bwrap, config, argv, env, stdin, cwd, filter_fd, groups) -> Tier1Process:
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        fds = (filter_fd, info_w, block_r)
        try:
            proc = await asyncio.create_subprocess_exec(
                *limits.join_prefix(groups.join_paths(), config.limits.open_files),
                *bwrap_argv(bwrap, config, argv, cwd, fds), env=inside_env(config, env),
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, pass_fds=fds,
                start_new_session=True, limit=STREAM_LIMIT)
        finally:
            for fd in fds:
                os.close(fd)
        process = Tier1Process(proc, groups, config.limits)
        try:
            child_pid = await _read_child_pid(info_r)
            if child_pid is None:
                detail = (await proc.stderr.read()).decode("utf-8", "replace").strip()
                if await proc.wait() == limits.JOIN_FAILED_EXIT:
                    raise Refused(f"no usable cgroup for the memory and process caps: {detail}", FIX_CGROUP)
                raise Refused(f"bubblewrap could not create the sandbox: {detail or 'no detail'}",
                              _fix_for(detail))
            await self._wire_network(process, config, child_pid)
            os.write(block_w, b"1")
        except BaseException:
            await process.kill()
            raise
        finally:
            os.close(info_r)
            os.close(block_w)
        process.start_watchdog()
        if stdin is not None:
            await _feed(proc, stdin)
        return process

    async def _wire_network(self, process: Tier1Process, config: SandboxConfig, child_pid: int) -> None:
        routes = {INSIDE_PROXY_PORT: None}
        if config.bridge_upstream is not None:
            routes[INSIDE_BRIDGE_PORT] = config.bridge_upstream
        for port in loopback_gateways(config):
            if port in routes:
                raise Refused(f"gateway port {port} collides with a sandbox listener",
                              "move the gateway to another port")
            routes[port] = ("127.0.0.1", port)
        try:
            listeners = inject.inject_listeners(child_pid, list(routes))
        except (inject.InjectionFailed, OSError) as exc:
            raise Refused(f"could not inject loopback listeners into the sandbox: {exc}", FIX_USERNS) from None
        proxy = egress.EgressProxy(egress.Policy.build(config.allowed_hosts, config.gateways),
                                   process.egress, config.egress_log, self.resolve)
        for listener, (port, upstream) in zip(listeners, routes.items()):
            if upstream is None:
                server = await inject.serve(listener, proxy.handle, limit=egress.HEAD_LIMIT)
            else:
                server = await inject.serve(listener, inject.tcp_relay(*upstream))
            process.servers.append(server)


async def _read_child_pid(fd: int) -> int | None:
    """bwrap's {"child-pid": N} from --info-fd, or None when bwrap died first."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    data = b""
    while True:
        ready: asyncio.Future = loop.create_future()
        loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        data += chunk
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError):
            continue


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    try:
        proc.stdin.write(data)
        await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass


def _probe_binds(bot_config, argv: Sequence[str]) -> tuple[Path, ...]:
    """The agent install folder, plus the folder of a binary installed elsewhere (BOT_<AGENT>_BIN)."""
    binds = [bot_config.agents_dir()]
    if argv and os.path.isabs(argv[0]):
        real = Path(argv[0]).resolve().parent
        if not any(real.is_relative_to(p) for p in (Path("/usr"), *binds)):
            binds.append(real)
    return tuple(p for p in binds if p.exists())
