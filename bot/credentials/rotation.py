"""`bot keys rotate`: every sealed value re-encrypted under a new master key; the old one is gone.

Sealed here: `secrets.sealed` (bot/credentials/vault.py: AES-GCM, the row's scope and name as
associated data). Re-sealed in one write transaction that holds the database's write lock, so no
secret is stored meanwhile; the new key file replaces the old one before that transaction commits,
and the old key stays beside it as `secret.key.previous` only until the commit (an interrupted
rotation is finished or undone by `recover`, which the next rotation runs first).

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
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot import config
from bot.credentials import vault
from bot.db import connect
from bot.errors import BotError

NONCE_BYTES = 12


class RotationError(BotError, RuntimeError):
    """The key could not be rotated; nothing was changed (the message says why)."""


@dataclass(frozen=True)
class Rotated:
    secrets: int
    sessions_ended: int
    key_file: Path


def rotate(key_out: Path | None = None) -> Rotated:
    inline = config.is_set("BOT_SECRET_KEY")
    if inline and key_out is None:
        raise RotationError("BOT_SECRET_KEY holds the key: name a file for the new one (--key-out FILE), "
                            "then restart the service with its content as BOT_SECRET_KEY.")
    key_file = key_out if inline else config.data_dir() / "secret.key"
    if inline and key_file.exists():
        raise RotationError(f"{key_file} exists: name a new file for the new key")
    if not inline:
        recover()
    old = vault.master_key()
    new = AESGCM.generate_key(bit_length=256)
    db, installed = connect(), False
    try:
        with db.transaction():  # the write lock: no secret is sealed under the old key meanwhile
            count = _reseal_secrets(db, old, new)
            ended = db.execute("DELETE FROM settings_sessions").rowcount
            installed = True
            _install(key_file, new, keep_previous=not inline)
    except BaseException:
        if installed:  # the commit failed: the stored secrets are still the old key's
            _undo(key_file, inline)
        raise
    finally:
        db.close()
    _previous(key_file).unlink(missing_ok=True)
    return Rotated(count, max(ended, 0), key_file)


def recover() -> None:
    """Finish or undo a rotation interrupted between the key file's replacement and the commit:
    whichever of secret.key and secret.key.previous opens the stored secrets stays."""
    key_file = config.data_dir() / "secret.key"
    previous = _previous(key_file)
    if not previous.exists():
        return
    if not _opens_all(vault.master_key()):
        os.replace(previous, key_file)  # the commit never happened: the old key is the right one
    else:
        previous.unlink()


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


def _reseal_secrets(db, old: bytes, new: bytes) -> int:
    rows = db.query("SELECT scope, name, sealed FROM secrets")
    for row in rows:
        context = vault._context(row["scope"], row["name"])
        plaintext = unseal_with(old, context, bytes(row["sealed"]))
        db.execute("UPDATE secrets SET sealed = ? WHERE scope = ? AND name = ?",
                   [seal_with(new, context, plaintext), row["scope"], row["name"]])
    return len(rows)


def _opens_all(key: bytes) -> bool:
    db = connect()
    try:
        rows = db.query("SELECT scope, name, sealed FROM secrets")
    finally:
        db.close()
    try:
        for row in rows:
            unseal_with(key, vault._context(row["scope"], row["name"]), bytes(row["sealed"]))
    except RotationError:
        return False
    return True


def _install(path: Path, key: bytes, keep_previous: bool) -> None:
    """Write the key (0600, fsynced) and move it into place; the old file is kept aside."""
    fresh = path.with_name(path.name + ".new")
    fresh.unlink(missing_ok=True)
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(base64.b64encode(key) + b"\n")
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


def _undo(key_file: Path, inline: bool) -> None:
    key_file.with_name(key_file.name + ".new").unlink(missing_ok=True)
    if inline:
        key_file.unlink(missing_ok=True)
    elif _previous(key_file).exists():
        os.replace(_previous(key_file), key_file)


def _previous(path: Path) -> Path:
    return path.with_name(path.name + ".previous")
