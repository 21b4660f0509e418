"""`bot backup FILE` / `bot restore FILE`: the database and the key, as one file.

The database is copied with SQLite's online backup API from a connection of its own: the copy is
one consistent snapshot even while the service writes (jobs queued, runs recorded), and the
service is never stopped for it. The key file (secret.key) goes in the same archive, so a
restore opens every stored secret; with BOT_SECRET_KEY the key stays where the operator keeps it
and the manifest says so. The archive is created 0600: it holds the key.

A restore checks the archive before touching the data dir (only the three known regular files,
an intact database, secrets that open with the key it brings), then moves the current database
aside (`bot.db.before-restore-<time>`) and drops its write-ahead log, which must never be
replayed over another database. Stop the service before restoring. PostgreSQL deployments back
up with pg_dump; `bot backup` refuses them rather than copy a part.
"""
from __future__ import annotations

import io
import json
import os
import sqlite3
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from bot.config import Settings
from bot.credentials import rotation, vault
from bot.db import url as database_url
from bot.errors import BotError
from bot.service import wakeup

MEMBERS = ("manifest.json", "bot.db", "secret.key")
FORMAT = 1


class Manifest(TypedDict):
    """manifest.json of an archive; `files` (the sealed files beside the database) is filled in as
    they are added, after the manifest was written."""

    format: int
    created_at: float
    key: str  # "secret.key", or that BOT_SECRET_KEY holds it and the archive does not
    bytes: int  # of the database snapshot
    files: list[str]


class BackupError(BotError, RuntimeError):
    """The backup or restore did not happen; the data dir is as it was."""


@dataclass(frozen=True)
class Restored:
    database: Path
    moved_aside: Path | None
    key_restored: bool
    secrets: int


def backup(dest: Path, settings: Settings, sealed_files: tuple[str, ...] = ()) -> Manifest:
    """Write the archive of the database and key of `settings` to `dest` (which must not exist);
    returns its manifest. `sealed_files`: other files of the data dir sealed with the key (the
    GitHub App settings of the first run)."""
    source = _sqlite_path(settings)
    if dest.exists():
        raise BackupError(f"{dest} exists: name a new file")
    data = settings.data_dir
    key_file = data / "secret.key"
    inline = settings.is_set("BOT_SECRET_KEY")
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".bot-backup-") as scratch:
        snapshot = Path(scratch) / "bot.db"
        _online_copy(source, snapshot)
        manifest: Manifest = {"format": FORMAT, "created_at": time.time(),
                              "key": "BOT_SECRET_KEY (not in this archive)" if inline else "secret.key",
                              "bytes": snapshot.stat().st_size, "files": []}
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as archive:
            _add_bytes(archive, "manifest.json", json.dumps(manifest, indent=2).encode())
            archive.add(snapshot, "bot.db", recursive=False)
            if not inline and key_file.exists():
                _add_bytes(archive, "secret.key", key_file.read_bytes())
            for name in sealed_files:
                if (data / name).is_file():
                    _add_bytes(archive, name, (data / name).read_bytes())
                    manifest["files"].append(name)
            raw.flush()
            os.fsync(raw.fileno())
    return manifest


def restore(archive_path: Path, settings: Settings, force: bool = False,
            sealed_files: tuple[str, ...] = ()) -> Restored:
    """Put the archive's database and key in the data dir of `settings`."""
    target = _sqlite_path(settings)
    if target.exists() and not force:
        raise BackupError(f"{target} exists: stop the service and pass --force to replace it "
                          "(the current database is kept aside)")
    if target.exists() and (live := _live_workers(target)):
        raise BackupError(f"{live} worker(s) of a running service reported in the last "
                          f"{wakeup.ALIVE_S:.0f} s: stop the service before restoring")
    data = settings.data_dir
    with tempfile.TemporaryDirectory(dir=data, prefix=".bot-restore-") as scratch:
        files = _unpack(archive_path, Path(scratch), MEMBERS + sealed_files)
        _check_database(files["bot.db"])
        key = files.get("secret.key")
        secrets = _check_key(files["bot.db"], key, settings)
        aside = None
        if target.exists():
            aside = target.with_name(f"bot.db.before-restore-{int(time.time())}")
            _online_copy(target, aside)
        for tail in ("-wal", "-shm"):
            Path(f"{target}{tail}").unlink(missing_ok=True)
        os.replace(files["bot.db"], target)
        if key is not None:
            os.chmod(key, 0o600)
            os.replace(key, data / "secret.key")
        for name in sealed_files:
            if name in files:
                os.replace(files[name], data / name)
    return Restored(target, aside, key is not None, secrets)


def _live_workers(database: Path) -> int:
    """Workers whose heartbeat (bot/service/wakeup.py) is recent: a service still uses this file."""
    conn = sqlite3.connect(database, timeout=30)
    try:
        row = conn.execute("SELECT COUNT(*) FROM workers WHERE seen_at >= ?", [time.time() - wakeup.ALIVE_S]).fetchone()
    except sqlite3.OperationalError:  # a database from before worker heartbeats
        return 0
    finally:
        conn.close()
    return int(row[0])


def _sqlite_path(settings: Settings) -> Path:
    url = database_url(settings)
    if not url.startswith("sqlite:///"):
        raise BackupError("BOT_DATABASE_URL is PostgreSQL: back it up with pg_dump (and keep BOT_SECRET_KEY "
                          "in your secret store); `bot backup` copies the SQLite database only")
    return Path(url.removeprefix("sqlite:///"))


def _online_copy(source: Path, dest: Path) -> None:
    """SQLite's backup API: a consistent snapshot while other connections keep writing."""
    src = sqlite3.connect(source, timeout=30)
    dst = sqlite3.connect(dest)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o600, int(time.time())
    archive.addfile(info, io.BytesIO(data))


def _unpack(archive_path: Path, into: Path, names: tuple[str, ...]) -> dict[str, Path]:
    """Only the known names, only regular files, written by us (never tarfile.extract)."""
    found: dict[str, Path] = {}
    try:
        with tarfile.open(archive_path, mode="r:gz") as archive:
            for member in archive:
                if member.name not in names or not member.isfile() or member.name in found:
                    raise BackupError(f"{archive_path} holds {member.name!r}: not a bot backup")
                path = into / member.name
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                data = archive.extractfile(member)
                if data is None:
                    raise BackupError(f"{archive_path} holds {member.name!r}: not a bot backup")
                with os.fdopen(fd, "wb") as out, data:
                    out.write(data.read())
                found[member.name] = path
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BackupError(f"{archive_path} cannot be read as a bot backup: {exc}") from None
    if "bot.db" not in found or "manifest.json" not in found:
        raise BackupError(f"{archive_path} is not a bot backup (no database or manifest)")
    return found


def _check_database(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        result = conn.execute("PRAGMA integrity_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"the archive's database is not readable: {exc}") from None
    finally:
        conn.close()
    if result != "ok":
        raise BackupError(f"the archive's database failed its integrity check: {result}")


def _check_key(database: Path, key_path: Path | None, settings: Settings) -> int:
    """Every secret in the archive opens with the key it brings (else the key of `settings`)."""
    conn = sqlite3.connect(database)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute("SELECT scope, name, sealed FROM secrets").fetchall()
    except sqlite3.OperationalError:
        rows = []
    finally:
        conn.close()
    if not rows:
        return 0
    key = vault._decode_key(key_path.read_text(), "secret.key") if key_path else vault.master_key(settings)
    for row in rows:
        try:
            rotation.unseal_with(key, vault._context(row["scope"], row["name"]), bytes(row["sealed"]))
        except rotation.RotationError:
            raise BackupError("the archive's secrets do not open with " +
                              ("the key it holds" if key_path else "this service's key") +
                              ": nothing was restored") from None
    return len(rows)
