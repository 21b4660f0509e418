"""Signed cookies and server-side sessions for the settings pages.

The cookie holds only a random session id (signed, with an expiry); the GitHub user token stays in
the `settings_sessions` table, sealed by the secret store. The signing key and the CSRF token are
derived from the store's master key, so neither is ever written anywhere.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets as random_tokens
import time
from dataclasses import dataclass

from bot.config import Settings
from bot.credentials import vault as secrets

SESSION_COOKIE = "bot_session"
STATE_COOKIE = "bot_oauth_state"
SESSION_TTL = 8 * 3600  # GitHub's user access tokens expire after 8 hours


@dataclass(frozen=True)
class WebSession:
    login: str
    user_id: int
    token: str
    csrf: str


def sign(settings: Settings, payload: dict, ttl: int) -> str:
    """`payload` for `ttl` seconds, signed with a key derived from the master key of `settings`."""
    body = json.dumps(dict(payload, exp=int(time.time()) + ttl), separators=(",", ":")).encode()
    data = base64.urlsafe_b64encode(body).rstrip(b"=").decode()
    return f"{data}.{_mac(settings, data)}"


def unsign(settings: Settings, value: str | None) -> dict | None:
    """The payload of a cookie made by `sign`, or None if altered, malformed or expired."""
    if not value or "." not in value:
        return None
    data, mac = value.rsplit(".", 1)
    if not hmac.compare_digest(mac, _mac(settings, data)):
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(payload, dict) or payload.get("exp", 0) < time.time():
        return None
    return payload


def start_session(settings: Settings, login: str, user_id: int, token: str) -> tuple[str, int]:
    """Store a new session in the database of `settings`; returns the cookie value and its
    lifetime in seconds."""
    sid = random_tokens.token_urlsafe(32)
    key = _sid_hash(sid)
    now = int(time.time())
    with secrets.database(settings) as db:
        db.execute("delete from settings_sessions where expires_at < ?", [now])
        db.execute("insert into settings_sessions (sid_hash, login, user_id, token_sealed, created_at, expires_at) "
                   "values (?, ?, ?, ?, ?, ?)",
                   [key, login, user_id, secrets.seal(_context(key), token.encode(), settings), now,
                    now + SESSION_TTL])
    return sign(settings, {"sid": sid}, SESSION_TTL), SESSION_TTL


def load_session(settings: Settings, cookie: str | None) -> WebSession | None:
    sid = (unsign(settings, cookie) or {}).get("sid")
    if not isinstance(sid, str):
        return None
    key = _sid_hash(sid)
    with secrets.database(settings) as db:
        rows = db.query("select * from settings_sessions where sid_hash = ? and expires_at >= ?",
                        [key, int(time.time())])
    if not rows:
        return None
    row = rows[0]
    try:
        token = secrets.unseal(_context(key), row["token_sealed"], settings).decode()
    except secrets.SecretError:  # the master key changed: the session is unusable, sign in again
        end_session(settings, cookie)
        return None
    return WebSession(row["login"], row["user_id"], token, csrf_token(settings, sid))


def issue_state(settings: Settings, ttl: int) -> str:
    """A fresh OAuth state, kept (hashed) until it is used once or expires."""
    state = random_tokens.token_urlsafe(32)
    now = int(time.time())
    with secrets.database(settings) as db:
        db.execute("delete from oauth_states where expires_at < ?", [now])
        db.execute("insert into oauth_states (state_hash, expires_at) values (?, ?)", [_sid_hash(state), now + ttl])
    return state


def consume_state(settings: Settings, state: str) -> bool:
    """Whether `state` was issued, is unexpired and unused; it is used up either way."""
    with secrets.database(settings) as db:
        return db.execute("delete from oauth_states where state_hash = ? and expires_at >= ?",
                          [_sid_hash(state), int(time.time())]).rowcount == 1


def end_session(settings: Settings, cookie: str | None) -> None:
    sid = (unsign(settings, cookie) or {}).get("sid")
    if isinstance(sid, str):
        with secrets.database(settings) as db:
            db.execute("delete from settings_sessions where sid_hash = ?", [_sid_hash(sid)])


def csrf_token(settings: Settings, sid: str) -> str:
    return hmac.new(_signing_key(settings), b"csrf\x00" + sid.encode(), hashlib.sha256).hexdigest()


def _mac(settings: Settings, data: str) -> str:
    return hmac.new(_signing_key(settings), b"cookie\x00" + data.encode(), hashlib.sha256).hexdigest()


def _signing_key(settings: Settings) -> bytes:
    return hmac.new(secrets.master_key(settings), b"bot settings session v1", hashlib.sha256).digest()


def _sid_hash(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


def _context(sid_hash: str) -> str:
    return f"websession\x00{sid_hash}"

