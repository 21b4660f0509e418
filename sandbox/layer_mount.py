"""The capped-layer launcher in Python (stdlib only, and only its cheap modules), and the write-back
of the compiled one (sandbox/native/layer_launcher.c):

    python -I -S layer_mount.py SCRATCH NAME SIZE PATH [NAME SIZE PATH]... -- COMMAND...
    python -I -S layer_mount.py --apply STATUS SCRATCH NAME SIZE PATH FULL UNMOUNT [...]...

The first runs only where no C compiler could build the compiled launcher (sandbox/launcher.py).
The second is what the compiled launcher execs, in its mount namespace, when bubblewrap has been
reaped and a layer holds changes: it has unmounted the overlays (UNMOUNT: 0, or the errno of the
failure), and this applies every layer as below (SIZE as the launcher made the tmpfs, FULL 0/1 as
it saw it), writes the report and exits as bubblewrap did (wait STATUS).

It runs outside the sandbox's cgroups (COMMAND joins them, then execs bubblewrap), so killing
the sandbox (SIGTERM to this launcher, or every task of the cgroups) still leaves it to apply
what the sandbox wrote. The death of the bot that started it is a SIGTERM too (PR_SET_PDEATHSIG).

In a private mount namespace (and, for a bot that is not root, a user namespace mapping only its
own uid), each writable folder of the sandbox gets an overlay whose upper layer is a tmpfs of the
folder's cap: bubblewrap, started next, binds the overlay where it would bind the folder, so every
write the sandbox makes lands on that tmpfs and fails with ENOSPC at the cap. A layer that stays
full is a stopped sandbox. When bubblewrap has exited (the sandbox's PID namespace, and so every
process that could still write, is gone) the changes are applied to the real folder
(sandbox/layer_apply.py), within the layer's cap counted as the host counts it, and
SCRATCH/report holds one line per layer: NAME, SIZE, full (0/1: the sandbox filled it, or the
write-back stopped at its cap), applied (0/1), the error, what was dropped (`kind=count,...`),
separated by tabs. bubblewrap is only ever signalled through a pidfd, so a kill that arrives
once it has been reaped (the bot's time limit during the write-back) reaches no one else.
"""
from __future__ import annotations

import _signal  # `signal` would import enum, which costs more than the rest of the start-up
import fcntl
import os
import select
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # after the standard library
import layer_apply  # noqa: E402  (run by path, not as part of the package)

FAILED_EXIT = 72  # no capped layer could be made: nothing ran
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_PRIVATE, MS_REC, MNT_DETACH = 1 << 18, 1 << 14, 2
PR_SET_PDEATHSIG = 1
POLL_S = 0.25
FULL_LOOKS = 2  # a layer seen full this many looks in a row stops the sandbox
layer_inodes = layer_apply.layer_inodes
TYPE_CHECKING = False  # typing's own, without importing typing at every start
if TYPE_CHECKING:
    import ctypes

_loaded: list[ctypes.CDLL] = []  # libc through ctypes, once loaded


def _libc() -> ctypes.CDLL:
    """libc, loaded on first use: the compiled launcher's write-back (`--apply`) never mounts, and
    importing ctypes was about a third of its start (6 ms of 20), paid by every run that wrote."""
    if not _loaded:
        import ctypes
        _loaded.append(ctypes.CDLL(None, use_errno=True))
    return _loaded[0]


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes  # loaded with libc already
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    _check(_libc().mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                       data.encode() if data else None), f"mount {fstype or 'propagation'} on {target}")


def enter_namespace() -> None:
    """A mount namespace of our own whose mounts never propagate back to the host."""
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        _check(_libc().unshare(CLONE_NEWNS), "unshare")
    else:
        _check(_libc().unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
    _mount("none", "/", None, MS_REC | MS_PRIVATE, None)


def mount_layer(layer: dict, scratch: str) -> dict:
    """A tmpfs of the layer's size at `scratch`, an overlay of it over the layer's folder."""
    size = max(int(layer["size"]), 4096)  # tmpfs reads size=0 as unlimited
    inodes = layer_inodes(size)
    os.mkdir(scratch, 0o700)
    _mount("tmpfs", scratch, "tmpfs", 0, f"size={size},nr_inodes={inodes},mode=0700")
    upper, work = os.path.join(scratch, "upper"), os.path.join(scratch, "work")
    os.mkdir(upper)
    os.mkdir(work)
    top = os.stat(layer["path"])
    if os.geteuid() == 0:
        os.chown(upper, top.st_uid, top.st_gid)
    os.chmod(upper, top.st_mode & 0o7777)  # the overlay's top folder takes the upper's owner and mode
    _mount("overlay", layer["path"], "overlay", 0,
           f"lowerdir={layer['path']},upperdir={upper},workdir={work},userxattr")
    return {"name": layer["name"], "path": layer["path"], "size": size, "inodes": inodes, "scratch": scratch,
            "upper": upper}


def is_full(layer: dict) -> bool:
    stats = os.statvfs(layer["scratch"])
    free = stats.f_bavail * stats.f_frsize
    return free < min(1 << 20, layer["size"] // 16) or stats.f_favail == 0


def hold(scratch: str) -> int:
    """SCRATCH locked shared for as long as this runs, as the compiled launcher holds it: a sweep of
    stale scratch folders (sandbox/layers.py) never removes a live sandbox's."""
    fd = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    return fd


def run(command: list[str], layers: list[dict], held: int = 2) -> tuple[int, list[str]]:
    """Start the command, stop it when a layer stays full; its wait status and the full layers.
    Every descriptor above stderr is closed here but `held` (SCRATCH's lock, from `hold`)."""
    # Python ignores SIGPIPE and SIGXFSZ; the sandbox gets them back at their defaults.
    pid = os.posix_spawnp(command[0], command, os.environ,
                          setsigdef=(_signal.SIGPIPE, _signal.SIGXFSZ, _signal.SIGTERM))
    os.closerange(3, held)  # the sandbox's pipes are bubblewrap's alone
    os.closerange(held + 1, os.sysconf("SC_OPEN_MAX"))
    pidfd = os.pidfd_open(pid)  # kept open to the end: the handler below may still use it
    # SIGTERM is the bot's kill: the sandbox ends now, and its writes are still applied.
    _signal.signal(_signal.SIGTERM, lambda *_: stop(pidfd))
    looks, full = dict.fromkeys(range(len(layers)), 0), set()
    while not select.select([pidfd], [], [], POLL_S)[0]:
        for index, layer in enumerate(layers):
            looks[index] = looks[index] + 1 if is_full(layer) else 0
            if looks[index] >= FULL_LOOKS:
                full.add(layer["name"])
        if full:
            stop(pidfd)  # bubblewrap's PID namespace dies with it
    status = os.waitpid(pid, 0)[1]
    return status, sorted(full | {layer["name"] for layer in layers if is_full(layer)})


def stop(pidfd: int) -> None:
    """SIGKILL to bubblewrap, unless it is gone already (a pidfd never names another process)."""
    try:
        _signal.pidfd_send_signal(pidfd, _signal.SIGKILL)
    except ProcessLookupError:
        pass


def apply_layers(layers: list[dict], full: list[str]) -> list[str]:
    """Apply each layer to its folder, within its cap; one report line per layer."""
    return [apply_layer(layer, layer["name"] in full) for layer in layers]


def apply_layer(layer: dict, full: bool) -> str:
    try:
        _check(_libc().umount2(layer["path"].encode(), MNT_DETACH), "umount")
    except OSError as exc:
        return report_line(layer, full, 0, os.strerror(exc.errno) if exc.errno else "failed")
    return write_back(layer, full)


def report_line(layer: dict, full: bool, applied: int, error: str, dropped: str = "") -> str:
    return layer_apply.report_line(layer["name"], layer["size"], full, applied, error, dropped)


def write_back(layer: dict, full: bool) -> str:
    """Apply an unmounted layer's upper layer to its folder, within its cap; its report line."""
    return layer_apply.write_back(layer["name"], layer["size"], layer["upper"], layer["path"], full)


def parse(argv: list[str]) -> tuple[str, list[dict], list[str]]:
    """SCRATCH, the layers (name, size, path) and the command, from the launcher's argv."""
    end = argv.index("--")
    fields = argv[2:end]
    layers = [{"name": fields[i], "size": int(fields[i + 1]), "path": fields[i + 2]}
              for i in range(0, len(fields) - 2, 3)]
    return argv[1], layers, argv[end + 1:]


def apply_unmounted(argv: list[str]) -> int:
    """`--apply`: the compiled launcher's write-back (its argv, whose values it read through its
    allowlist), of layers it has unmounted."""
    status, scratch, fields = int(argv[2]), argv[3], argv[4:]
    lines = []
    for index, at in enumerate(range(0, len(fields) - 4, 5)):
        name, size, path, full, unmount_errno = fields[at:at + 5]
        folder = os.path.join(scratch, str(index))
        layer = {"name": name, "path": path, "size": int(size), "inodes": layer_inodes(int(size)),
                 "upper": os.path.join(folder, "upper")}
        failure = int(unmount_errno)
        lines.append(report_line(layer, full == "1", 0, os.strerror(failure)) if failure
                     else write_back(layer, full == "1"))
    return finish(scratch, lines, status)


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--apply"]:
        return apply_unmounted(argv)
    scratch, wanted, command = parse(argv)
    try:
        # the bot's death is its kill too: the sandbox never outlives the bot that started it
        _check(_libc().prctl(PR_SET_PDEATHSIG, _signal.SIGTERM, 0, 0, 0), "prctl PR_SET_PDEATHSIG")
        held = hold(scratch)
        enter_namespace()
        layers = [mount_layer(layer, os.path.join(scratch, str(index))) for index, layer in enumerate(wanted)]
    except OSError as exc:
        print(f"bot-sandbox: cannot cap the sandbox's writable folders: {exc}", file=sys.stderr)
        return FAILED_EXIT
    status, full = run(command, layers, held)
    return finish(scratch, apply_layers(layers, full), status)


def finish(scratch: str, report: list[str], status: int) -> int:
    """Write the report, and exit as bubblewrap did."""
    with open(os.path.join(scratch, "report"), "w") as handle:
        handle.writelines(report)
    if os.WIFSIGNALED(status):  # die as bubblewrap died, so the caller sees the same status
        number = os.WTERMSIG(status)
        if number not in (_signal.SIGKILL, _signal.SIGSTOP):
            _signal.signal(number, _signal.SIG_DFL)
        os.kill(os.getpid(), number)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
