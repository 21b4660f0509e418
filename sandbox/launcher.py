"""The compiled capped-layer launcher (sandbox/native/layer_launcher.c): where it is, and its build.

A tier-1 sandbox starts under a launcher that makes its capped layers, starts bubblewrap in the
run's cgroups and applies what the sandbox wrote (sandbox/layers.py). The compiled one does what
sandbox/layer_mount.py does without an interpreter's start per sandbox (about 20 ms), and joins
the cgroups without the global lock a write to cgroup.procs takes (milliseconds more).

It is built from the source beside this file with the host's C compiler, into a name that holds
the source's digest (sandbox/native/build/, not in git): `make install` builds it, and so does the
first start after the source changed. With a compiler present, a launcher that cannot be built
refuses the start (never a silent fallback). Only where no C compiler is installed does the Python
launcher run instead, with every guarantee, said once as a warning in the log.

    python -m sandbox.launcher   # build it now; prints its path
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from sandbox.base import Refused

SOURCE = Path(__file__).resolve().parent / "native" / "layer_launcher.c"
BUILD_DIR = SOURCE.parent / "build"
CFLAGS = ("-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_FORTIFY_SOURCE=2", "-fstack-protector-strong",
          "-fPIE", "-pie", "-Wl,-z,relro,-z,now")
COMPILERS = ("cc", "gcc")
BUILD_TIMEOUT_S = 120
OLD_BUILD_S = 86_400.0  # an earlier build is removed once it is a day old
USAGE_EXIT = 64  # the launcher refused its arguments: nothing was done
FIX_BUILD = ("run `make install` (or `python -m sandbox.launcher`) as the owner of the bot's install, with gcc and "
             "libc6-dev installed (apt-get install gcc libc6-dev)")
FALLBACK_WARNING = ("no C compiler (cc, gcc) on PATH: the compiled layer launcher cannot be built, so every "
                    "tier-1 start runs the Python launcher (sandbox/layer_mount.py): every guarantee kept, about "
                    "20 ms more per start. " + FIX_BUILD)

log = logging.getLogger(__name__)
_lock = threading.Lock()
_warned = False


_binary: Path | None = None


def binary() -> Path:
    """Where the launcher built from the source is (present or not); the source is read once a process."""
    global _binary
    if _binary is None:
        digest = hashlib.sha256(SOURCE.read_bytes() + "\0".join(CFLAGS).encode()).hexdigest()[:16]
        _binary = BUILD_DIR / f"layer_launcher-{digest}"
    return _binary


def compiler() -> str | None:
    for name in COMPILERS:
        found = shutil.which(name)
        if found is not None:
            return found
    return None


def find() -> Path | None:
    """The compiled launcher, built first when missing; None (said once in the log) when there is no
    C compiler to build it. Refused when a compiler is there and the build fails. Builds: call off
    the event loop."""
    path = binary()
    if os.access(path, os.X_OK):
        return path
    cc = compiler()
    if cc is None:
        _warn_fallback()
        return None
    with _lock:  # one build per process; other processes build their own and rename over it
        if not os.access(path, os.X_OK):
            build(cc, path)
    return path


def build(cc: str, path: Path) -> None:
    """Compile the source to `path` through a temporary name in the same folder, so a start never
    sees half a binary."""
    try:
        BUILD_DIR.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".building-", dir=BUILD_DIR)
        os.close(handle)
    except OSError as exc:
        raise Refused(f"the compiled layer launcher is not built and cannot be: {exc}", FIX_BUILD) from None
    try:
        done = subprocess.run([cc, *CFLAGS, "-o", temporary, str(SOURCE)], capture_output=True, text=True,
                              timeout=BUILD_TIMEOUT_S)
        if done.returncode != 0:
            raise Refused(f"the compiled layer launcher failed to build: {done.stderr.strip()[-2000:]}", FIX_BUILD)
        os.chmod(temporary, 0o755)
        os.replace(temporary, path)
        _remove_others(path)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Refused(f"the compiled layer launcher failed to build: {exc}", FIX_BUILD) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _remove_others(kept: Path) -> None:
    """Launchers built from earlier versions of the source, once unchanged for OLD_BUILD_S: a
    process started before the source changed still runs its own (two processes building in turn
    removed each other's binary under a start)."""
    cutoff = time.time() - OLD_BUILD_S
    for old in kept.parent.glob("layer_launcher-*"):
        with contextlib.suppress(OSError):
            if old != kept and old.stat().st_mtime < cutoff:
                old.unlink()


def _warn_fallback() -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning(FALLBACK_WARNING)


if __name__ == "__main__":
    built = find()
    print(built if built is not None else FALLBACK_WARNING)
