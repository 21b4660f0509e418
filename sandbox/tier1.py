"""Tier 1: bubblewrap over a skeleton of the host, an empty network namespace with
injected loopback listeners (egress proxy, MCP bridge, loopback gateways), seccomp,
cgroup memory/pids caps and a wall clock. The command never runs as host root (see
sandbox/identity) and the kernel's global knobs under /proc are read-only. Refuses
(raises Refused) when any part of that floor cannot be had; never runs with less.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sandbox import cgroup_pool, egress, identity, inject, launcher, layers, limits, priority, seccomp
from sandbox.base import (
    INSIDE_BRIDGE_PORT,
    INSIDE_PROXY_PORT,
    STREAM_LIMIT,
    Host,
    Limits,
    Refused,
    SandboxConfig,
    base_env,
)
from sandbox.bounded import read_capped
from sandbox.process import Tier1Process

SANDBOX_TMP = "/tmp"
GIT_POINTER_CAP = 4096  # the worktree's `.git` file: one `gitdir: <path>` line
PROXY_URL = f"http://127.0.0.1:{INSIDE_PROXY_PORT}"
NO_PROXY = "127.0.0.1,localhost,::1"
# Each bind costs ~0.15 ms per start: only what node, git, python and TLS clients read.
ETC_ALLOWLIST = ("passwd", "group", "hosts", "nsswitch.conf", "ssl", "ca-certificates",
                 "alternatives", "localtime", "ld.so.cache", "gitconfig")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
# /proc entries that reach the host kernel rather than the sandbox's own processes (sysctls,
# sysrq, filesystem knobs, MTRRs, PSI triggers, ACPI wakeup, SCSI device add/remove): bound
# read-only over themselves when the host has them (each bind costs ~0.15 ms). bwrap itself
# covers irq and bus.
PROC_READ_ONLY = ("sys", "sysrq-trigger", "fs", "mtrr", "pressure", "acpi", "scsi")
# bwrap's pid 1 runs without the seccomp filter: its memory must not be writable from inside.
INIT_MEMORY = ("/proc/1/mem", "/proc/1/task/1/mem")
FIX_BWRAP = "install bubblewrap (apt-get install bubblewrap) and make sure `bwrap` is on PATH"
FIX_USERNS = ("enable unprivileged user namespaces (sysctl user.max_user_namespaces > 0; on Ubuntu "
              "24.04 an AppArmor profile granting `userns` to bwrap), or run the bot as root")
FIX_LAUNCHER_ARGS = ("keep the data dir, its worktrees and homes at absolute paths without ',', ':', '\\' or "
                     "control characters (they go into mount options)")
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
    return os.path.abspath(path)  # the launcher runs it by absolute path only


def loopback_gateways(config: SandboxConfig) -> list[int]:
    """Ports of operator gateways on the host's loopback: relayed inside at the same URL."""
    ports = []
    for entry in config.gateways:
        host, port = egress.split_host_port(entry, default_port=None)
        if egress.normalize_host(host) in LOOPBACK_NAMES and port is not None:
            ports.append(port)
    return ports


def inside_env(config: SandboxConfig, env: dict[str, str], trust_repositories: bool = False) -> dict[str, str]:
    full = base_env(config.home, SANDBOX_TMP) | env
    full.update(HTTPS_PROXY=PROXY_URL, HTTP_PROXY=PROXY_URL, https_proxy=PROXY_URL,
                http_proxy=PROXY_URL, NO_PROXY=NO_PROXY, no_proxy=NO_PROXY, NODE_USE_ENV_PROXY="1")
    full.pop("ALL_PROXY", None)
    full.pop("all_proxy", None)
    if trust_repositories:
        _trust_repositories(full)
    return full


def _trust_repositories(env: dict[str, str]) -> None:
    """The sandbox user owns neither the worktree's top directory nor the git data (the bot
    does), so its git would refuse them as "dubious ownership". Inside the sandbox that
    protection has nothing to protect: whatever git could run there, the agent can run."""
    _git_config(env, "safe.directory", "*")
    # the bot's index was written while the files were the bot's: the hand-over changed their
    # owner and ctime, not their content, and git inside cannot rewrite the read-only index, so
    # without these every `git status` would re-read every file
    _git_config(env, "core.checkStat", "minimal")
    _git_config(env, "core.trustctime", "false")


def _git_config(env: dict[str, str], key: str, value: str) -> None:
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    env[f"GIT_CONFIG_KEY_{count}"] = key
    env[f"GIT_CONFIG_VALUE_{count}"] = value
    env["GIT_CONFIG_COUNT"] = str(count + 1)


@dataclass(frozen=True)
class Switch:
    """What bwrap needs when the bot is root and the command must run as another uid."""

    who: identity.Identity
    userns_block_fd: int


def _system_mounts(data_fds: dict[str, int]) -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--dir", "/etc"]  # a bind's missing parent would be 0700
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    for name in ETC_ALLOWLIST:
        if f"/etc/{name}" not in data_fds:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for path, fd in data_fds.items():  # made by bwrap's set-up: owned by root inside when the bot is root
        args += ["--perms", "0644", "--ro-bind-data", str(fd), path]
    return args


def _proc_mounts() -> list[str]:
    args = ["--proc", "/proc"]
    for name in PROC_READ_ONLY:
        args += ["--ro-bind-try", f"/proc/{name}", f"/proc/{name}"]
    for path in INIT_MEMORY:
        args += ["--ro-bind", "/dev/null", path]
    return args


def _parent_dirs(destinations: Sequence[str]) -> list[str]:
    """bwrap makes a bind's missing parents mode 0700, which the sandbox user (not their
    owner when the bot is root) could not cross: make them 0755 first."""
    parents = {str(parent) for dest in destinations for parent in PurePosixPath(dest).parents}
    parents.discard("/")
    return [arg for parent in sorted(parents, key=lambda p: p.count("/")) for arg in ("--dir", parent)]


def _switch_args(switch: Switch | None) -> tuple[list[str], list[str]]:
    """bwrap options and the command prefix that make the command run as the sandbox user."""
    if switch is None:
        return ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"], []
    args = ["--unshare-user", "--userns-block-fd", str(switch.userns_block_fd), "--cap-drop", "ALL"]
    for cap in identity.SWITCH_CAPS:
        args += ["--cap-add", cap]
    return args, switch.who.command_prefix()


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
    try:
        pointer = read_capped(dotgit, GIT_POINTER_CAP)
    except OSError:
        return []
    common = None if pointer.cut else _linked_repository(workdir, pointer.data.decode(errors="replace").strip(), home)
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


def masked_entries(config: SandboxConfig) -> list[tuple[str, bool]]:
    """The masked paths present in the worktree, as (path inside, is a folder), outermost first;
    a path under an already masked folder is covered by it. A symlink counts as what it points to;
    inside, bwrap mounts over what it resolves to there. One that is absolute, leads out of the
    worktree or nowhere is refused here, before anything runs, rather than left unmasked."""
    entries: list[tuple[str, bool]] = []
    for relative in sorted(config.masked, key=lambda path: PurePosixPath(path).parts):
        parts = PurePosixPath(relative).parts
        if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
            raise ValueError(f"masked path {relative!r} is not inside the worktree")
        inside = str(PurePosixPath(config.mount_path, *parts))
        if any(folder and _is_under(inside, path) for path, folder in entries):
            continue
        host = Path(config.workdir, *parts)
        if host.is_symlink():
            _refuse_uncoverable_link(Path(config.workdir), host, relative)
        if host.is_symlink() or host.exists():
            entries.append((inside, host.is_dir()))
    return entries


def _refuse_uncoverable_link(worktree: Path, link: Path, relative: str) -> None:
    """A masked path that is a link bwrap could not mount over the same target inside."""
    target = os.readlink(link)
    resolved = link.resolve()
    if os.path.isabs(target) or not resolved.is_relative_to(worktree.resolve()) or not resolved.exists():
        raise Refused(f"the worktree's {relative} is a link that leads out of the worktree or nowhere, "
                      "where its loader path cannot be masked: nothing was run")


def masked_files(config: SandboxConfig) -> dict[str, bytes]:
    """An empty stand-in for each masked file present (`{}` for JSON, which a CLI parses)."""
    return {path: b"{}" if path.endswith((".json", ".jsonc")) else b""
            for path, folder in masked_entries(config) if not folder}


def mask_mounts(config: SandboxConfig, file_fds: dict[str, int]) -> list[str]:
    """Mounts over the worktree's masked paths, after the worktree's own bind: an empty read-only
    tmpfs over each folder, the placed stand-in (file_fds, from masked_files) over each file."""
    args: list[str] = []
    for path, folder in masked_entries(config):
        if folder:
            args += ["--perms", "0555", "--size", "4096", "--tmpfs", path, "--remount-ro", path]
        elif path in file_fds:
            args += ["--perms", "0444", "--ro-bind-data", str(file_fds[path]), path]
        else:
            raise ValueError(f"no stand-in was placed for the masked file {path}")
    return args


def _is_under(path: str, folder: str) -> bool:
    return PurePosixPath(path).is_relative_to(folder) and path != folder


def bwrap_argv(bwrap: str, config: SandboxConfig, argv: Sequence[str], cwd: str | None,
               fds: tuple[int, int, int], switch: Switch | None = None,
               data_fds: dict[str, int] | None = None) -> list[str]:
    """The whole bwrap command line: paths and fd numbers only, never an env value."""
    seccomp_fd, info_fd, block_fd = fds
    lim = config.limits
    user_args, prefix = _switch_args(switch)
    data_fds = data_fds or {}
    masks = {path: fd for path, fd in data_fds.items() if _is_under(path, config.mount_path)}
    system = {path: fd for path, fd in data_fds.items() if path not in masks}
    args = [bwrap, *_system_mounts(system), "--dev", "/dev", *_proc_mounts(),
            "--perms", "1777", "--size", str(lim.tmpfs_bytes), "--tmpfs", SANDBOX_TMP,
            "--perms", "1777", "--size", str(lim.tmpfs_bytes), "--tmpfs", "/dev/shm", "--tmpfs", "/run",
            "--dir", "/var", "--symlink", "/tmp", "/var/tmp"]
    binds = []
    for path in config.ro_binds:
        binds += ["--ro-bind", str(path), str(path)]
    binds += ["--bind", str(config.home), str(config.home)]
    binds += ["--bind" if config.writable else "--ro-bind", str(config.workdir), config.mount_path]
    binds += git_mounts(Path(config.workdir), config.mount_path, Path(config.home))
    args += _parent_dirs(binds[2::3]) + binds
    args += mask_mounts(config, masks)
    args += ["--remount-ro", "/"]  # bwrap's root tmpfs (mount points, /etc skeleton) stays read-only
    args += ["--unshare-all", *user_args, "--die-with-parent", "--new-session", "--hostname", "sandbox",
             "--seccomp", str(seccomp_fd), "--info-fd", str(info_fd), "--block-fd", str(block_fd),
             "--chdir", cwd or config.mount_path, "--", *prefix, *argv]
    return args


class Tier1Spawner:
    tier = 1

    def __init__(self, resolve: egress.Resolver = egress.system_resolve, host: Host = Host()):
        self.resolve = resolve  # the proxy's DNS lookup (tests give names private answers)
        self.host = host

    def inside_bridge_url(self, config: SandboxConfig, path: str = "/mcp") -> str | None:
        if config.bridge_upstream is None:
            return None
        return f"http://127.0.0.1:{INSIDE_BRIDGE_PORT}{path}"

    async def probe(self, argv: Sequence[str], env: dict[str, str] | None = None) -> tuple[int, str]:
        """Run a detection command (a CLI's --version) in a throwaway tier-1 sandbox."""
        with tempfile.TemporaryDirectory(prefix="bot-probe-") as scratch:
            home = Path(scratch) / "home"
            home.mkdir()
            cfg = SandboxConfig(workdir=Path(scratch), home=home, ro_binds=_probe_binds(self.host.tool_dirs, argv),
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
        config.home.mkdir(parents=True, exist_ok=True)
        who, capped = await asyncio.to_thread(_user_and_layers, config)
        try:
            filter_fd = seccomp.program_fd(config.allow_unix_sockets)
        except seccomp.UnsupportedArch as exc:
            capped.remove()
            raise Refused(str(exc), "run the bot on an x86_64 host") from None
        try:
            groups = _run_cgroups(config, self.host)
        except limits.CgroupUnavailable as exc:
            os.close(filter_fd)
            capped.remove()
            raise Refused(f"no usable cgroup for the memory and process caps: {exc}", FIX_CGROUP) from None
        except BaseException:
            os.close(filter_fd)
            capped.remove()
            raise
        try:
            return await self._launch(bwrap, config, argv, env, stdin, cwd, filter_fd, groups, who, capped)
        except BaseException:
            groups.remove()
            capped.remove()
            raise

    async def _launch(self, bwrap: str, config: SandboxConfig, argv: Sequence[str], env: dict[str, str],
                      stdin: bytes | None, cwd: str | None, filter_fd: int, groups: limits.CgroupSet,
                      who: identity.Identity, capped: layers.Layers) -> Tier1Process:
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        told, kept = _word_pipes(capped)
        fds = (filter_fd, info_w, block_r)
        switch, userns_w = _switch_for(who)
        data_fds = {path: _data_fd(data) for path, data in _placed_files(config, who).items()}
        passed = (fds + ((switch.userns_block_fd,) if switch else ()) + tuple(data_fds.values())
                  + (told or ()))
        try:
            proc = await asyncio.create_subprocess_exec(
                *capped.prefix(groups, config.limits.open_files, told),
                *bwrap_argv(bwrap, config, argv, cwd, fds, switch, data_fds),
                env=inside_env(config, env, trust_repositories=who.switched),
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, pass_fds=passed,
                start_new_session=True, limit=STREAM_LIMIT)
        except BaseException:
            for fd in kept or ():
                os.close(fd)
            raise
        finally:
            for fd in passed:
                os.close(fd)
        process = Tier1Process(proc, groups, config.limits, capped, _refill_after(config, self.host), kept)
        try:
            child_pid = await _read_child_pid(info_r)
            if child_pid is None:
                raise await _launch_failure(proc)
            try:
                if switch is not None:
                    assert userns_w is not None  # _switch_for gives both or neither
                    _map_sandbox_user(who, child_pid, userns_w)
                await self._wire_network(process, config, child_pid)
            except (Refused, OSError) as exc:
                # bwrap reports its child before the child mounts the new root: a mount the
                # runtime refuses (a masked /proc) ends the child while it is being wired up,
                # and bwrap's own words are the reason, not the vanished /proc/PID
                raise (await _died_during_setup(proc) or exc) from None
            priority.lower_nice(child_pid)  # it waits for the unblock: what it starts inherits this
            await _unblock(proc, block_w)
            priority.lower_session(child_pid, lambda: proc.returncode is None)
        except BaseException:
            await process.kill()
            await process.cleaned_up()  # the caller removes the layers and cgroups after it
            raise
        finally:
            for fd in (info_r, block_w) + ((userns_w,) if userns_w is not None else ()):
                os.close(fd)
        process.start_watchdog()
        if stdin is not None:
            await _feed(proc, stdin)
        return process

    async def _wire_network(self, process: Tier1Process, config: SandboxConfig, child_pid: int) -> None:
        routes: dict[int, tuple[str, int] | None] = {INSIDE_PROXY_PORT: None}
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
                                   process.egress, config.egress_log, self.resolve, config.limits.connections)
        for listener, upstream in zip(listeners, routes.values(), strict=True):
            if upstream is None:
                server = await inject.serve(listener, proxy.handle, limit=egress.HEAD_LIMIT)
            else:
                server = await inject.serve(listener, proxy.relay(*upstream))
            process.servers.append(server)


def _word_pipes(capped: layers.Layers) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """The compiled launcher's word to the bot and the bot's answer (sandbox/process.py): the
    launcher's ends, then the bot's; none for the Python launcher."""
    if capped.compiled is None:
        return None, None
    word_r, word_w = os.pipe()
    answer_r, answer_w = os.pipe()
    return (word_w, answer_r), (word_r, answer_w)


async def _launch_failure(proc: asyncio.subprocess.Process) -> Refused:
    """Why bwrap (or the prefix that joins the cgroups and caps the layers) exited before the
    sandbox existed, from its exit status and its stderr."""
    assert proc.stderr is not None  # started with stderr piped
    detail = (await proc.stderr.read()).decode("utf-8", "replace").strip()
    status = await proc.wait()
    if status == limits.JOIN_FAILED_EXIT:
        return Refused(f"no usable cgroup for the memory and process caps: {detail}", FIX_CGROUP)
    if status == layers.FAILED_EXIT:
        return Refused(f"no size-capped layer for the writable folders: {detail}", FIX_USERNS)
    if status == launcher.USAGE_EXIT:
        return Refused(f"the layer launcher refused its arguments: {detail}", FIX_LAUNCHER_ARGS)
    return Refused(f"bubblewrap could not create the sandbox: {detail or 'no detail'}", _fix_for(detail))


async def _died_during_setup(proc: asyncio.subprocess.Process, wait_s: float = 2.0) -> Refused | None:
    """bwrap's own failure when it exits within `wait_s` of a failed setup step, else None (the
    step's failure is then the reason)."""
    try:
        await asyncio.wait_for(proc.wait(), wait_s)
    except TimeoutError:
        return None
    return await _launch_failure(proc) if proc.returncode else None


def _run_cgroups(config: SandboxConfig, host: Host) -> limits.CgroupSet:
    """The run's own cgroups: named for config.run_id when it has one, else a set made ahead."""
    lim = config.limits
    if config.run_id:
        return limits.create(config.run_id, lim.memory_bytes, lim.pids, host)
    return cgroup_pool.POOL.take(lim.memory_bytes, lim.pids, host)


def _refill_after(config: SandboxConfig, host: Host) -> Callable[[], None] | None:
    """What the run's clean-up does once its cgroups are removed: make the next starts' sets."""
    if config.run_id:
        return None
    lim = config.limits
    return lambda: cgroup_pool.POOL.refill(lim.memory_bytes, lim.pids, host)


def _sandbox_user(config: SandboxConfig) -> tuple[identity.Identity, list[str]]:
    """Who the command runs as, with its HOME and the worktree handed over to it (a walk over
    the worktree: call off the event loop), and the folders the walk left too deep."""
    left_deep: list[str] = []
    try:
        who = identity.sandbox_identity()
        if who.switched:
            left_deep = identity.hand_over(who, config.home, Path(config.workdir))
    except identity.IdentityUnavailable as exc:
        raise Refused(f"cannot run the sandbox as an unprivileged user: {exc}",
                      "install util-linux (setpriv); in a user namespace, map uid and gid "
                      f"{identity.SANDBOX_ID} too, or run the bot as an unprivileged user") from None
    except OSError as exc:
        raise Refused(f"cannot hand the sandbox its HOME or worktree: {exc}",
                      "keep the data dir on a local filesystem that supports chown") from None
    return who, left_deep


def _user_and_layers(config: SandboxConfig) -> tuple[identity.Identity, layers.Layers]:
    """The host-side work before a start, in one hop off the event loop (each hop costs about
    0.15 ms): the hand-over to the sandbox user, then the capped layers' plan."""
    who, left_deep = _sandbox_user(config)
    capped = layers.plan(config)
    capped.hand_over_too_deep = left_deep
    return who, capped


def _switch_for(who: identity.Identity) -> tuple[Switch | None, int | None]:
    """What bwrap needs when the command must be switched to the sandbox user, and the write
    end that releases bwrap once the caller has mapped the user namespace."""
    if not who.switched:
        return None, None
    userns_r, userns_w = os.pipe()
    return Switch(who, userns_r), userns_w


def _placed_files(config: SandboxConfig, who: identity.Identity) -> dict[str, bytes]:
    """Files bwrap writes read-only into the sandbox: the configured system files, the
    passwd/group naming the sandbox user when the command is switched to it, and the empty
    stand-ins over the worktree's masked files."""
    for path in config.system_files:
        if not path.startswith("/") or str(PurePosixPath(path)) != path or ".." in path.split("/"):
            raise ValueError(f"system file path {path!r} is not absolute and normalised")
        if _is_under(path, config.mount_path):
            raise ValueError(f"system file path {path!r} is inside the worktree")
    return dict(config.system_files) | (who.etc_files(config.home) if who.switched else {}) | \
        masked_files(config)


def _map_sandbox_user(who: identity.Identity, child_pid: int, userns_w: int) -> None:
    try:
        who.write_id_maps(child_pid)
    except OSError as exc:
        raise Refused(f"could not map the sandbox user into the sandbox: {exc}", FIX_USERNS) from None
    os.write(userns_w, b"1")


async def _unblock(proc: asyncio.subprocess.Process, block_w: int) -> None:
    """Let bwrap run the command; Refused when it already died in its set-up (a mount it could
    not make, such as a mask over a link that resolves nowhere), reaped first so that nothing
    signals its pid again."""
    try:
        os.write(block_w, b"1")
    except BrokenPipeError:
        assert proc.stderr is not None  # always piped
        detail = (await proc.stderr.read()).decode("utf-8", "replace").strip()
        await proc.wait()
        raise Refused(f"bubblewrap could not create the sandbox: {detail or 'no detail'}",
                      _fix_for(detail)) from None


def _data_fd(data: bytes) -> int:
    fd = os.memfd_create("bot-sandbox-data", 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


async def _read_child_pid(fd: int) -> int | None:
    """bwrap's {"child-pid": N} from --info-fd, or None when bwrap died first."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    data = b""
    while True:
        ready: asyncio.Future[None] = loop.create_future()

        def wake(ready: asyncio.Future[None] = ready) -> None:
            if not ready.done():
                ready.set_result(None)
        loop.add_reader(fd, wake)
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
    assert proc.stdin is not None  # piped when there is stdin
    try:
        proc.stdin.write(data)
        await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass


def _probe_binds(tool_dirs: Sequence[Path], argv: Sequence[str]) -> tuple[Path, ...]:
    """The agent install folders, plus the folder of a binary installed elsewhere (BOT_<AGENT>_BIN)."""
    binds = list(tool_dirs)
    if argv and os.path.isabs(argv[0]):
        real = Path(argv[0]).resolve().parent
        if not any(real.is_relative_to(p) for p in (Path("/usr"), *binds)):
            binds.append(real)
    return tuple(p for p in binds if p.exists())
