"""Is the GitHub App configuration real? The App id and private key, checked with GitHub itself.

`/` says "Ready" only when GitHub accepted a JWT signed with the configured key for the configured
App id (`GET /app`), so a wrong id, a key of another App or an unreachable GitHub is said before
the first webhook fails. The answer is cached per (API, App id, key) for a few minutes; a failure
for less, so a fix shows at once on the next reload after that.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import httpx
import jwt
from gidgethub.apps import get_jwt

from bot.config import MissingConfig, Settings
from bot.github.client import API_VERSION
from bot.settings import unreachable

OK_TTL = 600
FAILED_TTL = 30
_cache: dict[str, tuple[float, AppCheck]] = {}


@dataclass(frozen=True)
class AppCheck:
    ok: bool
    message: str  # one sentence for `/`
    name: str = ""
    html_url: str = ""


async def verify_app(settings: Settings) -> AppCheck:
    """GitHub's answer to the configured App id and key, from the cache when fresh."""
    try:
        app_id, key = settings.app_id(), settings.private_key()
    except (MissingConfig, OSError) as exc:
        return AppCheck(False, str(exc))
    api = settings.github_api_url
    cache_key = hashlib.sha256(f"{api}\0{app_id}\0{key}".encode()).hexdigest()
    cached = _cache.get(cache_key)
    if cached and cached[0] > time.monotonic():
        return cached[1]
    result = await _ask_github(api, app_id, key)
    _cache[cache_key] = (time.monotonic() + (OK_TTL if result.ok else FAILED_TTL), result)
    return result


async def _ask_github(api: str, app_id: str, key: str) -> AppCheck:
    try:
        token = get_jwt(app_id=app_id, private_key=key)
    except (ValueError, TypeError, jwt.PyJWTError):
        return AppCheck(False, "The private key is not a PEM RSA key (GITHUB_PRIVATE_KEY / _PATH).")
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
               "X-GitHub-Api-Version": API_VERSION, "User-Agent": "github-agent-bot"}
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.get(f"{api}/app", headers=headers)
    except httpx.HTTPError as exc:
        return AppCheck(False, f"GitHub could not be reached to verify the App: {unreachable.reason(exc)}.")
    if response.status_code != 200:
        return AppCheck(False, f"GitHub refused App id {app_id} with this private key (HTTP "
                               f"{response.status_code}): check GITHUB_APP_ID and the key.")
    data = response.json()
    return AppCheck(True, f"GitHub knows this App: {data.get('name') or data.get('slug') or app_id}.",
                    str(data.get("name") or ""), str(data.get("html_url") or ""))
