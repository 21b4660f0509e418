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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

CHUNK = 1 << 16
STDERR_KEEP = 64 << 10  # the tail of stderr kept: errors are at its end
KILLED = -signal.SIGKILL
# once the program has ended, how long what it left behind may keep its pipes open (a daemon it
# started in a session of its own, which stopping its session does not reach)
LEFT_OPEN_S = 2.0


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
    async with _OwnPipes(stdin) as pipes:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, pass_fds=tuple(pass_fds), start_new_session=True,
            stdin=pipes.child_stdin, stdout=pipes.child_stdout, stderr=pipes.child_stderr)
        await pipes.connect()
        head, tail, timed_out, ended = _Head(cap), _Tail(STDERR_KEEP), False, False
        try:
            ended = await asyncio.wait_for(_collect(proc, pipes, head, tail), timeout_s) and not head.cut
        except TimeoutError:
            timed_out = True
        finally:  # a cut, a timeout, pipes left open or a cancelled caller: nothing of it keeps running
            if not ended:
                _kill_group(proc.pid)
    code = await proc.wait()
    return Capped(KILLED if head.cut or timed_out else code, bytes(head.kept), bytes(tail.kept),
                  head.cut, timed_out, head.read)


class _OwnPipes:
    """The program's stdio as pipes of our own, not asyncio's: on Python 3.11 `Process.wait()`
    returns only once asyncio's pipes are closed, and a stdout it stopped reading at the cap (its
    buffer full, reading paused) never is, so the wait hung. Ours are closed when we are done."""

    def __init__(self, stdin: bytes | None) -> None:
        self.stdin = stdin
        self.child_stdin: int = subprocess.DEVNULL
        self.child_stdout = self.child_stderr = -1
        self._ours: list[int] = []
        self._childs: list[int] = []  # the child's ends, closed here once it holds its own copies
        self._transports: list[asyncio.BaseTransport] = []
        self.stdout, self.stderr = asyncio.StreamReader(), asyncio.StreamReader()

    async def __aenter__(self) -> _OwnPipes:
        self._out_r, self.child_stdout = os.pipe()
        self._err_r, self.child_stderr = os.pipe()
        self._ours = [self._out_r, self._err_r]
        self._childs = [self.child_stdout, self.child_stderr]
        if self.stdin is not None:
            self.child_stdin, self._in_w = os.pipe()
            self._ours.append(self._in_w)
            self._childs.append(self.child_stdin)
        return self

    async def connect(self) -> None:
        """Close the child's ends here (it holds its own copies) and read ours on the loop."""
        self._close_childs()
        loop = asyncio.get_running_loop()
        for fd, reader in ((self._out_r, self.stdout), (self._err_r, self.stderr)):
            self._ours.remove(fd)
            transport, _ = await loop.connect_read_pipe(lambda r=reader: asyncio.StreamReaderProtocol(r),  # type: ignore[misc]
                                                        os.fdopen(fd, "rb", buffering=0))
            self._transports.append(transport)
        if self.stdin is not None:
            self._ours.remove(self._in_w)
            writer, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(self._in_w, "wb", buffering=0))
            writer.write(self.stdin)
            writer.close()  # after what is buffered is written; aborted below if the program never reads it
            self._transports.append(writer)

    async def __aexit__(self, *_: object) -> None:
        for transport in self._transports:
            if isinstance(transport, asyncio.WriteTransport):
                if transport.get_write_buffer_size():  # the program did not read all it was given
                    transport.abort()
            else:
                transport.close()
        for fd in self._ours:
            os.close(fd)
        self._close_childs()  # the program never started

    def _close_childs(self) -> None:
        while self._childs:
            os.close(self._childs.pop())


async def _collect(proc: asyncio.subprocess.Process, pipes: _OwnPipes, head: _Head, tail: _Tail) -> bool:
    """Read both pipes until both end, or stdout passes the cap, or the program has ended and
    LEFT_OPEN_S has passed (what it started still holds a pipe); True when both pipes ended."""
    reading = asyncio.ensure_future(_read_both(pipes, head, tail, proc.pid))
    exited = asyncio.ensure_future(_ended(proc))
    try:
        await asyncio.wait([reading, exited], return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():
            await asyncio.wait({reading}, timeout=LEFT_OPEN_S)
        if reading.done():
            reading.result()
        return reading.done()
    finally:
        for task in (reading, exited):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reading


async def _read_both(pipes: _OwnPipes, head: _Head, tail: _Tail, pid: int) -> None:
    await asyncio.gather(_read_head(pipes.stdout, head, pid), _drain(pipes.stderr, tail))


async def _ended(proc: asyncio.subprocess.Process) -> None:
    await proc.wait()


async def _read_head(stdout: asyncio.StreamReader, head: _Head, pid: int) -> None:
    while chunk := await stdout.read(head.want()):
        if head.feed(chunk):
            _kill_group(pid)  # before waiting for stderr, which it may hold open
            return


async def _drain(stream: asyncio.StreamReader, tail: _Tail) -> None:
    while chunk := await stream.read(CHUNK):
        tail.feed(chunk)


def run_capped_sync(argv: Sequence[str], *, cap: int, cwd: str | os.PathLike[str] | None = None,
                    env: dict[str, str] | None = None, timeout_s: float | None = None) -> Capped:
    """`run_capped` for code that is not async (no stdin: the program reads /dev/null)."""
    with subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True) as proc:
        head, tail, end = _Head(cap), _Tail(STDERR_KEEP), "killed"
        try:
            end = _select_until_done(proc, head, tail, timeout_s)
        finally:
            if end != "ended":
                _kill_group(proc.pid)
        code = proc.wait()
    timed_out = end == "timed out"
    return Capped(KILLED if head.cut or timed_out else code, bytes(head.kept), bytes(tail.kept),
                  head.cut, timed_out, head.read)


def _select_until_done(proc: subprocess.Popen[bytes], head: _Head, tail: _Tail, timeout_s: float | None) -> str:
    """Read both pipes until both end ("ended"), stdout passes the cap ("cut"), the time runs out
    ("timed out") or LEFT_OPEN_S after the program ended a pipe is still held ("left open")."""
    assert proc.stdout is not None and proc.stderr is not None  # both piped
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    left_open_at = None
    with selectors.DefaultSelector() as selector, _exit_watch(proc.pid) as exit_fd:
        selector.register(proc.stdout, selectors.EVENT_READ, "out")
        selector.register(proc.stderr, selectors.EVENT_READ, "err")
        selector.register(exit_fd, selectors.EVENT_READ, "exit")
        while len(selector.get_map()) > (0 if left_open_at else 1):
            ends = [t for t in (deadline, left_open_at) if t is not None]
            left = min(ends) - time.monotonic() if ends else None
            if left is not None and left <= 0:
                return "timed out" if deadline is not None and deadline <= time.monotonic() else "left open"
            for key, _ in selector.select(left):
                if key.data == "exit":
                    selector.unregister(key.fileobj)
                    left_open_at = time.monotonic() + LEFT_OPEN_S
                    continue
                fd = key.fileobj.fileno()  # type: ignore[union-attr]
                chunk = os.read(fd, head.want() if key.data == "out" else CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.data == "err":
                    tail.feed(chunk)
                elif head.feed(chunk):
                    return "cut"
    return "ended"


@contextlib.contextmanager
def _exit_watch(pid: int) -> Iterator[int]:
    """A descriptor that becomes readable when the process `pid` ends (a pidfd)."""
    fd = os.pidfd_open(pid)
    try:
        yield fd
    finally:
        os.close(fd)


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
