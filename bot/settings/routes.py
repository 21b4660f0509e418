"""The settings pages: Login with GitHub, then connect personal and repository credentials.

`routes` is mounted by bot/app.py. Nothing here runs at import. OAuth web flow against
BOT_GITHUB_OAUTH_URL (default GITHUB_SERVER_URL) and GITHUB_API_URL; the session cookie is
signed with a key derived from the secret store's master key; the user's token stays server-side,
sealed in the `settings_sessions` table. Every form carries the session's CSRF token.
"""
from __future__ import annotations

import functools
import hmac
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from bot.automations import fire, fire_tokens
from bot.automations import runs as automation_runs
from bot.config import Settings
from bot.credentials import resolve as credentials
from bot.credentials import vault as secrets
from bot.credentials.shapes import check_shape, with_article
from bot.errors import BotError
from bot.review import learned, signal_series
from bot.review import signal as review_signal
from bot.service import schedules
from bot.settings import automations_page, learned_pull, pages, review_page
from bot.settings.address import own_base
from bot.settings.automation_config import read_as_app
from bot.settings.effective import effective, stored_rows, when
from bot.settings.flash import KeyTestFlash, carry, forget, taken, with_test_result
from bot.settings.github import (
    GitHubRefused,
    admin_installations,
    admin_repositories,
    administered_installation,
    can_administer,
    can_write,
    exchange_code,
    get_user,
    repository_id,
)
from bot.settings.keytest import try_key
from bot.settings.lookup import installation_of
from bot.settings.session import (
    SESSION_COOKIE,
    STATE_COOKIE,
    WebSession,
    consume_state,
    end_session,
    issue_state,
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


def _settings(request: Request) -> Settings:
    found: Settings = request.app.state.settings
    return found


def _api(request: Request) -> str:
    """GitHub's REST API, which the settings pages call with the signed-in user's token."""
    return _settings(request).github_api_url


def callback_url(request: Request) -> str:
    """BOT_PUBLIC_URL, else the address the service listens on: never the request's Host."""
    return f"{own_base(_settings(request), request.scope.get('server'))}/settings/callback"


def html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)


def page_handler(func: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    @functools.wraps(func)
    async def handler(request: Request) -> Response:
        try:
            if not _settings(request).oauth_login:
                raise SettingsRefusal(503, pages.not_configured(callback_url(request)))
            return await func(request)
        except SettingsRefusal as refusal:
            return html(refusal.body, refusal.status)
        except GitHubRefused as exc:
            if exc.status == 401:
                end_session(_settings(request), request.cookies.get(SESSION_COOKIE))
                return html(pages.login_page("GitHub no longer accepts your sign-in. Sign in again."), 401)
            return _github_error(request, exc)
    return handler


def _github_error(request: Request, exc: GitHubRefused) -> HTMLResponse:
    """GitHub unreachable is not GitHub refusing; either way the page keeps who is signed in and,
    after a post, what they typed, so nothing has to be typed again."""
    unreachable = "could not be reached" in str(exc)
    title = "GitHub unreachable" if unreachable else "GitHub refused"
    message = (f"{exc} Nothing was changed; try again in a moment." if unreachable else str(exc))
    session: WebSession | None = getattr(request.state, "session", None)
    typed: pages.Typed | None = getattr(request.state, "typed", None)
    retry = ""
    if session and typed and request.url.path.endswith("/keys"):
        retry = pages.add_form(request.url.path, credentials.all_kinds(), session.csrf, "Try again", typed)
    body = pages.error_page(title, message, login=session.login if session else None,
                            csrf=session.csrf if session else None, retry=retry)
    return html(body, 502 if unreachable or exc.status >= 500 else 400)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https" or (_settings(request).text("BOT_PUBLIC_URL") or "").startswith("https:")


def _set_cookie(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/settings", httponly=True,
                        samesite="lax", secure=_secure(request))


# ---- sign in and out

@page_handler
async def login(request: Request) -> Response:
    settings = _settings(request)
    state = issue_state(settings, STATE_TTL)
    query = urlencode({"client_id": settings.text("GITHUB_CLIENT_ID"), "redirect_uri": callback_url(request),
                       "state": state})
    response = RedirectResponse(f"{settings.oauth_url}/login/oauth/authorize?{query}", status_code=302)
    _set_cookie(response, request, STATE_COOKIE, sign(settings, {"state": state}, STATE_TTL), STATE_TTL)
    return response


@page_handler
async def callback(request: Request) -> Response:
    params = request.query_params
    if params.get("error"):
        reason = params["error"] if _OAUTH_ERROR.match(params["error"]) else "unknown error"
        raise SettingsRefusal(400, pages.login_page(f"GitHub did not sign you in: {reason}."))
    expected = str((unsign(_settings(request), request.cookies.get(STATE_COOKIE)) or {}).get("state", ""))
    if not expected or not hmac.compare_digest(expected.encode(), params.get("state", "").encode()):
        raise SettingsRefusal(400, pages.login_page(
            "This sign-in could not be verified (state mismatch). Start again."))
    if not consume_state(_settings(request), expected):
        raise SettingsRefusal(400, pages.login_page(
            "This sign-in link was already used or has expired. Start again."))
    settings = _settings(request)
    client = (settings.required("GITHUB_CLIENT_ID"), settings.required("GITHUB_CLIENT_SECRET"))
    token = await exchange_code(settings.oauth_url, client, params.get("code", ""), callback_url(request))
    user = await get_user(settings.github_api_url, token)
    end_session(settings, request.cookies.get(SESSION_COOKIE))  # a fresh id on every sign-in
    cookie, ttl = start_session(settings, user["login"], int(user["id"]), token)
    response = RedirectResponse("/settings", status_code=303)
    _set_cookie(response, request, SESSION_COOKIE, cookie, ttl)
    response.delete_cookie(STATE_COOKIE, path="/settings")
    return response


@page_handler
async def logout(request: Request) -> Response:
    await _session_and_form(request)
    end_session(_settings(request), request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse("/settings", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/settings")
    return response


# ---- the pages: personal, and shared (a repository's or an installation's)

@dataclass(frozen=True)
class Shared:
    scope: str
    title: str
    base: str  # the page's path
    blurb: str
    github_url: str
    github_label: str
    repo: str | None = None
    repo_id: int | None = None
    installation: int | None = None
    installation_name: str = ""


PERSONAL_BASE = "/settings"


async def _render(request: Request, session: WebSession, shared: Shared | None, *, status: int = 200,
                  message: str | None = None, error: bool = False, typed: pages.Typed | None = None,
                  fresh_token: tuple[str, str] | None = None) -> Response:
    tested = taken(request)
    if message is None:
        message, error = (tested.message, not tested.ok) if tested else _flash(request)
    if typed is None:
        typed = _rotating(request, shared.scope if shared else _personal_scope(session))
    kinds = list(credentials.all_kinds())
    if shared is None:
        scope = _personal_scope(session)
        repos = await admin_repositories(_api(request), session.token)
        installations = await admin_installations(_api(request), session.token, session.login)
        rows = with_test_result(effective(_settings(request), session.user_id, None, None), tested)
        body = pages.home(session.login, session.csrf, stored_rows(_settings(request), scope), kinds, repos,
                          installations,
                          rows, message, error, typed)
    else:
        body = pages.shared_page(shared.title, shared.blurb, shared.base, session.login, session.csrf,
                                 stored_rows(_settings(request), shared.scope), kinds,
                                 _history(_settings(request), shared.scope),
                                 with_test_result(effective(_settings(request), None, shared.repo_id,
                                                            shared.installation, shared.installation_name), tested),
                                 shared.github_url, shared.github_label, message, error, typed,
                                 await _automation_parts(request, session, shared, fresh_token)
                                 + await _review_parts(request, session, shared))
    response = html(body, status)
    forget(request, response)
    return response


@page_handler
async def home(request: Request) -> Response:
    return await _render(request, _session_or_login(request), None)


@page_handler
async def shared_home(request: Request) -> Response:
    session = _session_or_login(request)
    return await _render(request, session, await _shared_scope(request, session))


@page_handler
async def add_key(request: Request) -> Response:
    session, form = await _session_and_form(request)
    shared = await _shared_if_any(request, session)
    scope, back = (shared.scope, shared.base) if shared else (_personal_scope(session), PERSONAL_BASE)
    typed = pages.Typed(str(form.get("kind", "")), str(form.get("value", "")))
    kind = credentials.find_kind(typed.kind)
    if kind is None:
        return await _render(request, session, shared, status=400, message=None,
                             typed=replace(typed, message="Choose a credential from the list."))
    try:
        value = check_shape(kind, typed.value)
    except credentials.InvalidCredential as exc:
        return await _render(request, session, shared, status=400, typed=replace(typed, message=str(exc)))
    current = {info.name: info.fingerprint for info in secrets.listing(scope, _settings(request))}.get(kind.name)
    if current and form.get("replace") != "yes":
        named = with_article(kind.label)
        question = (f"{named[0].upper()}{named[1:]} is already connected here ({current}). Replace it? "
                    "Runs use the new key from then on.")
        return await _render(request, session, shared, typed=replace(typed, confirm=question))
    try:
        credentials.connect(_settings(request), scope, kind, value, actor=session.login)
    except (credentials.InvalidCredential, secrets.SecretError) as exc:
        return await _render(request, session, shared, status=400, typed=replace(typed, message=str(exc)))
    return RedirectResponse(f"{back}?{urlencode({'saved': kind.name})}", status_code=303)


@page_handler
async def delete_key(request: Request) -> Response:
    session, form = await _session_and_form(request)
    shared = await _shared_if_any(request, session)
    scope, back = (shared.scope, shared.base) if shared else (_personal_scope(session), PERSONAL_BASE)
    kind = credentials.find_kind(str(form.get("kind", "")))
    if kind is None or not credentials.disconnect(_settings(request), scope, kind, actor=session.login):
        raise SettingsRefusal(404, pages.error_page("Nothing to delete", "That credential is not connected.",
                                                    back, login=session.login, csrf=session.csrf))
    return RedirectResponse(f"{back}?{urlencode({'deleted': kind.name})}", status_code=303)


@page_handler
async def test_stored_key(request: Request) -> Response:
    """One cheap call to the provider with the stored key; the page it redirects to says what it
    answered (a reload of that page makes no second call)."""
    session, form = await _session_and_form(request)
    shared = await _shared_if_any(request, session)
    scope, back = (shared.scope, shared.base) if shared else (_personal_scope(session), PERSONAL_BASE)
    kind = credentials.find_kind(str(form.get("kind", "")))
    value = secrets.get(scope, kind.name, _settings(request)) if kind else None
    if kind is None or value is None:
        return await _render(request, session, shared, status=404, message="That credential is not connected.",
                             error=True)
    outcome = await try_key(kind, value, _settings(request))
    response = RedirectResponse(back, status_code=303)
    carry(_settings(request), response, KeyTestFlash(back, kind.agent, secrets.fingerprint(value), outcome.ok,
                                 f"{kind.agent}: {outcome.message}"), _secure(request))
    return response


@page_handler
async def decide_learned(request: Request) -> Response:
    """A maintainer approves (as written, or with the wording and folder edited) or discards a
    learned rule candidate of the repository (bot/review/learned.py)."""
    session, form = await _session_and_form(request)
    shared = await _shared_scope(request, session)  # maintain or admin, as for the repository's keys
    action, rule_id = str(form.get("action", "")), str(form.get("id", ""))
    if not rule_id.isdigit() or len(rule_id) > 18 or shared.repo is None:
        raise SettingsRefusal(404, pages.error_page("No such rule", "That learned rule is not here.", shared.base,
                                                    login=session.login, csrf=session.csrf))
    edits = {} if action != learned.APPROVE else {"wording": str(form.get("wording", "")),
                                                   "folder": str(form.get("folder", ""))}
    try:
        with secrets.database(_settings(request)) as db:
            decided = learned.decide(db, shared.repo, int(rule_id), action, session.login, **edits)
    except learned.RuleEditRefused as refused:
        return await _render(request, session, shared, status=400, message=str(refused), error=True)
    if decided is None:
        raise SettingsRefusal(404, pages.error_page("No such rule", "That learned rule is not here.", shared.base,
                                                    login=session.login, csrf=session.csrf))
    if decided.state == learned.APPROVED:  # stored first: whatever GitHub answers, the approval holds
        await _open_rule_pull(request, shared, decided.id, session.login)
    return RedirectResponse(f"{shared.base}?{urlencode({'learned': decided.state})}", status_code=303)


@page_handler
async def retry_learned_pull(request: Request) -> Response:
    """A maintainer asks again for an approved rule's pull request (it failed, or never started)."""
    session, form = await _session_and_form(request)
    shared = await _shared_scope(request, session)  # maintain or admin, as for the approval
    rule_id = str(form.get("id", ""))
    if not rule_id.isdigit() or len(rule_id) > 18 or shared.repo is None:
        raise SettingsRefusal(404, pages.error_page("No such rule", "That learned rule is not here.", shared.base,
                                                    login=session.login, csrf=session.csrf))
    with secrets.database(_settings(request)) as db:
        rule = learned.one(db, shared.repo, int(rule_id))
    if rule is None or rule.state != learned.APPROVED:
        raise SettingsRefusal(404, pages.error_page("No such rule", "That approved rule is not here.", shared.base,
                                                    login=session.login, csrf=session.csrf))
    await _open_rule_pull(request, shared, rule.id, session.login)
    return RedirectResponse(f"{shared.base}?{urlencode({'learned': RETRIED})}", status_code=303)


@page_handler
async def make_fire_token(request: Request) -> Response:
    """A maintainer makes (or rotates) the fire token of one automation that declares `fire` on the
    default branch now; the page shows it this once."""
    session, form = await _session_and_form(request)
    shared = await _shared_scope(request, session)  # maintain or admin, asked of GitHub now
    name = str(form.get("name", ""))
    declared = await read_as_app(_settings(request), str(shared.repo), shared.repo_id, shared.installation)
    if shared.repo is None or not any(a.name == name and a.on.fire is not None for a in declared.automations):
        raise SettingsRefusal(404, pages.error_page("No such automation", "No automation of this repository's "
                                                    "default branch by that name declares `fire`.", shared.base,
                                                    login=session.login, csrf=session.csrf))
    with secrets.database(_settings(request)) as db:
        token = fire_tokens.issue(db, shared.repo, name, repo_id=shared.repo_id, installation_id=shared.installation,
                                  by=session.login)
    return await _render(request, session, shared, message=f"Made a new fire token for {name}.",
                         fresh_token=(name, token))


@page_handler
async def revoke_fire_token(request: Request) -> Response:
    session, form = await _session_and_form(request)
    shared = await _shared_scope(request, session)  # maintain or admin, asked of GitHub now
    name = str(form.get("name", ""))
    with secrets.database(_settings(request)) as db:
        revoked = shared.repo is not None and len(name) <= 63 and fire_tokens.revoke(db, shared.repo, name)
    if not revoked:
        raise SettingsRefusal(404, pages.error_page("No such token", "That automation has no fire token.",
                                                    shared.base, login=session.login, csrf=session.csrf))
    return RedirectResponse(f"{shared.base}?{urlencode({'fire_token': 'revoked'})}", status_code=303)


@page_handler
async def run_automation_now(request: Request) -> Response:
    """A writer (asked of GitHub now) queues one run of an automation that runs in its own issue, as a
    fired run is queued: held to the caps, the writer's hourly cap among them; the form's key makes a
    resent form the same run."""
    session, form = await _session_and_form(request)
    repo, settings = _repo_of_path(request, session), _settings(request)
    if not await can_write(settings.github_api_url, session.token, session.login, repo):
        raise SettingsRefusal(403, pages.error_page("Not allowed", f"Only people who can write to {repo} can run "
                                                    "its automations.", login=session.login, csrf=session.csrf))
    name, back = str(form.get("name", "")), f"/settings/repos/{repo}"
    try:
        key = fire.read_key(str(form.get("key", "")) or None)
    except fire.FireInputError as exc:
        raise SettingsRefusal(400, pages.error_page("Not run", str(exc), back, login=session.login,
                                                    csrf=session.csrf)) from None
    with secrets.database(settings) as db:
        found = fire.runnable(db, repo, name) if len(name) <= 63 else None
        if found is None:
            raise SettingsRefusal(404, pages.error_page("No such automation", "No automation of this repository "
                                                        "by that name runs on a schedule or by `fire`.", back,
                                                        login=session.login, csrf=session.csrf))
        outcome = fire.fire(db, *found, key, "", schedules.queue,
                            account_cap=int(settings.number("BOT_AUTOMATION_ACCOUNT_RUNS_PER_HOUR")),
                            writer=session.login)
    if isinstance(outcome, fire.Refused):
        raise SettingsRefusal(429, pages.error_page("Not run", f"{name} was not run: {outcome.why}.", back,
                                                    login=session.login, csrf=session.csrf))
    return RedirectResponse(f"{back}?{urlencode({'run_now': 'queued'})}", status_code=303)


@page_handler
async def signal_page(request: Request) -> Response:
    """A repository's review signal per agent, for its writers (the repository's own page, with its
    keys and learned rules, is for maintainers)."""
    session = _session_or_login(request)
    repo, settings = _repo_of_path(request, session), _settings(request)
    if not await can_write(settings.github_api_url, session.token, session.login, repo):
        raise SettingsRefusal(403, pages.error_page("Not allowed", f"Only people who can write to {repo} can see "
                                                    "its review signal.", login=session.login, csrf=session.csrf))
    with secrets.database(settings) as db:
        rows, series = review_signal.per_agent(db, repo), signal_series.weekly(db, repo, time.time())
    return html(pages.page(f"Review signal of {repo}", review_page.signal_section(rows, series),
                           login=session.login, csrf=session.csrf))


# ---- helpers

async def _open_rule_pull(request: Request, shared: Shared, rule_id: int, asker: str) -> None:
    """The rule's pull request, opened as the App; its outcome is recorded on the rule, for the page."""
    await learned_pull.open_as_app(_settings(request), str(shared.repo), shared.installation, rule_id, asker)


async def _automation_parts(request: Request, session: WebSession, shared: Shared,
                            fresh: tuple[str, str] | None) -> str:
    """A repository page's automations, read from its default branch as the App (and stored), with
    their fire tokens; an installation's page has none."""
    if shared.repo is None:
        return ""
    settings = _settings(request)
    declared = await read_as_app(settings, shared.repo, shared.repo_id, shared.installation)
    with secrets.database(settings) as db:
        tokens = fire_tokens.listed(db, shared.repo)
        last = automation_runs.last_runs(db, shared.repo, [a.name for a in declared.automations])
    where = automations_page.Where(shared.base, session.csrf, own_base(settings, request.scope.get("server")),
                                   settings.server_url, shared.repo)
    return automations_page.section(declared, tokens, last, where, fresh)


async def _review_parts(request: Request, session: WebSession, shared: Shared) -> str:
    """A repository page's learned rules (their pull requests' states asked of GitHub again) and
    review signal; an installation's page has none."""
    if shared.repo is None:
        return ""
    await learned_pull.refresh_as_app(_settings(request), shared.repo, shared.installation)
    with secrets.database(_settings(request)) as db:
        rules, rows = learned.listed(db, shared.repo), review_signal.per_agent(db, shared.repo)
        series = signal_series.weekly(db, shared.repo, time.time())
    return (review_page.learned_section(rules, shared.base, session.csrf, _settings(request).oauth_url, shared.repo)
            + review_page.signal_section(rows, series) + review_page.signal_link(shared.base))


def _personal_scope(session: WebSession) -> str:
    return secrets.scope_for("user", session.user_id)


def _session_or_login(request: Request) -> WebSession:
    session = load_session(_settings(request), request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise SettingsRefusal(200 if request.url.path == "/settings" else 401, pages.login_page())
    request.state.session = session
    return session


async def _session_and_form(request: Request) -> tuple[WebSession, FormData]:
    session = load_session(_settings(request), request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise SettingsRefusal(401, pages.login_page("Your session has ended. Sign in again."))
    form = await request.form()
    if not hmac.compare_digest(str(form.get("csrf", "")).encode(), session.csrf.encode()):
        raise SettingsRefusal(403, pages.error_page("Form expired", "This form is stale or did not come from "
                                                    "this page. Reload the settings page and try again.",
                                                    login=session.login, csrf=session.csrf))
    request.state.session = session
    if "value" in form:
        request.state.typed = pages.Typed(str(form.get("kind", "")), str(form.get("value", "")))
    return session, form


async def _shared_if_any(request: Request, session: WebSession) -> Shared | None:
    if "installation" in request.path_params or "owner" in request.path_params:
        return await _shared_scope(request, session)
    return None


async def _shared_scope(request: Request, session: WebSession) -> Shared:
    """The repository or installation of the path, once GitHub confirms the user administers it."""
    if "installation" in request.path_params:
        return await _administered_installation(_settings(request), request.path_params["installation"], session)
    repo, settings = _repo_of_path(request, session), _settings(request)
    if not await can_administer(settings.github_api_url, session.token, session.login, repo):
        raise SettingsRefusal(403, pages.error_page("Not allowed", f"Only admins and maintainers of {repo} can "
                                                    "manage its credentials.",
                                                    login=session.login, csrf=session.csrf))
    installation = await installation_of(settings.github_api_url, session.token, repo)
    repo_id = await repository_id(settings.github_api_url, session.token, repo)
    return Shared(secrets.scope_for("repo", repo_id), repo, f"/settings/repos/{repo}",
                  f"Keys for {repo} serve every permitted requester there without a key of their own.",
                  f"{settings.oauth_url}/{repo}", repo, repo=repo, repo_id=repo_id,
                  installation=installation["id"] if installation else None,
                  installation_name=installation["account"] if installation else "")


def _repo_of_path(request: Request, session: WebSession) -> str:
    """The path's OWNER/REPO, once both match the repository-name pattern (404 otherwise)."""
    owner, name = request.path_params["owner"], request.path_params["repo"]
    if not (_NAME.match(owner) and _NAME.match(name)):
        raise SettingsRefusal(404, pages.error_page("No such repository", "That is not a repository name.",
                                                    login=session.login, csrf=session.csrf))
    return f"{owner}/{name}"


async def _administered_installation(settings: Settings, installation_id: int, session: WebSession) -> Shared:
    installation = await administered_installation(settings.github_api_url, session.token, session.login,
                                                   installation_id)
    if installation is None:
        raise SettingsRefusal(403, pages.error_page("Not allowed", "Only the account's owner (or an organization "
                                                    "owner) can manage the credentials of this installation.",
                                                    login=session.login, csrf=session.csrf))
    account = installation["account"]
    return Shared(secrets.scope_for("installation", installation_id), f"{account} (all repositories)",
                  f"/settings/installations/{installation_id}",
                  f"Keys for {account} serve every repository of this installation that has no "
                  "repository key, for requesters without a key of their own.",
                  f"{settings.oauth_url}/{account}", account, installation=installation_id, installation_name=account)


def _rotating(request: Request, scope: str) -> pages.Typed | None:
    """`?rotate=<kind>`: the add form chooses that kind and will replace the stored key."""
    kind = credentials.find_kind(request.query_params.get("rotate", ""))
    if kind is None:
        return None
    current = {info.name: info.fingerprint for info in secrets.listing(scope, _settings(request))}.get(kind.name)
    if current is None:
        return None
    return pages.Typed(kind.name, confirm=f"Rotate: paste the new {kind.label}; it replaces {current} "
                                          "when you save.")


def _flash(request: Request) -> tuple[str | None, bool]:
    """The one-line outcome of the last form, from the redirect's query (labels only, no values)."""
    query = request.query_params
    if query.get("learned") in LEARNED_WORDS:
        return LEARNED_WORDS[query["learned"]], False
    if query.get("run_now") == "queued":
        return "Queued the run: it answers in the automation's issue, as a fired run does.", False
    if query.get("fire_token") == "revoked":
        return "Revoked the fire token: a call with it is refused from now on.", False
    for key, verb in (("saved", "Saved"), ("deleted", "Deleted")):
        kind = credentials.find_kind(query.get(key, ""))
        if kind:
            return f"{verb} {kind.agent}: {kind.label}.", False
    return None, False


def _history(settings: Settings, scope: str, limit: int = 20) -> list[dict]:
    """The latest set/delete audit rows of a scope, newest first."""
    rows = secrets.audit_log(scope, settings=settings)[-limit:][::-1]
    return [{"at": when(r["at"]), "actor": r["actor"], "action": r["action"], "fingerprint": r["fingerprint"],
             "label": getattr(credentials.find_kind(r["name"]), "label", r["name"])} for r in rows]


RETRIED = "retried"
LEARNED_WORDS = {learned.APPROVED: "Approved: the rule applies to every later review. Its pull request, which "
                                   "adds it to REVIEW.md, is below.",
                 learned.DISCARDED: "Discarded: that kind of finding will not be proposed again.",
                 RETRIED: "Tried the rule's pull request again: the outcome is below."}
REPO = "/settings/repos/{owner}/{repo}"
INSTALLATION = "/settings/installations/{installation:int}"
routes = [
    Route("/settings", home, methods=["GET"], name="settings"),
    Route("/settings/login", login, methods=["GET"], name="settings_login"),
    Route("/settings/callback", callback, methods=["GET"], name="settings_callback"),
    Route("/settings/logout", logout, methods=["POST"], name="settings_logout"),
    Route("/settings/keys", add_key, methods=["POST"], name="settings_add_key"),
    Route("/settings/keys/delete", delete_key, methods=["POST"], name="settings_delete_key"),
    Route("/settings/keys/test", test_stored_key, methods=["POST"], name="settings_test_key"),
    Route(REPO, shared_home, methods=["GET"], name="settings_repo"),
    Route(f"{REPO}/keys", add_key, methods=["POST"], name="settings_repo_add"),
    Route(f"{REPO}/keys/delete", delete_key, methods=["POST"], name="settings_repo_delete"),
    Route(f"{REPO}/keys/test", test_stored_key, methods=["POST"], name="settings_repo_test"),
    Route(f"{REPO}/learned", decide_learned, methods=["POST"], name="settings_repo_learned"),
    Route(f"{REPO}/learned/pull-request", retry_learned_pull, methods=["POST"], name="settings_repo_learned_pull"),
    Route(f"{REPO}/signal", signal_page, methods=["GET"], name="settings_repo_signal"),
    Route(f"{REPO}/automations/token", make_fire_token, methods=["POST"], name="settings_repo_fire_token"),
    Route(f"{REPO}/automations/token/revoke", revoke_fire_token, methods=["POST"], name="settings_repo_fire_revoke"),
    Route(f"{REPO}/automations/run", run_automation_now, methods=["POST"], name="settings_repo_run_now"),
    Route(INSTALLATION, shared_home, methods=["GET"], name="settings_installation"),
    Route(f"{INSTALLATION}/keys", add_key, methods=["POST"], name="settings_installation_add"),
    Route(f"{INSTALLATION}/keys/delete", delete_key, methods=["POST"], name="settings_installation_delete"),
    Route(f"{INSTALLATION}/keys/test", test_stored_key, methods=["POST"], name="settings_installation_test"),
]
