"""The GitHub calls of the settings pages, made with the signed-in user's own token.

OAuth web flow (GitHub's web application flow): exchange the code at BOT_GITHUB_OAUTH_URL, identify the
user with GET /user, list the repositories they administer through the app's installations, and
confirm admin or maintain with the collaborator-permission endpoint before touching a repo's keys.
"""
from __future__ import annotations

import functools
import ssl
from typing import Any

import gidgethub
import httpx

from bot.errors import BotError
from bot.github import paged
from bot.github.client import RetryingAPI
from bot.settings import unreachable

API_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
               "User-Agent": "github-agent-bot-settings"}
PER_PAGE = 100  # GitHub's largest page
MAX_ITEMS = 100 * PER_PAGE  # a Link chain that never ends is an error, not a hung page
ADMIN_ROLES = ("admin", "maintain")
WRITER_ROLES = ("admin", "maintain", "write")


@functools.lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    """One TLS context per process: building it is most of the cost of a new client."""
    return httpx.create_ssl_context()


def _client(**kwargs: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=15, verify=_tls(), **kwargs)


class GitHubRefused(BotError):
    """GitHub answered with an error (status) or could not be reached (status 502)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


async def exchange_code(oauth_base: str, oauth_client: tuple[str, str], code: str, redirect_uri: str) -> str:
    """The user access token for an authorization code; `oauth_client`: the App's OAuth id and secret."""
    form = {"client_id": oauth_client[0], "client_secret": oauth_client[1], "code": code, "redirect_uri": redirect_uri}
    async with _client(headers={"Accept": "application/json"}) as client:
        try:
            response = await client.post(f"{oauth_base}/login/oauth/access_token", data=form)
        except httpx.HTTPError as exc:
            raise GitHubRefused(502, f"GitHub could not be reached: {unreachable.reason(exc)}.") from None
    data = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
    if response.status_code != 200 or not data.get("access_token"):
        reason = data.get("error_description") or data.get("error") or f"HTTP {response.status_code}"
        raise GitHubRefused(400, f"GitHub refused the sign-in: {reason}.")
    return data["access_token"]


async def get_user(api: str, token: str) -> dict:
    """`api`: GitHub's REST API (the settings' GITHUB_API_URL), as every call here takes it."""
    return await _get(api, token, "/user")


async def admin_repositories(api: str, token: str) -> list[str]:
    """Full names of the repositories, reachable through the app, that the user administers."""
    names = []
    for installation in await _pages(api, token, "/user/installations", "installations"):
        path = f"/user/installations/{installation['id']}/repositories"
        for repo in await _pages(api, token, path, "repositories"):
            permissions = repo.get("permissions") or {}
            if any(permissions.get(role) for role in ADMIN_ROLES):
                names.append(repo["full_name"])
    return sorted(set(names), key=str.lower)


async def admin_installations(api: str, token: str, login: str) -> list[dict]:
    """The app's installations on accounts the user administers: their own, or orgs they own."""
    found = []
    for installation in await _pages(api, token, "/user/installations", "installations"):
        account = installation.get("account") or {}
        if await _administers_account(api, token, login, account):
            found.append({"id": int(installation["id"]), "account": account.get("login", ""),
                          "type": account.get("type", "")})
    return found


async def administered_installation(api: str, token: str, login: str, installation_id: int) -> dict | None:
    """The installation, if the user administers its account; else None."""
    return next((i for i in await admin_installations(api, token, login) if i["id"] == installation_id), None)


async def _administers_account(api: str, token: str, login: str, account: dict) -> bool:
    if account.get("type") != "Organization":
        return account.get("login", "").lower() == login.lower()
    try:  # needs the app's Organization "Members: read" permission; without it nobody qualifies
        membership = await _get(api, token, f"/user/memberships/orgs/{account.get('login', '')}")
    except GitHubRefused as exc:
        if exc.status in (403, 404):
            return False
        raise
    return membership.get("role") == "admin" and membership.get("state") == "active"


async def can_administer(api: str, token: str, login: str, repo: str) -> bool:
    """Whether `login` is an admin or maintainer of `repo` (role_name; `permission` maps maintain to write)."""
    data = await _permission(api, token, login, repo)
    return data.get("role_name") in ADMIN_ROLES or data.get("permission") == "admin"


async def can_write(api: str, token: str, login: str, repo: str) -> bool:
    """Whether `login` may push to `repo`: a writer, maintainer or admin (a custom role counts by the
    base permission GitHub maps it to)."""
    data = await _permission(api, token, login, repo)
    return data.get("role_name") in WRITER_ROLES or data.get("permission") in ("admin", "write")


async def _permission(api: str, token: str, login: str, repo: str) -> dict:
    """GitHub's answer on `login`'s permission in `repo`; {} when GitHub does not say (403, 404)."""
    try:
        return await _get(api, token, f"/repos/{repo}/collaborators/{login}/permission")
    except GitHubRefused as exc:
        if exc.status in (403, 404):
            return {}
        raise


async def repository_id(api: str, token: str, repo: str) -> int:
    """GitHub's id of `repo` as the user sees it: what a repository's keys are bound to, so a
    renamed repository keeps them and a new one that takes the old name gets none."""
    data = await _get(api, token, f"/repos/{repo}")
    if not isinstance(data.get("id"), int) or data["id"] <= 0:
        raise GitHubRefused(502, f"GitHub named no id for {repo}.")
    return int(data["id"])


async def _pages(api: str, token: str, path: str, key: str) -> list[dict]:
    """Every item of a paginated list, along GitHub's `Link: rel="next"` (no guessing from page
    sizes), up to MAX_ITEMS over at most MAX_ITEMS / PER_PAGE pages: a longer list, a Link chain
    that never ends, or a link off GitHub's API (refused, never followed with the user's token)
    is an error the page shows, not a hung page or a part of the list passed off as all of it."""
    async with _client() as client:
        github = _UserAPI(client, oauth_token=token, base_url=api, requester=API_HEADERS["User-Agent"])
        try:
            listed = await paged.read_list(github, path, most=MAX_ITEMS, per_page=PER_PAGE, key=key)
        except gidgethub.HTTPException as exc:
            status = int(exc.status_code)
            raise GitHubRefused(status, f"GitHub answered {status} for {path}.") from None
        except httpx.HTTPError as exc:
            raise GitHubRefused(502, f"GitHub could not be reached: {unreachable.reason(exc)}.") from None
        except ValueError:
            raise GitHubRefused(502, f"GitHub answered no list at {path}.") from None
    if listed.refused:
        raise GitHubRefused(502, f"GitHub's list at {path} linked its next page off GitHub's API: not followed.")
    if listed.cut:
        raise GitHubRefused(502, f"GitHub listed more than {MAX_ITEMS} items at {path}.")
    return listed.items


class _UserAPI(RetryingAPI):
    """The signed-in user's calls: never waited on (a person is waiting for the page; they reload)."""

    async def handle_rate_limit_error(self, *, method: str, url: str, exception: gidgethub.HTTPException,
                                      attempt: int) -> bool:
        return False


async def _get(api: str, token: str, path: str, params: dict | None = None) -> dict:
    headers = dict(API_HEADERS, Authorization=f"Bearer {token}")
    async with _client(base_url=api, headers=headers) as client:
        try:
            response = await client.get(path, params=params)
        except httpx.HTTPError as exc:
            raise GitHubRefused(502, f"GitHub could not be reached: {unreachable.reason(exc)}.") from None
    if response.status_code != 200:
        raise GitHubRefused(response.status_code, f"GitHub answered {response.status_code} for {path}.")
    return response.json()
