"""Run one episode of an agent CLI: command → sandbox → parse every stdout line → Result.

    result = await run_episode(adapter, episode, spawner, config, on_event=record, cancel=stop,
                               bridge_connected=bridge.connected, pace=LinePace(), mark=bridge.stdout)

Every stdout line (kept up to LINE_CAP, its rest counted in a cut event) becomes events (raw line
kept) delivered to `on_event` as they arrive; memory keeps a bounded few for `finish()` (kept_events);
`cancel` kills the whole sandbox; failures that would be silent become errors: the bridge
never reached in strict mode, a non-zero exit with nothing parsed, exit codes with meaning,
a timeout, the memory or process cap, a disk quota (sandbox/disk.py: the worktree's growth and
the CLI home's size are watched while the CLI runs and checked once more when it has ended).
With a `pace` (bot/episode/pace.py) the lines are taken at most so fast, and lifted once the run
is cancelled; `mark` (bot/bridge/stdout_mark.py) tells the bridge how far stdout has been read.
"""
from __future__ import annotations

import asyncio
import contextlib
import errno
import inspect
import logging
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from adapters.base import Adapter, Episode, Event, EventKind, Invocation, Result, Usage
from bot import metrics
from bot.bridge.stdout_mark import StdoutMark
from bot.config.table import variable
from bot.episode.disk_caps import stop_for_full_layer
from bot.episode.kept_events import KeptEvents
from bot.episode.pace import LinePace
from bot.episode.resume_state import empty
from bot.episode.session_home import strip_loaders
from bot.episode.stdout_lines import Line, LineSplitter
from bot.record.redact import redact
from sandbox import disk
from sandbox.base import Refused, SandboxConfig, SandboxProcess, Spawner
from sandbox.bounded import read_capped

log = logging.getLogger(__name__)
CHUNK = 1 << 16
STDERR_KEEP = 64 << 10
LAST_MESSAGE_CAP = 1 << 20  # an answer longer than this is cut
BIG_LINE = 256 << 10  # a stdout line longer than this is parsed off the event loop
SLICE_S = 0.0002  # the longest the pump parses before it lets the event loop run others
OnEvent = Callable[[Event], object]  # awaited when it returns an awaitable
DISK_WATCH_S = float(str(variable("BOT_DISK_WATCH_INTERVAL").default))


async def run_episode(adapter: Adapter, episode: Episode, spawner: Spawner, config: SandboxConfig, *,
                      on_event: OnEvent | None = None, cancel: asyncio.Event | None = None,
                      bridge_connected: asyncio.Event | None = None, disk_watch_s: float = DISK_WATCH_S,
                      pace: LinePace | None = None, mark: StdoutMark | None = None) -> Result:
    """Run the episode's CLI in the sandbox to its end; its disk is looked at every `disk_watch_s`."""
    invocation = adapter.command(episode)
    strip_loaders(episode.home, adapter.loaders.home)  # before the adapter's own files are written
    write_home_files(episode.home, invocation)
    config.system_files = invocation.system_files
    config.masked = adapter.loaders.project if episode.mode == "strict" else ()
    started = time.monotonic()
    try:
        quotas = await disk_quotas(config)
        proc = await spawner.start(config, invocation.argv, invocation.env, invocation.stdin,
                                   cwd=invocation.cwd)
    except (Refused, disk.TooDeep) as exc:
        remove_ephemeral(episode.home, invocation)
        metrics.SANDBOX_REFUSALS.labels(adapter.name).inc()
        return _not_started(adapter, f"the sandbox refused to start {adapter.name}: {exc}", "refused")
    except OSError as exc:  # e.g. the binary vanished since `bot doctor`
        remove_ephemeral(episode.home, invocation)
        return _not_started(adapter, f"{adapter.name} could not be started: {exc.strerror or exc} "
                            f"({invocation.argv[0]})", "missing")
    events, reading = KeptEvents(), _Reading(pace, mark or StdoutMark())
    reading.mark.attach(proc.stdout)
    watcher = asyncio.create_task(_stop_when_over(proc, quotas, disk_watch_s))
    try:
        cancelled = await _drive(proc, adapter, events, on_event, cancel, reading)
        stderr = await _collect_stderr(proc)
        exit_code = await proc.wait()
        over = await _final_disk_check(watcher, quotas)
    except BaseException:  # our own task was cancelled: nothing may survive the episode
        watcher.cancel()
        with contextlib.suppress(Exception):
            await proc.kill()
        raise
    finally:
        remove_ephemeral(episode.home, invocation)
    if events.dropped:
        log.info("%d of the episode's %d events were kept in the record only", events.dropped, events.count)
    result = adapter.finish(episode, events.events(), exit_code, stderr, _last_message(episode.home, invocation))
    _redact_result(result, episode)
    result.duration_s = time.monotonic() - started
    result.outcome = dict(proc.outcome())
    result.egress = list(proc.egress)
    _apply_floor(result, cancelled, config, episode, bridge_connected)
    stop_for_full_layer(result, config)
    if over is not None:
        _stop_for_disk(result, over, episode.home)
    return result


async def disk_quotas(config: SandboxConfig) -> list[disk.Quota]:
    """The worktree may grow by its allowance from what it holds now; the home has a fixed size."""
    lim = config.limits
    baseline = await disk.measure(Path(config.workdir))
    return [disk.Quota("the worktree", Path(config.workdir), baseline + lim.worktree_growth_bytes,
                       lim.worktree_growth_bytes, verb="grew past"),
            disk.Quota("the CLI home", Path(config.home), lim.home_bytes, lim.home_bytes)]


async def _stop_when_over(proc: SandboxProcess, quotas: list[disk.Quota], interval_s: float) -> disk.Breach:
    breach = await disk.watch(quotas, interval_s)
    log.warning("%s; stopping the episode", breach[1])
    await proc.kill()
    return breach


async def _final_disk_check(watcher: asyncio.Task[disk.Breach], quotas: list[disk.Quota]) -> disk.Breach | None:
    """What the watch stopped, else one more look now that nothing writes: a burst between two
    looks must not reach the commit, the cache or the next turn."""
    if watcher.done() and not watcher.cancelled():
        if watcher.exception() is None:
            return watcher.result()
        log.error("the disk watch failed: %r", watcher.exception())
    watcher.cancel()
    return await disk.exceeded(quotas)


def _stop_for_disk(result: Result, breach: disk.Breach, home: Path) -> None:
    """Over a quota outranks everything the CLI said. A home left over its quota would stop
    every later turn: it is emptied, so the next turn starts a fresh session."""
    quota, reason = breach
    if quota.path == Path(home):
        empty(quota.path)
        reason += " (it was cleared: the next turn starts a fresh session)"
    result.ok = False
    result.failure, result.error = "killed", reason
    result.outcome["disk_quota"] = quota.what


def _redact_result(result: Result, episode: Episode) -> None:
    """CliAdapter.finish masks with the same leak scanner; an adapter of its own may not, so the
    bot masks again (a masked text stays as it is)."""
    secrets = episode.credentials.secret_values() + ([episode.bridge.token] if episode.bridge else [])
    if result.error:
        result.error = redact(result.error, secrets)
    if result.stderr_tail:
        result.stderr_tail = redact(result.stderr_tail, secrets)


def _not_started(adapter: Adapter, error: str, failure: str) -> Result:
    return Result(ok=False, text="", session_id=None, usage=Usage(), events=[], agent=adapter.name,
                  error=error, failure=failure, unobserved=adapter.unobserved)


def write_home_files(home: Path, invocation: Invocation) -> None:
    """Write the CLI's settings and credentials into its HOME (owner-only), inside HOME only.

    The HOME persists between turns and the CLI could write it: a symlink or FIFO it left at
    one of these paths (or in a folder on the way) is replaced, never followed or opened."""
    home.mkdir(parents=True, exist_ok=True)
    for relative, content in invocation.files.items():
        parent, leaf = _home_parent(home, relative, create=True)
        try:
            _replace_special(parent, leaf)
            fd = os.open(leaf, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         0o600, dir_fd=parent)
        finally:
            os.close(parent)
        with os.fdopen(fd, "wb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ValueError(f"adapter file {relative!r} is not a regular file")
            os.fchmod(handle.fileno(), 0o600)
            handle.truncate(0)
            handle.write(content)
    if invocation.last_message_file:
        parent, leaf = _home_parent(home, invocation.last_message_file, create=True)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leaf, dir_fd=parent)  # never report the previous turn's answer
        finally:
            os.close(parent)


def remove_ephemeral(home: Path, invocation: Invocation) -> None:
    """Credential files live in the persistent HOME only while the CLI runs."""
    for relative in invocation.ephemeral:
        try:
            parent, leaf = _home_parent(home, relative, create=False)
        except (FileNotFoundError, NotADirectoryError):
            continue
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leaf, dir_fd=parent)
        finally:
            os.close(parent)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _home_parent(home: Path, relative: str, create: bool) -> tuple[int, str]:
    """A descriptor of the HOME folder holding `relative`, reached without following a symlink;
    with `create`, missing folders are made and a symlink or file in their place is replaced."""
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise ValueError(f"adapter file {relative!r} escapes the episode HOME")
    fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the bot's own path: may be a link
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if not create or exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                    raise
                _replace_special(fd, part)
                os.mkdir(part, 0o700, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _replace_special(dir_fd: int, name: str) -> None:
    """Remove `name` when it is anything but a regular file or a real folder (a planted symlink,
    FIFO, socket or device)."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        os.unlink(name, dir_fd=dir_fd)


@dataclass(frozen=True)
class _Reading:
    pace: LinePace | None  # None: as fast as the CLI prints
    mark: StdoutMark


async def _drive(proc: SandboxProcess, adapter: Adapter, events: KeptEvents, on_event: OnEvent | None,
                 cancel: asyncio.Event | None, reading: _Reading) -> bool:
    """Pump stdout until EOF; True when `cancel` fired first (the process is then killed, and
    what it printed is read at full speed)."""
    pump = asyncio.create_task(_pump(proc.stdout, adapter, events, on_event, reading))
    if cancel is None:
        await pump
        return False
    waiter = asyncio.create_task(cancel.wait())
    try:
        await asyncio.wait({pump, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    cancelled = not pump.done()
    if cancelled:
        if reading.pace is not None:
            reading.pace.lifted = True
        await proc.kill()
    await pump
    return cancelled


async def _pump(stream: asyncio.StreamReader, adapter: Adapter, events: KeptEvents,
                on_event: OnEvent | None, reading: _Reading) -> None:
    """Split stdout into lines, each kept up to LINE_CAP (the rest is counted in a cut event),
    and parse each one, yielding the loop often enough that one flood cannot stall the service,
    at the pace's rate; the mark follows each line delivered."""
    lines, fair, mark = LineSplitter(), _FairShare(), reading.mark
    line_end = 0
    try:
        while chunk := await stream.read(CHUNK):
            mark.took(len(chunk))
            for line in lines.split(chunk):
                await _deliver(await _parsed(adapter, line, lines.cap), events, on_event)
                line_end += len(line.data) + line.cut + 1
                mark.advance(line_end)
                if reading.pace is not None:
                    await reading.pace.take()
                await fair.turn()
            mark.advance(mark.read)  # what is left of the chunk is an unfinished line
            await fair.turn()
        for line in lines.close():
            await _deliver(await _parsed(adapter, line, lines.cap), events, on_event)
    finally:
        mark.end()


async def _parsed(adapter: Adapter, line: Line, cap: int) -> list[Event]:
    """The line's events (a long line parsed off the event loop), then its cut if it had one."""
    if len(line.data) > BIG_LINE:
        parsed = await asyncio.to_thread(adapter.parse, line.data)
    else:
        parsed = adapter.parse(line.data)
    if not line.cut:
        return parsed
    said = (f"a stdout line of {len(line.data) + line.cut} bytes was cut at {cap} bytes: "
            f"{line.cut} bytes were not parsed")
    return [*parsed, Event(EventKind.ERROR, text=said, error=said, data={"cut_bytes": line.cut})]


class _FairShare:
    """Gives the event loop back after each slice of parsing: a CLI printing at full speed keeps
    its reader's buffer full, so its reads alone would never wait."""

    def __init__(self) -> None:
        self._since = time.monotonic()

    async def turn(self) -> None:
        if time.monotonic() - self._since >= SLICE_S:
            await asyncio.sleep(0)
            self._since = time.monotonic()


async def _deliver(new: list[Event], events: KeptEvents, on_event: OnEvent | None) -> None:
    for event in new:
        events.add(event)
        if on_event is None:
            continue
        try:
            outcome = on_event(event)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:  # a broken observer must not cost the episode its record
            log.exception("on_event failed for a %s event", event.kind)


async def _collect_stderr(proc: SandboxProcess) -> str:
    kept = bytearray()
    while chunk := await proc.stderr.read(CHUNK):
        kept += chunk
        del kept[:-STDERR_KEEP]
    return kept.decode("utf-8", "replace")


def _last_message(home: Path, invocation: Invocation) -> str | None:
    """The CLI's answer file: a regular file in its HOME, never what a symlink there points to."""
    if not invocation.last_message_file:
        return None
    try:
        parent, leaf = _home_parent(home, invocation.last_message_file, create=False)
    except (OSError, ValueError):
        return None
    try:
        answer = read_capped(leaf, LAST_MESSAGE_CAP, dir_fd=parent)
    except OSError:  # gone, a symlink, or not a regular file
        return None
    finally:
        os.close(parent)
    text = answer.data.decode("utf-8", "replace")
    return text + f"\n… (the CLI's answer was cut at {LAST_MESSAGE_CAP:,} bytes)" if answer.cut else text


def _apply_floor(result: Result, cancelled: bool, config: SandboxConfig, episode: Episode,
                 bridge_connected: asyncio.Event | None) -> None:
    """What the sandbox or the bridge saw outranks what the CLI printed."""
    outcome = result.outcome
    reason = None
    if cancelled or outcome.get("killed"):
        reason = ("cancelled", "cancelled")
    elif outcome.get("timed_out"):
        reason = ("timeout", f"stopped after the {config.limits.timeout_s:.0f} s time limit")
    elif outcome.get("oom_killed"):
        reason = ("killed", "killed: the memory limit was reached")
    elif outcome.get("pids_max_hit"):
        reason = ("killed", "stopped: the process limit was reached")
    elif (result.ok and episode.bridge and episode.mode == "strict" and bridge_connected is not None
          and not bridge_connected.is_set()):
        reason = ("bridge", f"{result.agent} never connected to the bot's tool bridge")
    if reason:
        result.ok = False
        result.failure, result.error = reason
