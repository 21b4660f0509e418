"""A running tier-1 sandbox: streams, wall clock, kill-everything, and what the floor observed.

Its first process (the layer launcher) is signalled through a pidfd opened as it starts, never
by its pid: once reaped, a pid may name someone else.

The compiled launcher has its word once bubblewrap is reaped, on a pipe of its own (`heard`):

- "done": nothing was left to apply and the report is written. The run is over for the caller
  then, before the launcher's exit, which tears the overlays down (about 9 ms for a `git status`
  over 5,200 files).
- "apply": the sandbox changed something. The bot applies it (`Layers.apply_from`, the write-back's
  own code, off the loop) while the launcher waits, and answers "applied" on a second pipe: no
  interpreter starts for it and no overlay is unmounted on the run's path. If the bot cannot, it
  closes that pipe and the launcher's own write-back runs (as when the bot is gone).

Anything else on that pipe, or nothing, and the run is over at the launcher's exit, as without it.
The scratch folder and the cgroups are removed after that exit either way.
"""
from __future__ import annotations

import asyncio
import logging
import os
import re
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

from sandbox.base import EgressDecision, Limits
from sandbox.layers import Layers
from sandbox.limits import CgroupSet

WRITE_BACK_GRACE_S = 60.0  # how long a killed sandbox's layer launcher may take to apply its writes
EXIT_WAIT_S = 60.0  # how long the clean-up waits for a launcher that has had its word to be gone
WORD_MOST = 32  # the launcher's word is at most "apply 65535 01234567\n"
DONE = re.compile(rb"(0|[1-9][0-9]{0,4})\n")
OFFER = re.compile(rb"apply (0|[1-9][0-9]{0,4}) ([01]{1,8})\n")
APPLIED = b"applied\n"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Word:
    """What the launcher said: the run's exit code, and for an offer to apply, 0/1 per layer (full)."""

    code: int
    full: str | None = None


def _pidfd_of(pid: int) -> int | None:
    """A pidfd for the sandbox's first process, opened as it starts; None when it is gone already."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


class Tier1Process:
    tier = 1

    def __init__(self, proc: asyncio.subprocess.Process, groups: CgroupSet, limits: Limits,
                 layers: Layers | None = None, after_cleanup: Callable[[], None] | None = None,
                 words: tuple[int, int] | None = None):
        self._proc = proc
        # the read end of the launcher's word and the write end of the bot's answer (closed here)
        self._done: int | None = words[0] if words is not None else None
        self._answer: int | None = words[1] if words is not None else None
        self._returncode: int | None = None
        self._layers = layers
        self._after_cleanup = after_cleanup  # more host-side work for the clean-up thread (cgroups made ahead)
        self._groups = groups
        self._limits = limits
        self.pid = proc.pid
        assert proc.stdout is not None and proc.stderr is not None  # started with both piped
        self.stdout: asyncio.StreamReader = proc.stdout
        self.stderr: asyncio.StreamReader = proc.stderr
        self.egress: list[EgressDecision] = []
        self.servers: list[asyncio.AbstractServer] = []
        self._timed_out = False
        self._killed = False
        self._watchdog: asyncio.TimerHandle | None = None
        self._escalation: asyncio.TimerHandle | None = None
        self._started = time.monotonic()
        self._stats: dict | None = None
        self._finished: asyncio.Future | None = None
        self._cleanup: asyncio.Future | None = None
        self._pidfd = _pidfd_of(proc.pid)  # a handle a reaped pid's next owner never answers to

    def start_watchdog(self) -> None:
        loop = asyncio.get_running_loop()
        self._started = time.monotonic()
        self._watchdog = loop.call_later(self._limits.timeout_s, self._on_timeout)

    def _on_timeout(self) -> None:
        self._timed_out = True
        self._kill_now()

    def _kill_now(self) -> None:
        if self._layers is None:
            self._kill_group()
        elif self._escalation is None and self._signal(signal.SIGTERM):
            # The layer launcher ends the sandbox and applies its writes; past the grace it dies too.
            self._escalation = asyncio.get_running_loop().call_later(WRITE_BACK_GRACE_S, self._kill_group)
        self._groups.kill_all()

    def _kill_group(self) -> None:
        # bwrap dies (with its parent, the launcher, when there is one), so its PID namespace dies
        self._signal(signal.SIGKILL)
        self._groups.kill_all()

    def _signal(self, number: int) -> bool:
        """Send `number` through the pidfd; False when the process has ended."""
        if self._pidfd is None or self._proc.returncode is not None or self._returncode is not None:
            return False
        try:
            signal.pidfd_send_signal(self._pidfd, number)
        except ProcessLookupError:
            return False
        return True

    async def wait(self) -> int:
        if self._finished is None:
            self._finished = asyncio.ensure_future(self._reap())
        return await asyncio.shield(self._finished)

    async def _reap(self) -> int:
        rc = self._returncode = await self._over()
        for timer in (self._watchdog, self._escalation):
            if timer is not None:
                timer.cancel()
        self._groups.kill_all()  # anything that escaped the PID namespace teardown
        self._stats = {"oom_killed": self._groups.oom_kills() > 0,
                       "pids_max_hit": self._groups.pids_max_hits() > 0,
                       "memory_peak_bytes": self._groups.peak_memory(),
                       "cgroup_version": self._groups.version, "cgroup_scope": self._groups.scope}
        if self._layers is not None:  # reported before the launcher's word (by it or by the bot), or its exit
            self._stats.update(self._layers.outcome())
        for server in self.servers:
            server.close()
        # A v1 cgroup stays busy for a few ms after its last task exits, and the layers' scratch
        # folder held the launcher's mounts: both are removed off the caller's path (the run's
        # outcome is already read), once the launcher has exited. In the default executor: a
        # one-shot command's asyncio.run waits for it before the process ends.
        self._cleanup = asyncio.get_running_loop().run_in_executor(None, self._remove_after_exit)
        return rc

    async def _over(self) -> int:
        """The run's exit code: the launcher's word when it gives one, else its own exit."""
        if self._done is not None:
            done, self._done = self._done, None
            word = heard(await _read_word(done))
            if word is not None and (word.full is None or await self._applied(word.full)):
                self._close_answer()
                return word.code
        self._close_answer()
        return await self._proc.wait()

    async def _applied(self, full: str) -> bool:
        """Apply what the sandbox wrote for the waiting launcher; whether it was (else the
        launcher's own write-back does it)."""
        if self._layers is None or self._answer is None or len(full) != len(self._layers.spec):
            return False
        try:
            await asyncio.get_running_loop().run_in_executor(None, self._layers.apply_from, self.pid, full)
        except Exception:  # the launcher applies them itself once the answer's pipe closes
            log.warning("the bot could not apply a sandbox's writes; its launcher applies them", exc_info=True)
            return False
        try:
            os.write(self._answer, APPLIED)
        except OSError:  # the launcher is gone (killed past the grace): the writes are applied all the same
            pass
        return True

    def _close_answer(self) -> None:
        if self._answer is not None:
            os.close(self._answer)
            self._answer = None

    def _remove_after_exit(self) -> None:
        """(a thread) Wait for the launcher's exit on its pidfd (after its word it only tears its
        namespace down), then remove what the run left on the host. Nothing signals through the
        pidfd any more: the run's exit code is known."""
        if self._pidfd is not None:
            exited = select.poll()  # not select(): a busy service's descriptors pass FD_SETSIZE
            exited.register(self._pidfd, select.POLLIN)
            exited.poll(EXIT_WAIT_S * 1000)
            os.close(self._pidfd)
            self._pidfd = None
        self._remove_after()

    def _remove_after(self) -> None:
        try:
            if self._layers is not None:
                self._layers.remove()
        finally:
            self._groups.remove()
        if self._after_cleanup is not None:
            self._after_cleanup()

    async def kill(self) -> None:
        """Kill everything the run started (daemons included) and reap it."""
        self._killed = True
        self._kill_now()
        await self.wait()

    async def cleaned_up(self) -> None:
        """Wait for the clean-up of a reaped run (its layers' scratch folder and lock, its cgroups):
        a caller that removes them too must not race it (the lock's descriptor closed twice)."""
        if self._cleanup is not None:
            await self._cleanup

    def outcome(self) -> dict:
        stats = self._stats or {"oom_killed": False, "pids_max_hit": False}
        return {"tier": 1, "exit_code": self._returncode, "timed_out": self._timed_out,
                "killed": self._killed, **stats,
                "duration_s": round(time.monotonic() - self._started, 3),
                "limits": {"memory_bytes": self._limits.memory_bytes, "pids": self._limits.pids,
                           "timeout_s": self._limits.timeout_s,
                           "tmpfs_bytes": self._limits.tmpfs_bytes,
                           "open_files": self._limits.open_files},
                "egress": {"allowed": sum(d.allowed for d in self.egress),
                           "denied": sum(not d.allowed for d in self.egress)}}


async def _read_word(fd: int) -> bytes:
    """What the launcher wrote on `fd` (closed here) until it closed it: at most WORD_MOST + 1 bytes."""
    loop = asyncio.get_running_loop()
    heard = bytearray()
    ended: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, WORD_MOST + 1)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        heard.extend(data)
        if (not data or len(heard) > WORD_MOST) and not ended.done():
            ended.set_result(None)

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)
    try:
        await ended
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    return bytes(heard)


def heard(word: bytes) -> Word | None:
    """The launcher's word read through its allowlist (`DONE`, `OFFER`); None for anything else."""
    done, offer = DONE.fullmatch(word), OFFER.fullmatch(word)
    status = done[1] if done else offer[1] if offer else None
    code = exit_code(int(status)) if status is not None else None
    if code is None:
        return None
    return Word(code, offer[2].decode() if offer else None)


def exit_code(status: int) -> int | None:
    """A wait status as the exit code asyncio gives (a signal's negative); None for a status no
    exit leaves (a stopped child's, or past 16 bits)."""
    if status > 0xFFFF:
        return None
    try:
        return os.waitstatus_to_exitcode(status)
    except ValueError:
        return None
