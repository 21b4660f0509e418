"""Reading what someone else controls, never more than a cap: a program's output and a file.

    out = await run_capped(["git", "diff", a, b], cap=240_000, cwd=repo, env=env)
    out.stdout      # its first `cap` bytes at most
    out.cut         # it printed more: reading stopped at the cap and its process group was killed
    out.read        # bytes taken from its stdout, never more than cap + 1
    head = read_capped(path, 1 << 20)   # a regular file's first bytes, never through a symlink
    head.data, head.cut

A repository or an agent decides how much a git command, a CLI or a file says (an 11 KiB commit
can make a diff of 68 MiB), so the host reads it as a stream and stops at the caller's cap
instead of reading it whole and cutting it afterwards. The program runs in a session of its
own, so that stopping it stops whatever it started too. `run_capped_sync` is the same for code
that is not async. Here, not in bot/, so that the sandbox can use it as well as every layer of
the bot (tests/architecture/test_layers.py).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import signal
import stat
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

CHUNK = 1 << 16
STDERR_KEEP = 64 << 10  # the tail of stderr kept: errors are at its end
KILLED = -signal.SIGKILL


@dataclass(frozen=True)
class Capped:
    code: int  # the exit status; negative for a signal (KILLED when stopped here)
    stdout: bytes  # at most the cap
    stderr: bytes  # its last STDERR_KEEP bytes at most
    cut: bool = False  # stdout went past the cap, and the program was stopped there
    timed_out: bool = False  # the time limit stopped it
    read: int = 0  # bytes read from stdout: at most cap + 1

    @property
    def ok(self) -> bool:
        return self.code == 0 and not self.cut and not self.timed_out


class Head(NamedTuple):
    data: bytes  # at most the cap
    cut: bool  # the file holds more


class NotRegularFile(OSError):
    """What was to be read is not a regular file (a FIFO, a device, a folder): nothing is read."""


class _Head:
    """The first `cap` bytes of a stream, read a piece at a time: it never asks for more than one
    byte past the cap, which is how it knows there was more."""

    def __init__(self, cap: int) -> None:
        self.cap, self.kept, self.cut = cap, bytearray(), False

    def want(self) -> int:
        return min(CHUNK, self.cap + 1 - len(self.kept))

    def feed(self, chunk: bytes) -> bool:
        """Keep `chunk`; True when the stream went past the cap (reading must stop)."""
        self.kept += chunk
        if len(self.kept) > self.cap:
            self.cut = True
            del self.kept[self.cap:]
        return self.cut

    @property
    def read(self) -> int:
        return len(self.kept) + (1 if self.cut else 0)


class _Tail:
    def __init__(self, keep: int) -> None:
        self.keep, self.kept = keep, bytearray()

    def feed(self, chunk: bytes) -> None:
        self.kept += chunk
        del self.kept[:-self.keep or len(self.kept)]


def _kill_group(pid: int) -> None:
    """SIGKILL the program's whole session (it leads it, so its pid is the group's id). While any
    member lives the id stays taken, so it names no one else's group when there is someone to stop."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def run_capped(argv: Sequence[str], *, cap: int, cwd: str | os.PathLike[str] | None = None,
                     env: dict[str, str] | None = None, stdin: bytes | None = None,
                     timeout_s: float | None = None, pass_fds: Sequence[int] = ()) -> Capped:
    """Run `argv`, reading its stdout up to `cap` bytes (then its session is killed) and the tail
    of its stderr; with `timeout_s`, a program still running then is killed too."""
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, pass_fds=tuple(pass_fds), start_new_session=True,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    head, tail, timed_out, ended = _Head(cap), _Tail(STDERR_KEEP), False, False
    try:
        await asyncio.wait_for(_collect(proc, head, tail, stdin), timeout_s)
        ended = not head.cut
    except TimeoutError:
        timed_out = True
    finally:  # a cut, a timeout or a cancelled caller: nothing of it keeps running
        if not ended:
            _kill_group(proc.pid)
    code = await proc.wait()
    return Capped(KILLED if head.cut or timed_out else code, bytes(head.kept), bytes(tail.kept),
                  head.cut, timed_out, head.read)


async def _collect(proc: asyncio.subprocess.Process, head: _Head, tail: _Tail, stdin: bytes | None) -> None:
    assert proc.stdout is not None and proc.stderr is not None  # both piped
    stderr = asyncio.create_task(_drain(proc.stderr, tail))
    feeding = asyncio.create_task(_feed(proc, stdin))
    try:
        while chunk := await proc.stdout.read(head.want()):
            if head.feed(chunk):
                _kill_group(proc.pid)  # before waiting for stderr, which it may hold open
                break
        await stderr
    finally:
        stderr.cancel()
        feeding.cancel()


async def _drain(stream: asyncio.StreamReader, tail: _Tail) -> None:
    while chunk := await stream.read(CHUNK):
        tail.feed(chunk)


async def _feed(proc: asyncio.subprocess.Process, data: bytes | None) -> None:
    if data is None or proc.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
        proc.stdin.close()


def run_capped_sync(argv: Sequence[str], *, cap: int, cwd: str | os.PathLike[str] | None = None,
                    env: dict[str, str] | None = None, timeout_s: float | None = None) -> Capped:
    """`run_capped` for code that is not async (no stdin: the program reads /dev/null)."""
    with subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True) as proc:
        head, tail, timed_out, ended = _Head(cap), _Tail(STDERR_KEEP), False, False
        try:
            timed_out = _select_until_done(proc, head, tail, timeout_s)
            ended = not (timed_out or head.cut)
        finally:
            if not ended:
                _kill_group(proc.pid)
        code = proc.wait()
    return Capped(KILLED if head.cut or timed_out else code, bytes(head.kept), bytes(tail.kept),
                  head.cut, timed_out, head.read)


def _select_until_done(proc: subprocess.Popen[bytes], head: _Head, tail: _Tail, timeout_s: float | None) -> bool:
    """Read both pipes until both end or stdout passes the cap; True when the time ran out first."""
    assert proc.stdout is not None and proc.stderr is not None  # both piped
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ, "out")
        selector.register(proc.stderr, selectors.EVENT_READ, "err")
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return True
            for key, _ in selector.select(left):
                fd = key.fileobj.fileno()  # type: ignore[union-attr]
                chunk = os.read(fd, head.want() if key.data == "out" else CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.data == "err":
                    tail.feed(chunk)
                elif head.feed(chunk):
                    return False
    return False


def read_capped(path: str | os.PathLike[str], cap: int, *, dir_fd: int | None = None) -> Head:
    """The first `cap` bytes of the regular file at `path` (relative to `dir_fd` when given),
    whether it holds more, never following a symlink at its last component; NotRegularFile for
    anything but a regular file, without reading it (a FIFO would block for ever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{os.fspath(path)} is not a regular file")
        head = _Head(cap)
        while (want := head.want()) and (chunk := os.read(fd, want)):
            if head.feed(chunk):
                break
        return Head(bytes(head.kept), head.cut)
    finally:
        os.close(fd)
