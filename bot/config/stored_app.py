"""The GitHub App a first run stored in the data dir, as the configuration reads it.

bot/settings/manifest.py seals the App's settings into `$BOT_DATA_DIR/github-app.sealed` with the
secret store's master key (AES-256-GCM, bot/credentials/vault.py: BOT_SECRET_KEY, else the data
dir's secret.key). Reading it back lives here, below the secret store, so that config's readers of
the live environment see the same App as an entry point's settings, whichever command runs. The
file and the key are only read here, never created.
"""
from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bot.config.table import MissingConfig

FILE = "github-app.sealed"
CONTEXT = "github-app\x00manifest v1"
NONCE_BYTES = 12
_cache: dict[str, object] = {"stamp": None, "texts": None}


def read(data_dir: Path, secret_key: str | None) -> dict[str, str] | None:
    """The stored App's texts by variable name, or None when no App is stored (re-read when the
    file or the key changes)."""
    path = data_dir / FILE
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    key_file = data_dir / "secret.key"
    key_stamp = secret_key or (str(key_file.stat().st_mtime_ns) if key_file.exists() else "")
    stamp = (str(path), stat.st_mtime_ns, stat.st_size, key_stamp)
    if _cache["stamp"] != stamp:
        _cache["texts"] = _open(path, _key(secret_key, key_file))
        _cache["stamp"] = stamp
    found = _cache["texts"]
    return dict(found) if isinstance(found, dict) else None


def _key(secret_key: str | None, key_file: Path) -> bytes:
    origin, text = ("BOT_SECRET_KEY", secret_key) if secret_key else (str(key_file), _text_of(key_file))
    try:
        key = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise MissingConfig(f"{origin} is not valid base64, so the stored GitHub App cannot be opened") from None
    if len(key) not in (16, 24, 32):
        raise MissingConfig(f"{origin} must decode to 16, 24 or 32 bytes, not {len(key)}")
    return key


def _text_of(key_file: Path) -> str:
    try:
        return key_file.read_text()
    except FileNotFoundError:
        raise MissingConfig(f"a GitHub App is stored in {key_file.parent}, but not the key it was sealed "
                            "with (secret.key, or BOT_SECRET_KEY)") from None


def _open(path: Path, key: bytes) -> dict[str, str]:
    sealed = path.read_bytes()
    try:
        plain = AESGCM(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], CONTEXT.encode())
    except (InvalidTag, ValueError):
        raise MissingConfig(f"the GitHub App stored in {path} cannot be opened with this key "
                            "(BOT_SECRET_KEY, or the data dir's secret.key)") from None
    found = json.loads(plain)
    return {str(name): str(text) for name, text in found.items()} if isinstance(found, dict) else {}
