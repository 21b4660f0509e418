"""Memory and process caps through cgroups, one cgroup set per sandbox run.

cgroup v2 is used when its memory and pids controllers can be enabled for our
subtree; otherwise v1 `memory` + `pids` (this kind of host: hybrid layout, v2 holds
only hugetlb). A v2 leaf is still joined when possible for `cgroup.kill`.
`BOT_CGROUP_ROOT` overrides the mount root (/sys/fs/cgroup); pointing it at an empty
directory makes every start refuse, which is how the refusal is tested.
`BOT_CGROUP_PARENT` names a subtree root delegated to an unprivileged bot user
(default: the bot's own cgroup in each hierarchy).

Where no subtree can be made (a container's read-only /sys/fs/cgroup), the container's own
cgroup serves when its caps are at or below the run's (sandbox/own_cgroup.py): one episode per
container. A subtree, when there is one, is preferred: it caps each run on its own.
"""
from __future__ import annotations

import resource
import time
from pathlib import Path

from sandbox import own_cgroup
from sandbox.base import Host
from sandbox.cgroup_set import OOM_FIRST as OOM_FIRST
from sandbox.cgroup_set import CgroupSet as CgroupSet
from sandbox.cgroup_set import CgroupUnavailable as CgroupUnavailable
from sandbox.cgroup_set import own_path, v2_mount, write

GROUP_NAME = "bot-sandbox"


def _v1_parent(root: Path, controller: str, delegated: str | None) -> Path:
    base = root / controller
    own = base / (delegated or own_path(controller)).strip("/")
    return own if (own / "cgroup.procs").exists() else base


def _v2_parent(root: Path, delegated: str | None) -> Path | None:
    mount = v2_mount(root)
    if mount is None:
        return None
    own = mount / (delegated or own_path("")).strip("/")
    return own if (own / "cgroup.procs").exists() else mount


def _v2_has_controllers(parent: Path) -> bool:
    try:
        available = (parent / "cgroup.controllers").read_text().split()
    except OSError:
        return False
    return "memory" in available and "pids" in available


def create(run_id: str, memory_bytes: int, pids_max: int, host: Host = Host()) -> CgroupSet:
    """The caps of one run: cgroups made and limited for it in a subtree, else the container's own
    cgroup when it caps at or below these limits; CgroupUnavailable naming both ways otherwise.
    `host` says where the cgroup hierarchies are mounted and which subtree, if any, is delegated."""
    try:
        return create_subtree(run_id, memory_bytes, pids_max, host)
    except CgroupUnavailable as exc:
        return own_cgroup.for_run(host.cgroup_root, memory_bytes, pids_max, because=exc)


def create_subtree(run_id: str, memory_bytes: int, pids_max: int, host: Host = Host()) -> CgroupSet:
    """Create and limit the cgroups for one run in a subtree the bot may write, or raise
    CgroupUnavailable."""
    root, delegated = host.cgroup_root, host.cgroup_parent
    parent2 = _v2_parent(root, delegated)
    if parent2 is not None and _v2_has_controllers(parent2) and _v2_enable(parent2):
        leaf = _mkdirs(parent2 / GROUP_NAME, run_id)
        cg = CgroupSet(2, leaf, leaf, leaf, [leaf])
        try:
            write(leaf / "memory.max", str(memory_bytes))
            _try_write(leaf / "memory.swap.max", "0")
            write(leaf / "pids.max", str(pids_max))
        except CgroupUnavailable:
            cg.remove(wait_s=0)
            raise
        return cg
    return _create_v1(root, delegated, parent2, run_id, memory_bytes, pids_max)


def _create_v1(root: Path, delegated: str | None, parent2: Path | None, run_id: str, memory_bytes: int,
               pids_max: int) -> CgroupSet:
    for controller in ("memory", "pids"):
        if not (root / controller / "cgroup.procs").exists():
            raise CgroupUnavailable(f"no cgroup v2 memory+pids controllers and no v1 {controller} "
                                    f"hierarchy under {root}")
    memory = _mkdirs(_v1_parent(root, "memory", delegated) / GROUP_NAME, run_id)
    cg = CgroupSet(1, memory, memory, dirs=[memory])
    try:
        cg.pids = _mkdirs(_v1_parent(root, "pids", delegated) / GROUP_NAME, run_id)
        cg.dirs.append(cg.pids)
        write(memory / "memory.limit_in_bytes", str(memory_bytes))
        _try_write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        write(cg.pids / "pids.max", str(pids_max))
    except CgroupUnavailable:
        cg.remove(wait_s=0)  # nothing half-made is left behind
        raise
    if parent2 is not None:
        try:
            cg.leaf_v2 = _mkdirs(parent2 / GROUP_NAME, run_id)
            cg.dirs.append(cg.leaf_v2)
        except CgroupUnavailable:
            pass  # tracking only; the caps above are the floor
    return cg


def _v2_enable(parent: Path) -> bool:
    group = parent / GROUP_NAME
    try:
        group.mkdir(exist_ok=True)
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids"} <= set(enabled):
            write(parent / "cgroup.subtree_control", "+memory +pids")
        write(group / "cgroup.subtree_control", "+memory +pids")
        return True
    except OSError:
        return False


STALE_AFTER_S = 60.0  # a live run's cgroup holds tasks, so rmdir cannot touch it
_swept: set[Path] = set()


def _sweep_stale(group: Path) -> None:
    """Once per process and group: remove run cgroups a crashed bot left behind.

    Only old ones, and rmdir fails on any cgroup that still has a task, so a live run is
    never touched.
    """
    if group in _swept:
        return
    _swept.add(group)
    sweep_now(group)


def sweep_now(group: Path) -> None:
    """Remove the empty run cgroups in `group` older than STALE_AFTER_S (a cgroup with a task
    refuses rmdir): those of runs, and sets made ahead, of bots that were killed."""
    cutoff = time.time() - STALE_AFTER_S
    for child in group.iterdir():
        try:
            if child.is_dir() and child.stat().st_mtime < cutoff:
                child.rmdir()
        except OSError:
            pass


def _mkdirs(group: Path, run_id: str) -> Path:
    try:
        group.mkdir(exist_ok=True)
        _sweep_stale(group)
        leaf = group / run_id
        leaf.mkdir()
        return leaf
    except OSError as exc:
        raise CgroupUnavailable(f"cannot create cgroup {group}/{run_id}: {exc.strerror}") from exc


def _try_write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        pass  # optional knob (swap accounting off): memory cap still holds


def raise_open_files_limit() -> int:
    """Raise this process's descriptor soft limit to its hard limit; returns the new soft limit.

    The bot holds a few descriptors per connection of every running episode (proxy, relays,
    bridge, pipes); a distribution's default soft limit (often 1024) is far below what the
    kernel allows the process, and running out fails every other thread, not just the noisy one.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


JOIN_FAILED_EXIT = 71
JOIN_SCRIPT = ('ulimit -n "$1" && ulimit -c 0 || exit 71; shift; '
               'while [ "$1" != -- ]; do case "$1" in '
               '"?"*) (echo $$ > "${1#?}") 2>/dev/null;; '  # optional: the v2 tracking leaf
               f'{OOM_FIRST}) echo 1000 > /proc/self/oom_score_adj || '
               '{ echo "bot-sandbox: cannot raise oom_score_adj" >&2; exit 71; };; '
               '*) echo $$ > "$1" || { echo "bot-sandbox: cannot join cgroup $1" >&2; exit 71; };; '
               'esac; shift; done; shift; exec "$@"')


def join_prefix(paths: list[str], nofile: int) -> list[str]:
    """argv prefix: a shell that joins the cgroups and sets rlimit backstops, then execs the rest.

    Only under the Python layer launcher (no C compiler on the host): the compiled one
    (sandbox/native/layer_launcher.c) joins them itself, without the RCU wait a pid written to
    cgroup.procs costs. Joining before exec leaves no window for an unlimited child; doing it in
    /bin/sh rather than a Python preexec_fn keeps the bot's own spawn on the fast vfork path.
    """
    return ["/bin/sh", "-c", JOIN_SCRIPT, "bot-sandbox-join", str(nofile), *paths, "--"]
