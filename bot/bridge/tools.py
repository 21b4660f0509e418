"""What the bridge's writing tools do (files, `run`, the thread, progress); each tool's name,
description and schema are declared with its handler in bot/bridge/catalog.py.

Each tool function takes the admitted policy and the call's arguments and returns
`(text for the model, detail for the record)`, or raises `Refusal` (the policy said
no) or `ToolFailure` (admitted, but it could not be done: no such file, no match).
The server around them (auth, halt, budget, recording) is bot/bridge/server.py.
"""
from __future__ import annotations

import asyncio
import contextlib
import errno
import inspect
import os
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from bot.bridge.admission import Admission, Refusal
from bot.errors import BotError
from sandbox import select_spawner
from sandbox.base import Host, Limits, Refused, SandboxConfig, SandboxProcess, Spawner
from sandbox.bounded import read_capped
from sandbox.identity import Identity, IdentityUnavailable, hand_over_written, sandbox_identity

RunSandbox = Callable[[Path], "tuple[Spawner, SandboxConfig]"]  # scratch home -> spawner, config
THREAD_CAP = 256 << 10  # bytes of the conversation one read_thread call returns
GIT_POINTER_CAP = 4096  # a worktree's `.git` file: `gitdir: <path>`


class ToolFailure(BotError):
    """Admitted, but not possible (missing file, no unique match); the message is for the model."""


def sandbox_for_run(worktree: Path, policy: Admission, tier: int, limits: Limits | None = None, *,
                    host: Host) -> RunSandbox:
    """A fresh sandbox per `run` call over the worktree, writable, at the operator's floor `tier`
    (BOT_SANDBOX_TIER; tier 0 only when the operator chose it) on the operator's `host`. Network:
    only the package registries the repository allows, through the egress proxy. `limits`: the
    episode's (memory, processes, disk caps), each call timed by the run tool's own timeout."""

    def make(home: Path) -> tuple[Spawner, SandboxConfig]:
        sandbox_config = SandboxConfig(
            workdir=Path(worktree), home=home, mount_path=policy.mount_path, writable=True,
            allowed_hosts=policy.run_allowed_hosts, min_tier=tier, tmpdir=home / ".tmp",
            limits=replace(limits or Limits(), timeout_s=policy.run_timeout_s))
        return select_spawner(min(tier, 1), host), sandbox_config

    return make


def save_file(policy: Admission, args: dict) -> tuple[str, dict]:
    target = policy.admit_path(args["path"])
    data = args["content"].encode("utf-8")
    if target.is_dir():
        raise ToolFailure(f"{args['path']} is a directory.")
    policy.charge_bytes(target, len(data))
    existed = target.exists()
    rel = policy.relative(target)
    links = write_beneath(policy.worktree, rel, data)
    verb = "overwrote" if existed else "created"
    return _written(f"{verb} {rel} ({len(data)} bytes)", {"path": rel, "bytes": len(data),
                                                          "created": not existed}, links)


def edit_file(policy: Admission, args: dict) -> tuple[str, dict]:
    target = policy.admit_path(args["path"])
    if not target.is_file():
        raise ToolFailure(f"{args['path']} does not exist; use save_file to create it.")
    old, new = args["old_string"], args["new_string"]
    if not old:
        raise ToolFailure("old_string is empty; give the exact text to replace.")
    text = read_beneath(policy.worktree, policy.relative(target), policy.max_file_bytes).decode("utf-8")
    matches = text.count(old)
    if matches == 0:
        raise ToolFailure(f"old_string was not found in {args['path']}; read the file and copy it exactly.")
    if matches > 1:
        raise Refusal("ambiguous", f"old_string matches {matches} places in {args['path']}; "
                                   "include more surrounding lines so it matches exactly one.")
    data = text.replace(old, new, 1).encode("utf-8")
    policy.charge_bytes(target, len(data))
    rel = policy.relative(target)
    links = write_beneath(policy.worktree, rel, data)
    return _written(f"edited {rel} (1 replacement)", {"path": rel, "bytes": len(data)}, links)


def _written(text: str, detail: dict, links: int) -> tuple[str, dict]:
    """Say (to the model and the record) when the name written was a hard link whose other
    names kept the old content: what changed is the file named, nothing else."""
    if links > 1:
        detail["hard_link_broken"] = links - 1
        text += f"; it was a hard link, so it is now a file of its own and its {links - 1} other " \
                "name(s) keep the old content"
    return text, detail


def delete_file(policy: Admission, args: dict) -> tuple[str, dict]:
    target = policy.admit_path(args["path"])
    if not target.is_file():
        raise ToolFailure(f"{args['path']} is not a file in the repository.")
    unlink_beneath(policy.worktree, policy.relative(target))
    rel = policy.relative(target)
    return f"deleted {rel}", {"path": rel}


# The worktree is also written by `run` sandboxes (and the CLI itself in native mode), which can
# run concurrently with a bridged call: between admission and the write a checked directory can
# become a symlink to a host path, or the file a FIFO. So every bridged file operation walks the
# admitted (already resolved) relative path from a descriptor of the worktree, one component at a
# time, never following a symlink and never blocking on anything but a regular file.
_WALK = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _raced() -> Refusal:
    return Refusal("outside", "the path changed while it was being used (a symlink or special file "
                              "appeared in it); nothing was changed.")


def _parent_fd(worktree: Path, relative: str, create: bool) -> tuple[int, str]:
    """A descriptor of `relative`'s parent directory inside the worktree, and the leaf name."""
    *parents, leaf = PurePosixPath(relative).parts
    fd = os.open(worktree, _WALK)
    try:
        for part in parents:
            try:
                child = os.open(part, _WALK, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                    _give_to_sandbox(fd, part)
                child = os.open(part, _WALK, dir_fd=fd)
            os.close(fd)
            fd = child
    except (NotADirectoryError, OSError) as exc:
        os.close(fd)
        if isinstance(exc, FileNotFoundError) or exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        raise _raced() from None
    return fd, leaf


def _open_regular(relative: str, dir_fd: int, flags: int, mode: int = 0o644) -> int:
    try:
        fd = os.open(relative, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            raise _raced() from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _raced()
    return fd


def write_beneath(worktree: Path, relative: str, data: bytes) -> int:
    """Make `data` the file at the worktree-relative path without following any symlink on the
    way; returns the link count the old file had (0: there was none).

    Never written in place: `run` can hard-link the name to another file of the worktree (a
    protected one), and an in-place write would change that file too while the record named
    this one. The data goes to a new file in the same folder, renamed over the name."""
    parent, leaf = _parent_fd(worktree, relative, create=True)
    try:
        old = _regular_or_none(leaf, parent)
        temp = f".bot-write-{secrets.token_hex(8)}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=parent)
        try:
            _fill(fd, data, old)
            if old is None:
                _give_to_sandbox(parent, temp)
            os.rename(temp, leaf, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            if isinstance(exc, OSError) and exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                raise _raced() from None
            raise
    finally:
        os.close(parent)
    return old.st_nlink if old else 0


def _give_to_sandbox(dir_fd: int, name: str) -> None:
    """A file or folder the bridge made is the sandbox user's, as the ownership hand-over before
    a run would make it (sandbox/identity.py: that walk is skipped when only the bridge wrote)."""
    who = _switched_identity()
    if who is not None:
        hand_over_written(who, dir_fd, name)


def _switched_identity() -> Identity | None:
    try:
        who = sandbox_identity()
    except IdentityUnavailable:
        return None  # no sandbox can start as another user: nothing to hand over
    return who if who.switched else None


def _regular_or_none(leaf: str, dir_fd: int) -> os.stat_result | None:
    """The current file's status (a regular file), None if there is none; anything else refused."""
    try:
        info = os.stat(leaf, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise _raced()
    return info


def _fill(fd: int, data: bytes, old: os.stat_result | None) -> None:
    """Write the new file: the old one's permission bits (never set-id bits) and, where the bot
    may, its owner; refused if anything linked it while it was being written."""
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(fd, stat.S_IMODE(old.st_mode) & 0o777 if old else 0o644)
        if old:
            with contextlib.suppress(PermissionError):
                os.fchown(fd, old.st_uid, old.st_gid)
        handle.write(data)
        handle.flush()
        if os.fstat(fd).st_nlink != 1:
            raise _raced()


def read_beneath(worktree: Path, relative: str, cap: int) -> bytes:
    """The content of a regular file at the worktree-relative path (at most `cap` bytes)."""
    parent, leaf = _parent_fd(worktree, relative, create=False)
    try:
        fd = _open_regular(leaf, parent, os.O_RDONLY)
    finally:
        os.close(parent)
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > cap:
            raise ToolFailure(f"{relative} is larger than {cap} bytes; it cannot be edited here.")
        return handle.read(cap + 1)[:cap]


def unlink_beneath(worktree: Path, relative: str) -> None:
    """Remove the worktree-relative file (a symlink itself, never what it points to)."""
    parent, leaf = _parent_fd(worktree, relative, create=False)
    try:
        os.unlink(leaf, dir_fd=parent)
    finally:
        os.close(parent)


async def run_command(policy: Admission, args: dict, run_sandbox: RunSandbox | None,
                      scratch_root: Path, track: Callable[[object | None], None]) -> tuple[str, dict]:
    """Run the command in a fresh sandbox over the worktree; its scratch home is removed after."""
    if run_sandbox is None:
        raise ToolFailure("the run tool is not available in this episode.")
    timeout = min(float(args.get("timeout_s") or policy.run_timeout_s), policy.run_timeout_s)
    scratch_root.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="run-", dir=scratch_root))
    dotgit = policy.worktree / ".git"
    pointer = _git_pointer(dotgit)
    try:
        spawner, sandbox_config = run_sandbox(home)
        sandbox_config.limits.timeout_s = min(sandbox_config.limits.timeout_s, timeout)
        try:
            process = await spawner.start(sandbox_config, ["/bin/sh", "-c", args["command"]], {})
        except Refused as exc:
            raise ToolFailure(f"the sandbox refused to run this command: {exc}") from None
        track(process)
        try:
            code, output = await _collect(process, timeout, policy.max_output_bytes)
        except BaseException:  # the call was cancelled (the episode ended): its sandbox ends with it
            await asyncio.shield(process.kill())
            raise
        finally:
            track(None)
            restored = _restore_git_pointer(policy.worktree, pointer)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    detail = {"command": args["command"], "exit_code": code, "sandbox_tier": process.tier,
              "output_bytes": len(output)}
    if restored:
        detail["git_pointer_restored"] = True
        output += "\n[the command changed .git; it was restored: git metadata is not yours to change]\n"
    return f"exit code {code}\n{output}", detail


def _restore_git_pointer(worktree: Path, pointer: bytes | None) -> bool:
    """A worktree's `.git` file names its git dir; a command that retargets it would make the
    bot's own later git calls read a config the agent wrote. Put it back if it changed."""
    dotgit = worktree / ".git"
    if pointer is None or _git_pointer(dotgit) == pointer:
        return False
    if dotgit.is_dir() and not dotgit.is_symlink():
        shutil.rmtree(dotgit)
    elif dotgit.exists() or dotgit.is_symlink():
        dotgit.unlink()
    dotgit.write_bytes(pointer)
    return True


def _git_pointer(dotgit: Path) -> bytes | None:
    """The worktree's `.git` file (one line naming its git dir); None for anything else, a
    symlink or a file longer than a pointer ever is, which is not read whole."""
    try:
        found = read_capped(dotgit, GIT_POINTER_CAP)
    except OSError:
        return None
    return None if found.cut else found.data


async def _collect(process: SandboxProcess, timeout: float, cap: int) -> tuple[int, str]:
    kept = HeadTail(cap)  # a command can print without end: only what is shown is held

    async def pump(stream: asyncio.StreamReader) -> None:
        while block := await stream.read(65536):
            kept.feed(block)

    readers = asyncio.gather(pump(process.stdout), pump(process.stderr))
    try:
        await asyncio.wait_for(asyncio.shield(readers), timeout + 5)
        code = await asyncio.wait_for(process.wait(), 5)
    except TimeoutError:
        await process.kill()
        readers.cancel()
        code = 124
        kept.feed(f"\n[killed after {timeout:.0f} s]\n".encode())
    return code, kept.text()


class HeadTail:
    """What `cap_output` keeps of a stream (its head and tail within `cap` bytes) and how much
    was between, read as it comes without holding the rest."""

    def __init__(self, cap: int) -> None:
        self.cap, self.half, self.total = cap, cap // 2, 0
        self.head, self.tail = bytearray(), bytearray()

    def feed(self, block: bytes) -> None:
        self.total += len(block)
        room = max(self.half - len(self.head), 0)
        self.head += block[:room]
        self.tail += block[room:]
        del self.tail[:max(len(self.tail) - (self.cap - self.half), 0)]

    @property
    def held(self) -> int:
        return len(self.head) + len(self.tail)

    def text(self) -> str:
        if self.total <= self.cap:
            return (self.head + self.tail).decode("utf-8", "replace")
        last = self.tail[len(self.tail) - self.half:]
        return (self.head.decode("utf-8", "replace") + f"\n[… {self.total - 2 * self.half} bytes omitted …]\n"
                + last.decode("utf-8", "replace"))


def cap_output(data: bytes, cap: int) -> str:
    """Keep the head and the tail (failures are usually at the end) within `cap` bytes."""
    if len(data) <= cap:
        return data.decode("utf-8", "replace")
    half = cap // 2
    omitted = len(data) - 2 * half
    return (data[:half].decode("utf-8", "replace") + f"\n[… {omitted} bytes omitted …]\n"
            + data[-half:].decode("utf-8", "replace"))


async def read_thread(fetch: Callable[[], Awaitable[str]] | None, cap: int) -> tuple[str, dict]:
    if fetch is None:
        raise ToolFailure("the conversation is not available in this episode.")
    text = await fetch()
    return cap_output(text.encode("utf-8"), cap), {"chars": len(text)}


class ProgressThrottle:
    """Deliver at most one progress update per interval; the latest pending one wins."""

    def __init__(self, deliver: Callable[[str], Any] | None, interval_s: float):
        self._deliver = deliver
        self._interval = interval_s
        self._last = float("-inf")
        self._pending: str | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def submit(self, markdown: str) -> bool:
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            await self._send(markdown)
            return True
        self._pending = markdown
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(
                wait, lambda: asyncio.get_running_loop().create_task(self.flush()))
        return False

    async def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, None
        if pending is not None:
            await self._send(pending)

    async def _send(self, markdown: str) -> None:
        self._last = time.monotonic()
        if self._deliver is not None:
            result = self._deliver(markdown)
            if inspect.isawaitable(result):
                await result
