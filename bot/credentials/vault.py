"""Encrypted secret store: the keys people set and the App's stored identity, sealed at rest.

Values are sealed with AES-256-GCM. The key lives outside the database: BOT_SECRET_KEY
(base64) or $BOT_DATA_DIR/secret.key (0600, created on first use). Each row's scope and
name are the associated data, so a ciphertext copied into another row fails to open.
Rows are shown only as fingerprints; every set and delete leaves an audit row (no values).

Every operation takes the entry point's settings: the key, the data dir and the database are
theirs.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot.config import Settings
from bot.db import Database, connect
from bot.errors import BotError

SCOPE_KINDS = ("user", "repo", "installation")
_SCOPE = re.compile(r"^(user|repo|installation):[A-Za-z0-9_.\-/]+$")
_NAME = re.compile(r"^[a-z0-9_.:\-]+$")
_NONCE_BYTES = 12
MAX_VALUE_BYTES = 64 * 1024


class SecretError(BotError, RuntimeError):
    """A secret could not be stored or read; the message never contains a value."""


@dataclass(frozen=True)
class SecretInfo:
    scope: str
    name: str
    fingerprint: str
    updated_at: str
    updated_by: str


def scope_for(kind: str, owner: str | int) -> str:
    """`scope_for("repo", 1296269)` → "repo:1296269". A user and a repository are named by their
    GitHub id (a name can be renamed and taken again); an installation by its id."""
    if kind not in SCOPE_KINDS:
        raise SecretError(f"unknown scope kind {kind!r}")
    if kind in ("user", "repo") and not (isinstance(owner, int) or str(owner).isdigit()):
        raise SecretError(f"a {kind} scope is named by its GitHub id, not {owner!r}")
    scope = f"{kind}:{str(owner).strip().lower()}"
    _check_scope(scope)
    return scope


def fingerprint(value: str) -> str:
    """Enough to recognise a key, never enough to use it: last 4 characters and a hash prefix."""
    digest = hashlib.sha256(value.encode()).hexdigest()[:8]
    tail = value.strip()[-4:]
    if len(value.strip()) >= 16 and tail.isalnum():
        return f"…{tail} · sha256:{digest}"
    return f"sha256:{digest}"


def put(scope: str, name: str, value: str, *, actor: str, settings: Settings) -> str:
    """Store (or replace) one secret; returns its fingerprint."""
    _check_scope(scope)
    _check_name(name)
    raw = value.encode()
    if not raw.strip():
        raise SecretError("an empty value cannot be stored")
    if len(raw) > MAX_VALUE_BYTES:
        raise SecretError(f"a secret may be at most {MAX_VALUE_BYTES} bytes")
    shown = fingerprint(value)
    now = _now()
    with database(settings) as db:
        db.execute("INSERT INTO secrets (scope, name, sealed, fingerprint, updated_at, updated_by) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, name) DO UPDATE SET sealed = excluded.sealed, "
                   "fingerprint = excluded.fingerprint, updated_at = excluded.updated_at, "
                   "updated_by = excluded.updated_by",
                   [scope, name, seal(_context(scope, name), raw, settings), shown, now, actor])
        _audit(db, actor, "set", scope, name, shown)
    return shown


def get(scope: str, name: str, settings: Settings, *, db: Database | None = None) -> str | None:
    """The plaintext of one secret, or None when the row does not exist. `db`: a caller's open
    connection (a job's), read without a connection of its own."""
    with reading(settings, db) as conn:
        rows = conn.query("SELECT * FROM secrets WHERE scope = ? AND name = ?", [scope, name])
    if not rows:
        return None
    try:
        return unseal(_context(scope, name), rows[0]["sealed"], settings).decode()
    except SecretError:
        raise SecretError(f"the stored {name} of {scope} cannot be decrypted: it was moved from another "
                          "row, altered, or sealed with another key (BOT_SECRET_KEY / secret.key). "
                          "Connect it again.") from None


def delete(scope: str, name: str, *, actor: str, settings: Settings) -> bool:
    """Remove one secret; returns whether there was one."""
    with database(settings) as db:
        rows = db.query("SELECT * FROM secrets WHERE scope = ? AND name = ?", [scope, name])
        if not rows:
            return False
        db.execute("DELETE FROM secrets WHERE scope = ? AND name = ?", [scope, name])
        _audit(db, actor, "delete", scope, name, rows[0]["fingerprint"])
    return True


def listing(scope: str, settings: Settings, *, db: Database | None = None) -> list[SecretInfo]:
    """The secrets of one scope, as fingerprints, sorted by name."""
    with reading(settings, db) as conn:
        rows = conn.query("SELECT * FROM secrets WHERE scope = ? ORDER BY name", [scope])
        return [SecretInfo(r["scope"], r["name"], r["fingerprint"], r["updated_at"], r["updated_by"])
                for r in rows]


def names(scope: str, settings: Settings, *, db: Database | None = None) -> set[str]:
    return {info.name for info in listing(scope, settings, db=db)}


def audit_log(scope: str | None = None, *, settings: Settings) -> list[dict]:
    """Audit rows, oldest first (actor, action, scope, name, fingerprint; never a value)."""
    with database(settings) as db:
        if scope:
            return db.query("SELECT * FROM secret_audit WHERE scope = ? ORDER BY id", [scope])
        return db.query("SELECT * FROM secret_audit ORDER BY id")


def seal(context: str, plaintext: bytes, settings: Settings) -> bytes:
    """AES-GCM with `context` as associated data; nonce prepended."""
    nonce = os.urandom(_NONCE_BYTES)
    return nonce + AESGCM(master_key(settings)).encrypt(nonce, plaintext, context.encode())


def unseal(context: str, sealed: bytes, settings: Settings) -> bytes:
    try:
        return AESGCM(master_key(settings)).decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], context.encode())
    except (InvalidTag, ValueError):
        raise SecretError("a sealed value cannot be decrypted with this key and context") from None


def master_key(settings: Settings) -> bytes:
    """The key of `settings`: BOT_SECRET_KEY (base64 of 16, 24 or 32 bytes), else the data dir's
    secret.key (created on first use)."""
    return _key(settings.text("BOT_SECRET_KEY"), settings.data_dir)


def _key(inline: str | None, data_dir: Path) -> bytes:
    if inline:
        return _decode_key(inline, "BOT_SECRET_KEY")
    path = data_dir / "secret.key"
    if not path.exists():
        _create_key_file(path)
    return _decode_key(path.read_text(), str(path))


def _decode_key(text: str, origin: str) -> bytes:
    try:
        key = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise SecretError(f"{origin} is not valid base64") from None
    if len(key) not in (16, 24, 32):
        raise SecretError(f"{origin} must decode to 16, 24 or 32 bytes, not {len(key)}")
    return key


def _create_key_file(path: Path) -> None:
    encoded = base64.b64encode(AESGCM.generate_key(bit_length=256)) + b"\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race; use its key
        return
    with os.fdopen(fd, "wb") as handle:
        handle.write(encoded)


def _context(scope: str, name: str) -> str:
    return f"secret\x00{scope}\x00{name}"


def _check_scope(scope: str) -> None:
    if not _SCOPE.match(scope):
        raise SecretError(f"invalid scope {scope!r}; expected e.g. user:octocat, repo:octo/app, installation:42")


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise SecretError(f"invalid secret name {name!r}")


def _audit(db: Database, actor: str, action: str, scope: str, name: str, shown: str) -> None:
    db.execute("INSERT INTO secret_audit (at, actor, action, scope, name, fingerprint) VALUES (?, ?, ?, ?, ?, ?)",
               [_now(), actor, action, scope, name, shown])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextmanager
def reading(settings: Settings, db: Database | None) -> Iterator[Database]:
    """`db` as it is (one statement reads, no transaction of ours on a caller's connection), or a
    short-lived connection of the settings' database when none is given."""
    if db is not None:
        yield db
        return
    with database(settings) as own:
        yield own


@contextmanager
def database(settings: Settings) -> Iterator[Database]:
    """The bot database (bot/db) of `settings`, one short-lived connection per operation: callers
    run on threads and event loops alike. One transaction, committed on a clean exit."""
    db = connect(settings=settings)
    try:
        with db.transaction():
            yield db
    finally:
        db.close()
