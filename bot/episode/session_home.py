"""The session follows the thread: a CLI home packed after each turn and restored on whichever
machine runs the thread's next turn (PostgreSQL deployments; one machine keeps its homes on disk).

What is packed is only what the CLI needs to resume (each adapter's declared `resume_state`: the
session transcripts, never credentials, caches or logs), read without following a link and only
from regular single-link files. The tarball is sealed with the service key (AES-GCM, the
conversation and agent as associated data, so a row copied to another thread does not open) and
stored in `session_homes` with a version. A machine remembers the version its local home holds
and skips the restore when that is the latest. A restore empties the local home first and writes
each file new (O_EXCL, no link followed), so nothing an earlier agent left in it stays in the way.
"""
from __future__ import annotations

import asyncio
import hashlib
import io
import logging
import os
import socket
import stat
import tarfile
import time
from collections.abc import Awaitable, Callable
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from bot.config import Settings
from bot.config.table import variable
from bot.credentials import vault
from bot.db import Database
from bot.episode.resume_state import credential_files, empty, globs
from bot.errors import BotError
from bot.workspace.worktrees import conversation_slug

log = logging.getLogger("bot.episode.session_home")
T = TypeVar("T")
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
SPARSE_HOLE = 1 << 20  # a file holding more than this in holes is sparse: never read
UNPACKED_PER_PACKED = 4  # a file larger than this many times the packed cap is never read
MAX_BYTES = int(str(variable("BOT_SESSION_MAX_BYTES").default))


class SessionHomeTooLarge(BotError, RuntimeError):
    """A CLI home's resume state is over BOT_SESSION_MAX_BYTES: it cannot follow the thread."""



def home_dir(data_dir: Path, key: str, agent: str) -> Path:
    """The conversation's home for `agent` under `data_dir`, made when it is not there yet."""
    path = data_dir / "homes" / conversation_slug(key) / agent
    path.mkdir(parents=True, exist_ok=True)
    return path

def _patterns(agent: str) -> list[list[str]]:
    return [pattern.split("/") for pattern in globs(agent)]


def _context(conversation: str, agent: str) -> str:
    return f"session-home\x00{conversation}\x00{agent}"


def pack(home: Path, agent: str, limit: int = MAX_BYTES) -> bytes:
    """A gzipped tarball of the home's resume state; SessionHomeTooLarge past `limit` bytes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        fd = os.open(home, _DIR)
        try:
            _add(tar, fd, (), _patterns(agent), buffer, limit, credential_files(agent))
        finally:
            os.close(fd)
    if buffer.tell() > limit:
        raise SessionHomeTooLarge(_too_large(buffer.tell(), limit))
    return buffer.getvalue()


def _too_large(size: int, limit: int) -> str:
    return (f"the CLI's session state is {size} bytes packed, over BOT_SESSION_MAX_BYTES ({limit}): the next "
            "turn resumes it only if it runs on this machine")


def _add(tar: tarfile.TarFile, dir_fd: int, where: tuple[str, ...], patterns: list[list[str]],
         buffer: io.BytesIO, limit: int, never: frozenset[str]) -> None:
    for name in sorted(os.listdir(dir_fd)):
        path = (*where, name)
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode) and any(_leads_to(path, p) for p in patterns):
            child = os.open(name, _DIR, dir_fd=dir_fd)
            try:
                _add(tar, child, path, patterns, buffer, limit, never)
            finally:
                os.close(child)
        elif stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and any(_matches(path, p) for p in patterns) \
                and "/".join(path) not in never:
            _refuse_unreadable(info, "/".join(path), limit)
            _add_file(tar, dir_fd, name, "/".join(path))
            if buffer.tell() > limit:
                raise SessionHomeTooLarge(_too_large(buffer.tell(), limit))


def _refuse_unreadable(info: os.stat_result, path: str, limit: int) -> None:
    """A file is read only for what it holds on disk: a sparse one (a hole of 500 GiB costs no
    disk and packs to almost nothing) would be read as zeros for hours; one larger than what
    may be stored unpacked would be read only to be refused."""
    if info.st_size - info.st_blocks * 512 > SPARSE_HOLE:
        raise SessionHomeTooLarge(f"the file {path!r} of the CLI's session state is sparse ({info.st_size} "
                                  f"bytes long, {info.st_blocks * 512} on disk): it is not packed, so the next "
                                  "turn resumes the session only if it runs on this machine")
    if info.st_size > limit * UNPACKED_PER_PACKED:
        raise SessionHomeTooLarge(f"the file {path!r} of the CLI's session state is {info.st_size} bytes, over "
                                  f"{UNPACKED_PER_PACKED} x BOT_SESSION_MAX_BYTES ({limit}): it is not packed, so "
                                  "the next turn resumes the session only if it runs on this machine")


def _add_file(tar: tarfile.TarFile, dir_fd: int, name: str, arcname: str) -> None:
    fd = os.open(name, _FILE, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped since the lstat: not ours to read
            return
        member = tarfile.TarInfo(arcname)
        member.size, member.mtime, member.mode = info.st_size, int(info.st_mtime), 0o600
        tar.addfile(member, handle)


def _matches(path: tuple[str, ...], pattern: list[str]) -> bool:
    return len(path) == len(pattern) and all(map(fnmatchcase, path, pattern))


def _leads_to(path: tuple[str, ...], pattern: list[str]) -> bool:
    return len(path) < len(pattern) and all(map(fnmatchcase, path, pattern))


def unpack(data: bytes, home: Path, agent: str) -> int:
    """Replace the home's content by the packed resume state; returns how many files were written."""
    empty(home)
    patterns, written = _patterns(agent), 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar:
            parts = tuple(member.name.split("/"))
            if not (member.isreg() and any(_matches(parts, p) for p in patterns)
                    and all(part not in ("", ".", "..") for part in parts)):
                continue  # only what `pack` could have written
            extracted = tar.extractfile(member)
            if extracted is not None:
                _write(home, parts, extracted.read())
            written += 1
    return written


def _write(home: Path, parts: tuple[str, ...], content: bytes) -> None:
    fd = os.open(home, _DIR)
    try:
        for part in parts[:-1]:
            try:
                os.mkdir(part, 0o700, dir_fd=fd)
            except FileExistsError:
                pass
            child = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
        out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                      dir_fd=fd)
        with os.fdopen(out, "wb") as handle:
            handle.write(content)
    finally:
        os.close(fd)


def strip_loaders(home: Path, loaders: tuple[str, ...]) -> int:
    """Remove from a CLI home every HOME-relative path its CLI loads code or configuration from
    (adapters.base.Loaders.home), and any link or file standing where a folder on the way to one
    should be; returns how many entries went. Called before the CLI starts, when nothing runs in
    the home (its last sandbox is gone), so nothing changes it during the walk; a folder is emptied
    without following a link."""
    return sum(_strip(home, PurePosixPath(relative).parts) for relative in loaders)


def _strip(home: Path, parts: tuple[str, ...]) -> int:
    if not parts or PurePosixPath(*parts).is_absolute() or ".." in parts:
        raise ValueError(f"loader path {'/'.join(parts)!r} is not inside the CLI home")
    where = home
    for part in parts:
        where = where / part
        try:
            mode = where.lstat().st_mode
        except FileNotFoundError:
            return 0
        if not stat.S_ISDIR(mode):
            where.unlink()  # the loader file, or a link or file in the way to it
            return 1
    removed = empty(where)
    where.rmdir()
    return removed + 1


def _marker(data_dir: Path, conversation: str, agent: str) -> Path:
    folder = data_dir / "session-versions"
    folder.mkdir(exist_ok=True)
    return folder / f"{conversation_slug(conversation)}.{agent}"


def local_version(data_dir: Path, conversation: str, agent: str) -> int:
    try:
        return int(_marker(data_dir, conversation, agent).read_text().partition(":")[0])
    except (FileNotFoundError, ValueError):
        return 0


def _stamp(version: int, sealed: bytes) -> str:
    """What a version marker holds: the version and a digest of the sealed row. Versions restart
    at 1 when retention deletes a stored home, so the number alone could match a copy made before
    that; each seal has a fresh nonce, so the digest tells the two apart."""
    return f"{version}:{hashlib.sha256(sealed).hexdigest()[:32]}"


def _holds(data_dir: Path, conversation: str, agent: str, stamp: str) -> bool:
    try:
        return _marker(data_dir, conversation, agent).read_text() == stamp
    except FileNotFoundError:
        return False


def used_here_at(data_dir: Path, conversation: str) -> float | None:
    """When this machine (its `data_dir`) last saved or restored one of the thread's homes (its
    version markers' time), or None when it never did."""
    return max((marker.lstat().st_mtime for marker in _markers(data_dir, conversation)), default=None)


def drop_local(data_dir: Path, conversation: str) -> None:
    """Remove this machine's copies (in `data_dir`) of the thread's CLI homes and their version
    markers. The stored copies stay: the thread's next turn here restores them, as on a machine
    that never ran it."""
    folder = data_dir / "homes" / conversation_slug(conversation)
    if folder.is_dir() and not folder.is_symlink():
        empty(folder)  # written by the agent: never follow a link it planted
        folder.rmdir()
    for marker in _markers(data_dir, conversation):
        marker.unlink(missing_ok=True)


def _markers(data_dir: Path, conversation: str) -> list[Path]:
    folder, slug = data_dir / "session-versions", conversation_slug(conversation)  # no glob characters
    if not folder.is_dir():
        return []
    return [path for path in folder.glob(f"{slug}.*") if path.name.rpartition(".")[0] == slug]


def save(db: Database, settings: Settings, conversation: str, agent: str, packed_by: str = "", *,
         limit: int = MAX_BYTES) -> int:
    """Pack the local home (in the data dir of `settings`, sealed with their key) after a turn and
    store it as the next version; returns that version. SessionHomeTooLarge when it packs to more
    than `limit` bytes."""
    sealed = _sealed(settings, conversation, agent, limit)
    version = _insert(db, conversation, agent, sealed, packed_by)
    _marker(settings.data_dir, conversation, agent).write_text(_stamp(version, sealed))
    return version


def _sealed(settings: Settings, conversation: str, agent: str, limit: int) -> bytes:
    home = home_dir(settings.data_dir, conversation, agent)
    return vault.seal(_context(conversation, agent), pack(home, agent, limit), settings)


def _insert(db: Database, conversation: str, agent: str, sealed: bytes, packed_by: str) -> int:
    version = db.query(
        "INSERT INTO session_homes (conversation, agent, version, sealed, size, packed_by, updated_at) "
        "VALUES (?, ?, 1, ?, ?, ?, ?) ON CONFLICT (conversation, agent) DO UPDATE SET "
        "version = session_homes.version + 1, sealed = excluded.sealed, size = excluded.size, "
        "packed_by = excluded.packed_by, updated_at = excluded.updated_at RETURNING version",
        [conversation, agent, sealed, len(sealed), packed_by, time.time()])[0]["version"]
    return int(version)


def restore(db: Database, settings: Settings, conversation: str, agent: str) -> bool:
    """Before a turn: bring the latest stored home here (into the data dir of `settings`, opened
    with their key) unless the local one already is it. True when a restore happened."""
    return _bring_here(_stored_row(db, conversation, agent), settings, conversation, agent)


def _stored_row(db: Database, conversation: str, agent: str) -> dict[str, Any] | None:
    return db.execute("SELECT version, sealed FROM session_homes WHERE conversation = ? AND agent = ?",
                      [conversation, agent]).fetchone()


def _bring_here(row: dict[str, Any] | None, settings: Settings, conversation: str, agent: str) -> bool:
    data_dir = settings.data_dir
    home = home_dir(data_dir, conversation, agent)
    if row is None:
        return False  # nothing stored
    stamp = _stamp(row["version"], row["sealed"])
    if _holds(data_dir, conversation, agent, stamp) and any(home.iterdir()):
        return False  # the local home is the latest (and was not removed since)
    data = vault.unseal(_context(conversation, agent), row["sealed"], settings)
    unpack(data, home, agent)
    _marker(data_dir, conversation, agent).write_text(stamp)
    return True


async def _restore_off_loop(db: Database, settings: Settings, conversation: str, agent: str) -> bool:
    """`restore` with the hashing, decrypting and unpacking on a thread (the database stays on
    the loop)."""
    row = _stored_row(db, conversation, agent)
    return await asyncio.to_thread(_bring_here, row, settings, conversation, agent)


async def _save_off_loop(db: Database, settings: Settings, conversation: str, agent: str, packed_by: str,
                         limit: int) -> int:
    """`save` with the packing and sealing on a thread: a large home never stalls the service."""
    sealed = await asyncio.to_thread(_sealed, settings, conversation, agent, limit)
    version = _insert(db, conversation, agent, sealed, packed_by)
    stamp = await asyncio.to_thread(_stamp, version, sealed)
    _marker(settings.data_dir, conversation, agent).write_text(stamp)
    return version


async def following(db: Database, settings: Settings, conversation: str, agent: str,
                    note: Callable[[str], Awaitable[None]], turn: Callable[[], Awaitable[T]], *,
                    limit: int = MAX_BYTES) -> T:
    """Run `turn()` with the thread's CLI home here (in the data dir of `settings`, sealed with
    their key) first and stored after, when it packs to at most `limit` bytes (shared databases
    only; one machine's homes stay on its disk). A home too large to store, or a stored one that
    does not open, is said with `note` and the turn runs anyway (without the session, the CLI
    starts fresh)."""
    if not db.shared:
        return await turn()
    try:
        if await _restore_off_loop(db, settings, conversation, agent):
            log.info("restored the %s home of %s from the database", agent, conversation)
    except vault.SecretError:  # another key (rotated, or not the shared one) or an altered row
        log.warning("the stored %s home of %s does not open with this key; the turn starts without it",
                    agent, conversation)
        await note("stored session could not be opened with this service's key; starting without it")
    result = await turn()
    try:
        await _save_off_loop(db, settings, conversation, agent, socket.gethostname(), limit)
    except SessionHomeTooLarge as exc:
        log.warning("%s home of %s not stored: %s", agent, conversation, exc)
        await note(f"⚠️ {exc}")
    return result
