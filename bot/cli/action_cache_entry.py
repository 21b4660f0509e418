"""The Action's session cache entry as a restore reads it: an allowlist.

Any workflow run of the repository (a fork's included) can write the entry, so nothing in it is
taken on trust. Only regular files are read (opened without following a link and without
blocking, then checked with fstat) and each within a byte bound; `sessions.json` is parsed into
declared fields, each of its type and range; an unknown key or a value out of range is dropped and
recorded. What cannot be read at all (an odd file type, an oversized file, text outside the JSON
grammar, `homes` that is not a real folder) raises `CacheEntryUnusable`: the caller discards the entry.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from adapters import base
from bot.episode.resume_state import scrub_homes
from bot.errors import BotError

SESSIONS_FILE = "sessions.json"
MAX_ENTRY_BYTES = 8 << 20  # sessions.json: 10,000 spend rows are about 2 MB
MAX_HOME_BYTES = 512 << 20  # the thread's CLI homes, together (a CLI home's own cap by default)
MAX_HOME_FILES = 10_000
MAX_SESSION_ROWS = 64
MAX_SPEND_ROWS = 10_000
MAX_TURNS = 1_000_000
MAX_TEXT = 128  # a run id, a requester id, a time stamp
MAX_KEY = 512  # a conversation key: owner/repo#number
FUTURE_SLACK_S = 86_400.0  # a runner's clock may run ahead of the one that wrote the entry
# No one priced call comes near these: a row above them was not written by a run.
MAX_CALL_TOKENS = 10_000_000
MAX_CALL_USD = 1_000.0
MAX_RECORDED = 20  # dropped values named one by one; past that, counted
CHUNK = 1 << 20
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TOP = ("conversation", "sessions", "spend")
_SESSION = ("agent", "session_id", "created_at", "last_used_at", "turns")
_SPEND = ("run_id", "ts", "requester", "installation", "tokens", "usd")


Row = TypeVar("Row")


class CacheEntryUnusable(BotError, ValueError):
    """The entry cannot be read as a whole; it is discarded."""


@dataclass(frozen=True)
class SessionRow:
    agent: str
    session_id: str
    created_at: float
    last_used_at: float
    turns: int


@dataclass(frozen=True)
class SpendRow:
    run_id: str | None
    ts: str  # as the ledger writes it: UTC, milliseconds
    requester: str | None
    tokens: int
    usd: float | None


@dataclass
class Dropped:
    """What the reading dropped, a line each (the first MAX_RECORDED), and how many in all."""

    lines: list[str] = field(default_factory=list)
    count: int = 0

    def add(self, line: str) -> None:
        self.count += 1
        if len(self.lines) < MAX_RECORDED:
            self.lines.append(line)


@dataclass
class Entry:
    conversation: str
    sessions: list[SessionRow]
    spend: list[SpendRow]
    dropped: Dropped


def open_folder(folder: Path) -> int | None:
    """The entry's folder as a descriptor, never through a link; None when there is none."""
    try:
        return os.open(folder, _DIR)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CacheEntryUnusable(f"the cache folder is not a real folder ({exc.strerror})") from exc


def read_entry(folder_fd: int, now: datetime) -> Entry | None:
    """sessions.json of the folder parsed into its declared fields; None when it is absent."""
    data = read_regular(folder_fd, SESSIONS_FILE, MAX_ENTRY_BYTES)
    if data is None:
        return None
    try:
        value = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise CacheEntryUnusable(f"{SESSIONS_FILE} is not JSON ({type(exc).__name__})") from exc
    return parse(value, now)


def read_regular(dir_fd: int, name: str, limit: int) -> bytes | None:
    """The bytes of `name` under `dir_fd` when it is a regular file of at most `limit` bytes;
    None when absent; CacheEntryUnusable for anything else. Never follows a link, never blocks."""
    try:
        kind = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(kind):
        raise CacheEntryUnusable(f"{name} is not a regular file")
    fd = os.open(name, _FILE, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CacheEntryUnusable(f"{name} is not a regular file")
        if info.st_size > limit:
            raise CacheEntryUnusable(f"{name} holds {info.st_size} bytes, over the bound of {limit} bytes")
        data = os.read(fd, limit + 1)
        if len(data) > limit:
            raise CacheEntryUnusable(f"{name} holds over the bound of {limit} bytes")
        return data
    finally:
        os.close(fd)


def parse(value: object, now: datetime) -> Entry:
    """An entry from parsed JSON: the object's declared keys only, each row field by field."""
    if not isinstance(value, dict):
        raise CacheEntryUnusable(f"{SESSIONS_FILE} does not hold an object")
    conversation = value.get("conversation")
    if not isinstance(conversation, str) or len(conversation) > MAX_KEY:
        raise CacheEntryUnusable(f"{SESSIONS_FILE} names no conversation")
    dropped = Dropped()
    for key in value:
        if key not in _TOP:
            dropped.add(f"unknown key {_shown(key)}")
    sessions = _rows(value, "sessions", MAX_SESSION_ROWS, dropped,
                     lambda row, where: _session(row, where, now, dropped))
    spend = _rows(value, "spend", MAX_SPEND_ROWS, dropped, lambda row, where: _spend(row, where, now, dropped))
    return Entry(conversation, sessions, spend, dropped)


def _rows(value: dict, name: str, bound: int, dropped: Dropped, one: Callable[[object, str], Row | None]) -> list[Row]:
    rows = value.get(name, [])
    if not isinstance(rows, list):
        dropped.add(f"{name}: not a list")
        return []
    if len(rows) > bound:
        dropped.add(f"{name}: {len(rows) - bound} rows past the bound of {bound}")
    parsed = (one(row, f"{name}[{index}]") for index, row in enumerate(rows[:bound]))
    return [row for row in parsed if row is not None]


def _session(row: object, where: str, now: datetime, dropped: Dropped) -> SessionRow | None:
    fields = _fields(row, where, _SESSION, dropped)
    if fields is None:
        return None
    latest = now.timestamp() + FUTURE_SLACK_S
    agent = fields.get("agent")
    checks = {"agent": isinstance(agent, str) and agent in base.names(),
              "created_at": _real(fields.get("created_at"), 0.0, latest),
              "last_used_at": _real(fields.get("last_used_at"), 0.0, latest),
              "turns": _whole(fields.get("turns"), 0, MAX_TURNS),
              "session_id": isinstance(agent, str) and agent in base.names()
              and _session_id(agent, fields.get("session_id"))}
    if not _all_pass(checks, where, dropped):
        return None
    return SessionRow(fields["agent"], fields["session_id"], float(fields["created_at"]),
                      float(fields["last_used_at"]), fields["turns"])


def _session_id(agent: str, value: object) -> bool:
    try:
        base.check_session_id(base.get(agent), value)
    except base.InvalidSessionId:
        return False
    return True


def _spend(row: object, where: str, now: datetime, dropped: Dropped) -> SpendRow | None:
    """A spend row as this thread's runs write it: in range, dated before now, no installation."""
    fields = _fields(row, where, _SPEND, dropped)
    if fields is None:
        return None
    usd, ts = fields.get("usd"), _time(fields.get("ts"), now)
    checks = {"run_id": _text_or_none(fields.get("run_id")), "ts": ts is not None,
              "requester": _text_or_none(fields.get("requester")), "installation": fields.get("installation") is None,
              "tokens": _whole(fields.get("tokens"), 0, MAX_CALL_TOKENS),
              "usd": usd is None or _real(usd, 0.0, MAX_CALL_USD)}
    if not _all_pass(checks, where, dropped):
        return None
    assert ts is not None  # checked above
    return SpendRow(fields.get("run_id"), ts, fields.get("requester"), fields["tokens"],
                    None if usd is None else float(usd))


def _fields(row: object, where: str, declared: tuple[str, ...], dropped: Dropped) -> dict | None:
    if not isinstance(row, dict):
        dropped.add(f"{where}: not an object")
        return None
    for key in row:
        if key not in declared:
            dropped.add(f"{where}: unknown key {_shown(key)}")
    return {key: row[key] for key in declared if key in row}


def _all_pass(checks: dict[str, bool], where: str, dropped: Dropped) -> bool:
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        dropped.add(f"{where}: {', '.join(failed)} outside its type or range")
    return not failed


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _real(value: object, low: float, high: float) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int):
        return low <= value <= high  # compared as integers: no float overflow
    return math.isfinite(value) and low <= value <= high


def _text_or_none(value: object) -> bool:
    return value is None or (isinstance(value, str) and 0 < len(value) <= MAX_TEXT)


def _time(value: object, now: datetime) -> str | None:
    """The time as the ledger writes it, when it is an aware ISO time not after `now`."""
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        return None
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        return None
    if ts.tzinfo is None or ts > now:
        return None
    return ts.astimezone(UTC).isoformat(timespec="milliseconds")


def _shown(key: object) -> str:
    return repr(key)[:40]


# ---- the thread's CLI homes


def take_home(folder_fd: int, folder: Path, slug: str, target: Path) -> int:
    """Scrub the entry's `homes` to resume state, then copy `homes/<slug>` to `target` (replaced)
    within MAX_HOME_BYTES and MAX_HOME_FILES, only regular files; returns the files copied. On
    CacheEntryUnusable nothing is left at `target`."""
    try:
        kind = os.stat("homes", dir_fd=folder_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return 0
    if not stat.S_ISDIR(kind):
        raise CacheEntryUnusable("homes is not a real folder")
    try:
        scrub_homes(folder / "homes")  # written by earlier runs: only resume state, no link, comes in
        source = _open_dir_under(folder_fd, ("homes", slug))
    except OSError as exc:
        raise CacheEntryUnusable(f"homes could not be read ({exc.strerror or exc})") from exc
    if source is None:
        return 0
    shutil.rmtree(target, ignore_errors=True)
    try:
        return _copy_tree(source, target)
    except (OSError, CacheEntryUnusable) as exc:
        shutil.rmtree(target, ignore_errors=True)
        if isinstance(exc, CacheEntryUnusable):
            raise
        raise CacheEntryUnusable(f"homes could not be copied ({exc.strerror or exc})") from exc


def _open_dir_under(fd: int, names: tuple[str, ...]) -> int | None:
    """The folder at `names` below `fd`, each step opened without following a link; None when
    one is missing."""
    current = os.dup(fd)
    for name in names:
        try:
            down = os.open(name, _DIR, dir_fd=current)
        except FileNotFoundError:
            return None
        finally:
            os.close(current)
        current = down
    return current


def _copy_tree(source_fd: int, target: Path) -> int:
    """Copy, iteratively, one directory descriptor open at a time per pending folder."""
    pending: list[tuple[int, Path]] = [(source_fd, target)]
    files, size = 0, 0
    try:
        while pending:
            fd, into = pending.pop()
            try:
                into.mkdir(parents=True, exist_ok=True)
                for name in sorted(os.listdir(fd)):
                    mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                    if stat.S_ISDIR(mode):
                        pending.append((os.open(name, _DIR, dir_fd=fd), into / name))
                    elif stat.S_ISREG(mode):
                        files += 1
                        if files > MAX_HOME_FILES:
                            raise CacheEntryUnusable(f"homes hold over {MAX_HOME_FILES} files")
                        size += _copy_file(fd, name, into / name, MAX_HOME_BYTES - size)
            finally:
                os.close(fd)
    finally:
        for fd, _ in pending:
            os.close(fd)
    return files


def _copy_file(dir_fd: int, name: str, target: Path, room: int) -> int:
    """Copy one regular file within `room` bytes; returns its size."""
    fd = os.open(name, _FILE, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CacheEntryUnusable("a home file is not a regular file")
        if info.st_size > room:
            raise CacheEntryUnusable(f"homes hold over the bound of {MAX_HOME_BYTES} bytes")
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        copied = 0
        with os.fdopen(out, "wb") as handle:
            while chunk := os.read(fd, min(CHUNK, room - copied + 1)):
                copied += len(chunk)
                if copied > room:
                    raise CacheEntryUnusable(f"homes hold over the bound of {MAX_HOME_BYTES} bytes")
                handle.write(chunk)
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
        return copied
    finally:
        os.close(fd)
