"""Floor checks with real probes (not `bwrap --version`): each one (name, ok, detail).

A tier-1 start refuses on its own when any of these fails; this module lets an
operator (`bot doctor`, `bot sandbox check`) see all verdicts at once.
"""
from __future__ import annotations

import asyncio
import platform
import secrets
import subprocess
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from sandbox import limits, own_cgroup, seccomp
from sandbox.base import Host, Limits, Refused, SandboxConfig
from sandbox.tier1 import FIX_CGROUP, Tier1Spawner, find_bwrap

T = TypeVar("T")

Check = tuple[str, bool, str]


def checks(host: Host = Host()) -> list[Check]:
    results = [_bwrap_check(), _seccomp_check(), _cgroup_check(host)]
    if all(ok for _, ok, _ in results):
        results += _live_checks(host)
    else:
        results.append(("tier-1 sandbox starts", False, "skipped: a floor check above failed"))
    return results


def _bwrap_check() -> Check:
    try:
        path = find_bwrap()
    except Refused as exc:
        return ("bubblewrap installed", False, str(exc))
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    return ("bubblewrap installed", out.returncode == 0, f"{path}: {out.stdout.strip() or out.stderr.strip()}")


def _seccomp_check() -> Check:
    try:
        size = len(seccomp.program()) // 8
    except seccomp.UnsupportedArch as exc:
        return ("seccomp filter", False, str(exc))
    return ("seccomp filter", True, f"{size} BPF instructions for {platform.machine()}")


CGROUP_CHECK = "cgroup memory+pids caps"
# the way to run several episodes per container, as said when neither way is there
SUBTREE_IN_CONTAINER = ("a memory and a pids cgroup owned by the bot's user mounted where BOT_CGROUP_ROOT points "
                        "(docs/deploy.md)")


def _cgroup_check(host: Host) -> Check:
    try:
        groups = limits.create_subtree("preflight-" + secrets.token_hex(4), 64 << 20, 16, host)
    except limits.CgroupUnavailable as exc:
        return _own_cgroup_check(host, exc)
    detail = f"cgroup v{groups.version}: {groups.memory} (a cgroup per episode: BOT_WORKERS at once)"
    groups.remove()
    return (CGROUP_CHECK, True, detail)


def own_cgroup_verdict(host: Host) -> own_cgroup.Verdict:
    """Whether the container's own cgroup caps one episode at its default limits."""
    one = Limits()
    return own_cgroup.verdict(host.cgroup_root, one.memory_bytes, one.pids)


def container_caps(host: Host) -> str | None:
    """How the container's own cgroup caps the episodes when it is what caps them (no cgroup can be
    made for each), e.g. "the container's own cgroup (memory 2 GiB, pids 512), one episode at a
    time"; None when each episode gets cgroups of its own, or neither way serves."""
    try:
        limits.create_subtree("preflight-" + secrets.token_hex(4), 64 << 20, 16, host).remove()
    except limits.CgroupUnavailable:
        found = own_cgroup_verdict(host)
        return found.describe() if found.serves else None
    return None


def _own_cgroup_check(host: Host, subtree_failure: limits.CgroupUnavailable) -> Check:
    found = own_cgroup_verdict(host)
    if found.serves:
        return (CGROUP_CHECK, True, "caps: " + found.describe())
    read_only = "Read-only file system" in str(subtree_failure)
    several = SUBTREE_IN_CONTAINER if read_only else FIX_CGROUP
    return (CGROUP_CHECK, False, f"needs {found.refusal()}; or, to run several at once, {several} "
                                 f"({subtree_failure})")


# What a container runtime withholds by default, as bwrap reports its absence, and how to give it
NEEDS = (
    ("Can't mount proc", "a fresh /proc, which the container runtime masks (podman: --security-opt "
     "unmask=/proc/*; Docker: --security-opt systempaths=unconfined; Kubernetes: procMount: Unmasked)"),
    ("Can't set hostname", "sethostname and setns, which the runtime's seccomp profile refuses (run the "
     "container with the profile deploy/container/seccomp.json)"),
    ("Creating new namespace failed", "user namespaces, refused by the runtime's seccomp profile "
     "(deploy/container/seccomp.json allows them) or by the kernel (user.max_user_namespaces)"),
    ("No permissions to create new namespace", "unprivileged user namespaces, which this kernel or "
     "container refuses (user.max_user_namespaces, or the runtime's seccomp profile)"),
)


class ProbeFailed(Exception):
    """The probe's sandbox did not run the probe: what bwrap or the command said."""


def needs(failure: str) -> str:
    """The failure, led by the requirement it means is missing when it is a known one."""
    for said, requirement in NEEDS:
        if said in failure:
            return f"needs {requirement} ({failure})"
    return failure


def _live_checks(host: Host) -> list[Check]:
    """Start a real sandbox: user namespaces, seccomp load, listener injection, proxy, and
    who the command is on the host."""
    try:
        (ok, detail), (unprivileged, who) = _run_coroutine(lambda: _probe_sandbox(host))
    except (Refused, ProbeFailed) as exc:
        return [("tier-1 sandbox starts", False, needs(str(exc)))]
    return [("tier-1 sandbox starts", True, "bwrap + userns + netns + seccomp + listener injection"),
            ("egress proxy answers inside", ok, detail),
            ("sandboxed command is not host root", unprivileged, who)]


# Inside: the proxy's first answer line, then the file the probe made (its owner is read on the
# host), then whether kernel.core_pattern opens for writing (opened and closed, never written).
PROBE = """
import os, socket
s = socket.create_connection(('127.0.0.1', 3128), 5)
s.sendall(b'GET http://x/ HTTP/1.1\\r\\n\\r\\n')
print(s.recv(64).decode().split(chr(13))[0])
open(os.path.join(os.environ['HOME'], 'made'), 'w').close()
try:
    os.close(os.open('/proc/sys/kernel/core_pattern', os.O_WRONLY))
    print('core_pattern writable')
except OSError as exc:
    print('core_pattern refused:', exc.strerror)
"""


async def _probe_sandbox(host: Host) -> tuple[tuple[bool, str], tuple[bool, str]]:
    with tempfile.TemporaryDirectory(prefix="bot-preflight-") as scratch:
        home = Path(scratch) / "home"
        cfg = SandboxConfig(workdir=Path(scratch), home=home, limits=Limits(timeout_s=20))
        proc = await Tier1Spawner(host=host).start(cfg, ["python3", "-c", PROBE], {})
        out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
        rc = await proc.wait()
        owner = (home / "made").stat().st_uid if (home / "made").exists() else None
    lines = out.decode().strip().splitlines() + ["", ""]
    answer, kernel = lines[0], lines[1]
    if rc != 0 or owner is None:
        raise ProbeFailed(f"exit {rc}: {answer or err.decode(errors='replace').strip()[-300:]}")
    proxy = (" 405 " in answer + " ", f"CONNECT-only proxy at 127.0.0.1:3128 ({answer})")
    who = f"host uid {owner}; {kernel}"
    return proxy, (owner != 0 and kernel.startswith("core_pattern refused"), who)


def _run_coroutine(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """asyncio.run, also when called from inside a running loop (then in a worker thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()
