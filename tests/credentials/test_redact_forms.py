"""Second-pass security review: secrets leaking in encoded or partial forms are still masked."""
from __future__ import annotations

import base64
import json
from urllib.parse import quote

from bot.record.redact import MASK, redact

TOKEN = "ghx_Zq8vN3kR7tY2mP5wL9cB4dF6hJ1sA0eUx"  # not a known token shape: only its value masks it


def test_token_inside_a_basic_auth_header_is_masked():
    """`user:token` base64-encoded (git's Basic auth) no longer shows the token's encoding."""
    header = base64.b64encode(f"bot:{TOKEN}".encode()).decode()
    masked = redact(f"Authorization: Basic {header}", [TOKEN])
    assert MASK in masked and header not in masked


def test_url_encoded_secret_is_masked():
    """A key with URL-special characters, leaked percent-encoded in a URL, is masked."""
    key = "k3y+with/slashes=and+plus"
    assert quote(key, safe="") not in redact(f"GET /?key={quote(key, safe='')}", [key])


def test_tokens_inside_a_json_credential_file_are_masked_one_by_one():
    """The refresh token of a connected auth.json, printed on its own, is masked."""
    refresh = "rt_9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    auth_json = json.dumps({"tokens": {"refresh_token": refresh, "account_id": "acct"}})
    assert refresh not in redact(f"refresh failed for {refresh}", [auth_json])
