"""The settings pages: Login with GitHub, then connect personal and repository credentials.

`routes` is mounted by bot/app.py. Nothing here runs at import. OAuth web flow against
BOT_GITHUB_OAUTH_URL (default https://github.com) and GITHUB_API_URL; the session cookie is
signed with a key derived from the secret store's master key; the user's token stays server-side,
sealed in the `settings_sessions` table. Every form carries the session's CSRF token.
"""
from __future__ import annotations

import functools
import hmac
import re
import secrets as random_tokens
from dataclasses import dataclass
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from bot import config
from bot.credentials import resolve as credentials
from bot.credentials import vault as secrets
from bot.errors import BotError
from bot.settings import pages
from bot.settings.github import (
    GitHubRefused,
    admin_installations,
    admin_repositories,
    administered_installation,
    can_administer,
    exchange_code,
    get_user,
)
from bot.settings.session import (
    SESSION_COOKIE,
    STATE_COOKIE,
    WebSession,
    end_session,
    load_session,
    sign,
    start_session,
    unsign,
)

STATE_TTL = 600
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_OAUTH_ERROR = re.compile(r"^[a-z_]{1,40}$")  # GitHub's codes, e.g. access_denied
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


class SettingsRefusal(BotError):
    """Stop handling and answer with this page."""

    def __init__(self, status: int, body: str):
        super().__init__(status)
        self.status, self.body = status, body


def oauth_configured() -> bool:
    return bool(config.env("GITHUB_CLIENT_ID") and config.env("GITHUB_CLIENT_SECRET"))


def oauth_base() -> str:
    return config.env("BOT_GITHUB_OAUTH_URL").rstrip("/")


def callback_url(request: Request) -> str:
    public = config.env("BOT_PUBLIC_URL")
    return f"{public.rstrip('/')}/settings/callback" if public else str(request.url_for("settings_callback"))


def html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)


def page_handler(func):
    @functools.wraps(func)
    async def handler(request: Request) -> Response:
        try:
            if not oauth_configured():
                raise SettingsRefusal(503, pages.not_configured(callback_url(request)))
            return await func(request)
        except SettingsRefusal as refusal:
            return html(refusal.body, refusal.status)
        except GitHubRefused as exc:
            if exc.status == 401:
                end_session(request.cookies.get(SESSION_COOKIE))
                return html(pages.login_page("GitHub no longer accepts your sign-in. Sign in again."), 401)
            return html(pages.error_page("GitHub refused", str(exc)), 502 if exc.status >= 500 else 400)
    return handler


def _secure(request: Request) -> bool:
    return request.url.scheme == "https" or (config.env("BOT_PUBLIC_URL") or "").startswith("https:")


def _set_cookie(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/settings", httponly=True,
                        samesite="lax", secure=_secure(request))


# ---- sign in and out

@page_handler
async def login(request: Request) -> Response:
    state = random_tokens.token_urlsafe(32)
    query = urlencode({"client_id": config.env("GITHUB_CLIENT_ID"), "redirect_uri": callback_url(request),
                       "state": state})
    response = RedirectResponse(f"{oauth_base()}/login/oauth/authorize?{query}", status_code=302)
    _set_cookie(response, request, STATE_COOKIE, sign({"state": state}, STATE_TTL), STATE_TTL)
    return response


@page_handler
async def callback(request: Request) -> Response:
    params = request.query_params
    if params.get("error"):
        reason = params["error"] if _OAUTH_ERROR.match(params["error"]) else "unknown error"
        raise SettingsRefusal(400, pages.login_page(f"GitHub did not sign you in: {reason}."))
    expected = str((unsign(request.cookies.get(STATE_COOKIE)) or {}).get("state", ""))
    if not expected or not hmac.compare_digest(expected.encode(), params.get("state", "").encode()):
        raise SettingsRefusal(400, pages.login_page(
            "This sign-in could not be verified (state mismatch). Start again."))
    token = await exchange_code(oauth_base(), params.get("code", ""), callback_url(request))
    user = await get_user(token)
    end_session(request.cookies.get(SESSION_COOKIE))  # a fresh id on every sign-in
    cookie, ttl = start_session(user["login"], int(user["id"]), token)
    response = RedirectResponse("/settings", status_code=303)
    _set_cookie(response, request, SESSION_COOKIE, cookie, ttl)
    response.delete_cookie(STATE_COOKIE, path="/settings")
    return response


@page_handler
async def logout(request: Request) -> Response:
    await _session_and_form(request)
    end_session(request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse("/settings", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/settings")
    return response


# ---- personal credentials

@page_handler
async def home(request: Request) -> Response:
    session = _session_or_login(request)
    message, error = _flash(request)
    personal = _rows(secrets.scope_for("user", session.user_id))
    repos = await admin_repositories(session.token)
    installations = await admin_installations(session.token, session.login)
    return html(pages.home(session.login, session.csrf, personal, list(credentials.KINDS), repos,
                           installations, credentials.operator_agents(), message, error))


@page_handler
async def add_personal(request: Request) -> Response:
    session, form = await _session_and_form(request)
    return _save(secrets.scope_for("user", session.user_id), session, form, "/settings")


@page_handler
async def delete_personal(request: Request) -> Response:
    session, form = await _session_and_form(request)
    return _remove(secrets.scope_for("user", session.user_id), session, form, "/settings")


# ---- shared credentials: a repository's or an installation's

@dataclass(frozen=True)
class Shared:
    scope: str
    title: str
    base: str  # the page's path
    blurb: str


@page_handler
async def shared_home(request: Request) -> Response:
    session = _session_or_login(request)
    shared = await _shared_scope(request, session)
    message, error = _flash(request)
    return html(pages.shared_page(shared.title, shared.blurb, shared.base, session.login, session.csrf,
                                  _rows(shared.scope), list(credentials.KINDS), _history(shared.scope),
                                  message, error))


@page_handler
async def add_shared(request: Request) -> Response:
    session, form = await _session_and_form(request)
    shared = await _shared_scope(request, session)
    return _save(shared.scope, session, form, shared.base)


@page_handler
async def delete_shared(request: Request) -> Response:
    session, form = await _session_and_form(request)
    shared = await _shared_scope(request, session)
    return _remove(shared.scope, session, form, shared.base)


# ---- helpers

def _session_or_login(request: Request) -> WebSession:
    session = load_session(request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise SettingsRefusal(200 if request.url.path == "/settings" else 401, pages.login_page())
    return session


async def _session_and_form(request: Request):
    session = load_session(request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise SettingsRefusal(401, pages.login_page("Your session has ended. Sign in again."))
    form = await request.form()
    if not hmac.compare_digest(str(form.get("csrf", "")).encode(), session.csrf.encode()):
        raise SettingsRefusal(403, pages.error_page("Form expired", "This form is stale or did not come from "
                                            "this page. Reload the settings page and try again."))
    return session, form


async def _shared_scope(request: Request, session: WebSession) -> Shared:
    """The repository or installation of the path, once GitHub confirms the user administers it."""
    if "installation" in request.path_params:
        return await _administered_installation(request.path_params["installation"], session)
    owner, name = request.path_params["owner"], request.path_params["repo"]
    if not (_NAME.match(owner) and _NAME.match(name)):
        raise SettingsRefusal(404, pages.error_page("No such repository", "That is not a repository name."))
    repo = f"{owner}/{name}"
    if not await can_administer(session.token, session.login, repo):
        raise SettingsRefusal(403, pages.error_page("Not allowed", f"Only admins and maintainers of {repo} can "
                                            "manage its credentials."))
    return Shared(secrets.scope_for("repo", repo), repo, f"/settings/repos/{repo}",
                  f"Keys for {repo} serve every permitted requester there without a key of their own.")


async def _administered_installation(installation_id: int, session: WebSession) -> Shared:
    installation = await administered_installation(session.token, session.login, installation_id)
    if installation is None:
        raise SettingsRefusal(403, pages.error_page("Not allowed", "Only the account's owner (or an organization "
                                            "owner) can manage the credentials of this installation."))
    account = installation["account"]
    return Shared(secrets.scope_for("installation", installation_id), f"{account} (all repositories)",
                  f"/settings/installations/{installation_id}",
                  f"Keys for {account} serve every repository of this installation that has no "
                  "repository key, for requesters without a key of their own.")


def _save(scope: str, session: WebSession, form, back: str) -> Response:
    kind = credentials.find_kind(str(form.get("kind", "")))
    if kind is None:
        raise SettingsRefusal(400, pages.error_page("Unknown credential", "Choose a credential from the list."))
    try:
        credentials.connect(scope, kind, str(form.get("value", "")), actor=session.login)
    except (credentials.InvalidCredential, secrets.SecretError) as exc:
        raise SettingsRefusal(400, pages.error_page("Not saved", str(exc), back)) from None
    return RedirectResponse(f"{back}?{urlencode({'saved': kind.name})}", status_code=303)


def _remove(scope: str, session: WebSession, form, back: str) -> Response:
    kind = credentials.find_kind(str(form.get("kind", "")))
    if kind is None or not credentials.disconnect(scope, kind, actor=session.login):
        raise SettingsRefusal(404, pages.error_page("Nothing to delete", "That credential is not connected."))
    return RedirectResponse(f"{back}?{urlencode({'deleted': kind.name})}", status_code=303)


def _flash(request: Request) -> tuple[str | None, bool]:
    """The one-line outcome of the last form, from the redirect's query (labels only, no values)."""
    query = request.query_params
    for key, verb in (("saved", "Saved"), ("deleted", "Deleted")):
        kind = credentials.find_kind(query.get(key, ""))
        if kind:
            return f"{verb} {kind.agent}: {kind.label}.", False
    return None, False


def _history(scope: str, limit: int = 20) -> list[dict]:
    """The latest set/delete audit rows of a scope, newest first."""
    rows = secrets.audit_log(scope)[-limit:][::-1]
    return [{"at": _when(r["at"]), "actor": r["actor"], "action": r["action"], "fingerprint": r["fingerprint"],
             "label": getattr(credentials.find_kind(r["name"]), "label", r["name"])} for r in rows]


def _when(timestamp: str) -> str:
    return timestamp.replace("T", " ")[:16] + " UTC"


def _rows(scope: str) -> list[dict]:
    rows = []
    for info in secrets.listing(scope):
        kind = credentials.find_kind(info.name)
        if kind:
            rows.append({"agent": kind.agent, "label": kind.label, "name": kind.name,
                         "fingerprint": info.fingerprint,
                         "updated_at": _when(info.updated_at),
                         "updated_by": info.updated_by})
    return rows


routes = [
    Route("/settings", home, methods=["GET"], name="settings"),
    Route("/settings/login", login, methods=["GET"], name="settings_login"),
    Route("/settings/callback", callback, methods=["GET"], name="settings_callback"),
    Route("/settings/logout", logout, methods=["POST"], name="settings_logout"),
    Route("/settings/keys", add_personal, methods=["POST"], name="settings_add_key"),
    Route("/settings/keys/delete", delete_personal, methods=["POST"], name="settings_delete_key"),
    Route("/settings/repos/{owner}/{repo}", shared_home, methods=["GET"], name="settings_repo"),
    Route("/settings/repos/{owner}/{repo}/keys", add_shared, methods=["POST"], name="settings_repo_add"),
    Route("/settings/repos/{owner}/{repo}/keys/delete", delete_shared, methods=["POST"],
          name="settings_repo_delete"),
    Route("/settings/installations/{installation:int}", shared_home, methods=["GET"],
          name="settings_installation"),
    Route("/settings/installations/{installation:int}/keys", add_shared, methods=["POST"],
          name="settings_installation_add"),
    Route("/settings/installations/{installation:int}/keys/delete", delete_shared, methods=["POST"],
          name="settings_installation_delete"),
]
