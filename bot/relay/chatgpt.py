"""A Codex ChatGPT login (`auth.json` with OAuth tokens) held by the model relay.

The tokens stay on the host. Inside the sandbox Codex gets `placeholder_auth(relay_token)`: a
ChatGPT-mode `auth.json` whose access token is the relay's per-episode token, whose refresh token
is a word, and whose id token is an unsigned JWT with only the plan type (Codex reads it). Codex
then calls its provider's `<base_url>/responses` (`requires_openai_auth`, adapters/codex.py) with
`Authorization: Bearer <relay token>` and `chatgpt-account-id`; the relay puts the real access
token and account id in their place (`Session.headers`).

Refresh: before a call when the access token's JWT `exp` has passed (or is within a minute), and
once after the upstream answers 401, the relay posts the refresh token to the login's token
endpoint (`Login.token_url`: the settings' BOT_CHATGPT_TOKEN_URL, in Codex's own request shape) and
keeps the new tokens; `on_refresh` gets the
whole new `auth.json` text to store (encrypted in the vault, or the operator's own file). OpenAI
rotates refresh tokens: a refreshed login that is not stored cannot be refreshed again.
"""
from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import httpx

from bot.config.table import variable
from bot.errors import BotError

AUTH_FILE = ".codex/auth.json"
CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"  # Codex's OAuth client (what `codex login` registered)
EXPIRY_MARGIN_S = 60
PLACEHOLDER_REFRESH = "held-by-the-bot-relay"
TOKEN_URL = variable("BOT_CHATGPT_TOKEN_URL").default or ""  # OpenAI's, unless the settings name another


class LoginRefused(BotError, RuntimeError):
    """The token endpoint did not renew the ChatGPT login (the message never holds a token)."""


@dataclass(frozen=True)
class Login:
    """The tokens of one ChatGPT login, the rest of its `auth.json` (kept as it was) and the token
    endpoint it is refreshed at."""

    access_token: str
    refresh_token: str
    account_id: str
    id_token: str = ""
    document: tuple[tuple[str, Any], ...] = ()  # the auth.json's other fields, in order
    token_url: str = TOKEN_URL

    @classmethod
    def parse(cls, text: bytes | str, token_url: str = TOKEN_URL) -> Login | None:
        """The login in an `auth.json`, or None when it holds no ChatGPT tokens (an API-key file)."""
        try:
            doc = json.loads(text)
        except ValueError:
            return None
        tokens = doc.get("tokens") if isinstance(doc, dict) else None
        if not isinstance(tokens, dict) or not all(isinstance(tokens.get(k), str) and tokens.get(k)
                                                   for k in ("access_token", "refresh_token")):
            return None
        account = tokens.get("account_id") or _claims(tokens.get("id_token", "")).get(
            "https://api.openai.com/auth", {}).get("chatgpt_account_id") or ""
        return cls(tokens["access_token"], tokens["refresh_token"], str(account), str(tokens.get("id_token") or ""),
                   tuple(doc.items()), token_url)

    def expired(self, now: float | None = None) -> bool:
        """Whether the access token's `exp` has passed (within a minute); a token without one never is."""
        exp = _claims(self.access_token).get("exp")
        return isinstance(exp, (int, float)) and exp - EXPIRY_MARGIN_S <= (now or time.time())

    def renewed(self, answer: dict[str, Any]) -> Login:
        return replace(self, access_token=answer["access_token"],
                       refresh_token=answer.get("refresh_token") or self.refresh_token,
                       id_token=answer.get("id_token") or self.id_token)

    def auth_json(self) -> str:
        """The whole `auth.json` with these tokens and the time of the refresh."""
        doc = dict(self.document)
        tokens = dict(doc.get("tokens") or {})
        tokens.update(access_token=self.access_token, refresh_token=self.refresh_token, id_token=self.id_token)
        if self.account_id:
            tokens["account_id"] = self.account_id
        doc["tokens"] = tokens
        doc["last_refresh"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return json.dumps(doc, indent=2)

    def plan_type(self) -> str | None:
        auth = _claims(self.id_token).get("https://api.openai.com/auth", {})
        return auth.get("chatgpt_plan_type") if isinstance(auth, dict) else None

    def secrets(self) -> list[str]:
        return [value for value in (self.access_token, self.refresh_token, self.id_token) if value]


def placeholder_auth(relay_token: str, login: Login) -> bytes:
    """The `auth.json` Codex gets inside the sandbox: the relay's token, no real token."""
    claims = {"https://api.openai.com/auth": {"chatgpt_plan_type": login.plan_type() or "plus",
                                             "chatgpt_account_id": "held-by-the-bot-relay"}}
    id_token = ".".join([_b64({"alg": "none", "typ": "JWT"}), _b64(claims), "unsigned"])
    return json.dumps({"OPENAI_API_KEY": None, "last_refresh": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "tokens": {"id_token": id_token, "access_token": relay_token,
                                  "refresh_token": PLACEHOLDER_REFRESH,
                                  "account_id": "held-by-the-bot-relay"}}).encode()


class Session:
    """The relay's live copy of the login: the headers for a call, and one refresh at a time."""

    def __init__(self, login: Login, client: httpx.AsyncClient, *, token_url: str | None = None,
                 on_refresh: Callable[[str], Any] | None = None, on_secret: Callable[[list[str]], Any] | None = None):
        self.login = login
        self.refreshes = 0
        self._client = client
        self._token_url = token_url or login.token_url
        self._on_refresh, self._on_secret = on_refresh, on_secret
        self._lock = asyncio.Lock()

    def headers(self) -> list[tuple[bytes, bytes]]:
        found = [(b"authorization", f"Bearer {self.login.access_token}".encode())]
        if self.login.account_id:
            found.append((b"chatgpt-account-id", self.login.account_id.encode()))
        return found

    async def fresh(self) -> None:
        """Refresh first when the access token has expired."""
        if self.login.expired():
            await self.refresh(self.login.access_token)

    async def refresh(self, stale: str) -> None:
        """Renew the tokens unless another call already replaced `stale`; LoginRefused if refused."""
        async with self._lock:
            if self.login.access_token != stale:
                return
            try:
                answer = await self._client.post(self._token_url, json={
                    "client_id": CLIENT_ID, "grant_type": "refresh_token",
                    "refresh_token": self.login.refresh_token, "scope": "openid profile email"})
            except httpx.HTTPError as exc:
                raise LoginRefused(f"the token endpoint could not be reached ({type(exc).__name__})") from None
            body = _json(answer)
            if answer.status_code != 200 or not isinstance(body.get("access_token"), str):
                raise LoginRefused(f"the token endpoint refused the refresh (HTTP {answer.status_code})")
            self.login = self.login.renewed(body)
            self.refreshes += 1
            if self._on_secret is not None:
                self._on_secret(self.login.secrets())
            if self._on_refresh is not None:
                self._on_refresh(self.login.auth_json())


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _claims(jwt: str) -> dict[str, Any]:
    """A JWT's payload, unverified (only its expiry and plan are read), else {}."""
    parts = jwt.split(".") if isinstance(jwt, str) else []
    if len(parts) != 3:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, TypeError):
        return {}
    return claims if isinstance(claims, dict) else {}


def _b64(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def api_key(text: bytes | str) -> str | None:
    """The key of an API-key login (`codex login --with-api-key` writes `OPENAI_API_KEY`), else None."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    key = doc.get("OPENAI_API_KEY") if isinstance(doc, dict) else None
    return key if isinstance(key, str) and key else None
