"""The one-time setup code of the first run: made when `bot serve` starts without a GitHub App and
printed in its log, so only whoever reads that log (the operator) can create the App from `/`.

The manifest flow's `state` is bound to it (a nonce and an HMAC of the nonce keyed by the code), so
GitHub's redirect back is checked against the same code, and a state made under an earlier code
(an earlier start) does not finish anything. Every comparison is constant-time.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets


def new_code() -> str:
    return secrets.token_urlsafe(18)


def matches(given: str, code: str | None) -> bool:
    return bool(code) and hmac.compare_digest(given.encode(), str(code).encode())


def bound_state(code: str) -> str:
    nonce = secrets.token_urlsafe(24)
    return f"{nonce}.{_mac(code, nonce)}"


def carries(state: str, code: str | None) -> bool:
    """Whether a manifest state was made under this code."""
    nonce, _, mac = state.partition(".")
    if not (code and nonce and mac):
        return False
    return hmac.compare_digest(mac.encode(), _mac(code, nonce).encode())


def _mac(code: str, nonce: str) -> str:
    return hmac.new(code.encode(), b"manifest state\x00" + nonce.encode(), hashlib.sha256).hexdigest()
