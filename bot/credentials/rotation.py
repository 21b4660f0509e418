"""`bot keys rotate`: every sealed value re-encrypted under a new master key; the old one is gone.

Every sealed value is named by a `SealedColumn` (a table's column, with the associated data each
row was sealed with: `secrets.sealed` here, the packed CLI homes and others registered by the
command that runs the rotation, bot/cli/keys.py) or a `SealedFile` (the GitHub App settings the
first-run flow stored). Columns are re-sealed in one write transaction that holds the database's
write lock, so nothing is sealed under the old key meanwhile; the new key file, then each sealed
file, replace the old ones before that transaction commits, and the old ones stay beside them as
`*.previous` only until the commit (an interrupted rotation is finished or undone by `recover`,
which the next rotation runs first).

Settings sessions (`settings_sessions.token_sealed`) are ended instead of re-sealed: their cookies
are signed with a key derived from the master key (bot/settings/session.py), so no cookie made
before the rotation opens them again, and a rotation after a leak must not leave a cookie an
attacker could have forged working. Everyone signs in again.

With BOT_SECRET_KEY (no key file), the new key is written to the file the operator names
(`--key-out`, 0600) and the service must be restarted with it as BOT_SECRET_KEY.
"""
from __future__ import annotations

import base64
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot.config import Settings
from bot.credentials import vault
from bot.db import Database, connect
from bot.errors import BotError

NONCE_BYTES = 12


class RotationError(BotError, RuntimeError):
    """The key could not be rotated; nothing was changed (the message says why)."""


@dataclass(frozen=True)
class SealedColumn:
    table: str
    keys: tuple[str, ...]  # the columns that name a row
    column: str
    context: Callable[[dict], str]  # the associated data the row's value was sealed with


@dataclass(frozen=True)
class SealedFile:
    path: Path
    context: str


SECRETS = SealedColumn("secrets", ("scope", "name"), "sealed", lambda row: vault._context(row["scope"], row["name"]))


@dataclass(frozen=True)
class Rotated:
    secrets: int  # sealed values re-encrypted (rows and files)
    sessions_ended: int
    key_file: Path


def rotate(settings: Settings, key_out: Path | None = None, columns: tuple[SealedColumn, ...] = (SECRETS,),
           files: tuple[SealedFile, ...] = ()) -> Rotated:
    """Rotate the key of `settings` (BOT_SECRET_KEY, else the data dir's secret.key) over the
    values of their database."""
    inline = settings.is_set("BOT_SECRET_KEY")
    if inline and key_out is None:
        raise RotationError("BOT_SECRET_KEY holds the key: name a file for the new one (--key-out FILE), "
                            "then restart the service with its content as BOT_SECRET_KEY.")
    key_file = key_out if inline and key_out is not None else settings.data_dir / "secret.key"
    if inline and key_file.exists():
        raise RotationError(f"{key_file} exists: name a new file for the new key")
    if not inline:
        recover(settings, columns, files)
    old = vault.master_key(settings)
    new = AESGCM.generate_key(bit_length=256)
    present = [f for f in files if f.path.exists()]
    resealed = {f.path: seal_with(new, f.context, unseal_with(old, f.context, f.path.read_bytes())) for f in present}
    db, installed = connect(settings=settings), False
    try:
        with db.transaction():  # the write lock: no value is sealed under the old key meanwhile
            count = sum(_reseal(db, column, old, new) for column in columns)
            ended = db.execute("DELETE FROM settings_sessions").rowcount
            installed = True
            _install(key_file, base64.b64encode(new) + b"\n", keep_previous=not inline)
            for path, data in resealed.items():
                _install(path, data, keep_previous=True)
    except BaseException:
        if installed:  # the commit failed: the stored values are still the old key's
            _undo(key_file, inline, list(resealed))
        raise
    finally:
        db.close()
    for path in [key_file, *resealed]:
        _previous(path).unlink(missing_ok=True)
    return Rotated(count + len(resealed), max(ended, 0), key_file)


def recover(settings: Settings, columns: tuple[SealedColumn, ...] = (SECRETS,),
            files: tuple[SealedFile, ...] = ()) -> None:
    """Finish or undo a rotation interrupted between the key file's replacement and the commit:
    whichever of secret.key and secret.key.previous opens the stored values stays, and the
    sealed files follow it."""
    key_file = settings.data_dir / "secret.key"
    previous = _previous(key_file)
    if not previous.exists():
        return
    undo = not _opens_all(vault.master_key(settings), columns, settings)
    for path in [f.path for f in files] + [key_file]:
        if _previous(path).exists():
            if undo:  # the commit never happened: the old key and the files it opens are the right ones
                os.replace(_previous(path), path)
            else:
                _previous(path).unlink()


def seal_with(key: bytes, context: str, plaintext: bytes) -> bytes:
    """vault.seal's format (nonce, then AES-GCM with the context as associated data), given a key."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(key).encrypt(nonce, plaintext, context.encode())


def unseal_with(key: bytes, context: str, sealed: bytes) -> bytes:
    try:
        return AESGCM(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], context.encode())
    except (InvalidTag, ValueError):
        raise RotationError("a stored secret does not open with the current key: rotation stopped, "
                            "nothing changed") from None


def _rows(db: Database, column: SealedColumn) -> list[dict]:
    if column.table not in db.table_names():
        return []
    names = ", ".join((*column.keys, column.column))
    return db.query(f"SELECT {names} FROM {column.table} WHERE {column.column} IS NOT NULL")


def _reseal(db: Database, column: SealedColumn, old: bytes, new: bytes) -> int:
    rows = _rows(db, column)
    where = " AND ".join(f"{key} = ?" for key in column.keys)
    for row in rows:
        context = column.context(row)
        plaintext = unseal_with(old, context, bytes(row[column.column]))
        db.execute(f"UPDATE {column.table} SET {column.column} = ? WHERE {where}",
                   [seal_with(new, context, plaintext), *(row[key] for key in column.keys)])
    return len(rows)


def _opens_all(key: bytes, columns: tuple[SealedColumn, ...], settings: Settings) -> bool:
    db = connect(settings=settings)
    try:
        found = [(column, row) for column in columns for row in _rows(db, column)]
    finally:
        db.close()
    try:
        for column, row in found:
            unseal_with(key, column.context(row), bytes(row[column.column]))
    except RotationError:
        return False
    return True


def _install(path: Path, data: bytes, keep_previous: bool) -> None:
    """Write `data` (0600, fsynced) and move it into place; the old file is kept aside."""
    fresh = path.with_name(path.name + ".new")
    fresh.unlink(missing_ok=True)
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    if keep_previous and path.exists():
        os.link(path, _previous(path))
    os.replace(fresh, path)
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _undo(key_file: Path, inline: bool, files: list[Path]) -> None:
    for path in [key_file, *files]:
        path.with_name(path.name + ".new").unlink(missing_ok=True)
    if inline:
        key_file.unlink(missing_ok=True)
    for path in files if inline else [key_file, *files]:
        if _previous(path).exists():
            os.replace(_previous(path), path)


def _previous(path: Path) -> Path:
    return path.with_name(path.name + ".previous")
