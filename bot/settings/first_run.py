"""The pages of the GitHub App manifest flow (bot/settings/manifest.py), offered by `/` while no App
identity exists from any source (environment or stored) and refused once one does.

    GET /setup/github-app?owner=personal|organization&org=…&name=…&setup_code=…
                                            what GitHub will be sent, and the button that posts it there
    GET /setup/github-app/callback?code=…&state=…   GitHub's redirect: convert, store

Only the operator can start it: it needs the one-time setup code `bot serve` printed in its log
(bot/settings/setup_code.py). The `state` is random and bound to that code, also kept in a signed
one-hour cookie, and both must match on the way back: a code from someone else's browser, or from a
setup started under an earlier code, is never converted here. A code creates one App: it is taken
while GitHub converts (given back only when GitHub refused), and a stored App is never replaced.
The manifest's URLs come from BOT_PUBLIC_URL or the address the service listens on, never a header.
"""
from __future__ import annotations

import hmac
import json
import logging
import re
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from bot.config import Settings
from bot.service.worker import WorkerPool
from bot.settings import manifest, setup_code
from bot.settings.address import own_base
from bot.settings.pages import esc, notice, page
from bot.settings.session import sign, unsign

log = logging.getLogger("bot.settings.first_run")
STATE_COOKIE = "bot_manifest_state"
STATE_TTL = 3600  # GitHub's manifest codes live for one hour
# GitHub's logins: 1 to 39 characters, no leading, trailing or double dash
_ORG = re.compile(r"^(?=.{1,39}$)[A-Za-z0-9](?:-?[A-Za-z0-9])*$")
_APP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,33}$")


def _headers(web: str) -> dict[str, str]:
    """`web`: GitHub's web host (the settings' oauth_url), where the manifest form posts."""
    return {"Content-Security-Policy": f"default-src 'none'; style-src 'unsafe-inline'; form-action 'self' {web}; "
                                       "frame-ancestors 'none'; base-uri 'none'",
            "Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}


def _html(settings: Settings, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=_headers(settings.oauth_url))


def _public_base(request: Request) -> str:
    return own_base(_settings(request), request.scope.get("server"))


def _settings(request: Request) -> Settings:
    found: Settings = request.app.state.settings
    return found


@dataclass(frozen=True)
class Typed:
    """What the person chose in the create-the-App form, kept when it is refused."""

    owner: str = "personal"
    org: str = ""
    name: str = ""


def loopback_warning(base: str) -> str:
    """GitHub cannot reach a loopback address: said on the form and again before going to GitHub."""
    if not re.match(r"^https?://(127\.|localhost|\[::1\])", base):
        return ""
    return ("<p class=muted>GitHub cannot deliver webhooks to this address; set <code>BOT_PUBLIC_URL</code> "
            "to a public one (a tunnel will do) first, or change the Webhook URL in the App later.</p>")


def create_app_offer(base: str, handle: str, code: str = "", typed: Typed | None = None,
                     heading: bool = True) -> str:
    """The form on `/`: for whom to create the App, its name, and the setup code (typed, or carried
    from the link of the log). `heading`: False where the page's own title already says it."""
    typed = typed or Typed(name=manifest.suggested_name(handle))
    org_checked = typed.owner == "organization"
    return (('<h2>Create the GitHub App</h2>' if heading else "") +
            "<p>GitHub fills in the permissions, events, webhook URL and "
            "callback; you confirm on GitHub and this bot stores the App's id, private key, webhook secret "
            "and OAuth credentials, encrypted in its data dir.</p>" + loopback_warning(base) +
            '<form method="get" action="/setup/github-app"><fieldset><legend>Owner of the App</legend>'
            f'<label><input type="radio" name="owner" value="personal"{"" if org_checked else " checked"} '
            'style="width:auto"> My personal account</label>'
            f'<label><input type="radio" name="owner" value="organization"{" checked" if org_checked else ""} '
            'style="width:auto"> An organisation</label>'
            '<label for=org>Organisation (if so)</label>'
            f'<input id=org name="org" autocomplete="off" value="{esc(typed.org)}">'
            f'<label for=name>App name</label><input id=name name="name" value="{esc(typed.name)}">'
            + _code_field(code) +
            '<p><button type="submit">Create the GitHub App</button></p></fieldset></form>')


def organisation_problem(organization: str) -> str:
    """Why this is not an organisation's login, and what to enter instead."""
    what = (f"“{organization}” is not an organisation's login." if organization
            else "The organisation's login is missing.")
    return (f"{what} Enter the name from its GitHub address, github.com/<login>: letters, digits and "
            "single dashes, e.g. octo-org.")


def _code_field(code: str) -> str:
    if code:
        return f'<input type="hidden" name="setup_code" value="{esc(code)}">'
    return ('<label for=setup_code>Setup code (printed in the service\'s log when it started)</label>'
            '<input id=setup_code name="setup_code" autocomplete="off" required>')


def current_code(request: Request) -> str | None:
    """The setup code of this start, while setup is open."""
    return getattr(request.app.state, "setup_code", None)


async def start(request: Request) -> Response:
    settings = _settings(request)
    if settings.identity_source:
        return _already(settings)
    query = request.query_params
    code = query.get("setup_code", "")
    if not setup_code.matches(code, current_code(request)):
        log.warning("first run: a setup page was refused: it needs the setup code this start printed above")
        return _refused(request, "Creating the App needs the setup code that the service printed in its "
                                 "log when it started.", "", _typed(query), 403)
    typed = _typed(query)
    organization = typed.org if typed.owner == "organization" else None
    name = typed.name or manifest.suggested_name(settings.handle)
    if organization is not None and not _ORG.match(organization):
        return _refused(request, organisation_problem(organization), code, typed)
    if not _APP_NAME.match(name):
        return _refused(request, "An App name has up to 34 letters, digits, spaces, dots, dashes or "
                                 "underscores, e.g. my-agent-bot.", code, typed)
    state = setup_code.bound_state(code)
    body = loopback_warning(_public_base(request)) + _confirm(
        manifest.manifest(_public_base(request), name),
        manifest.github_form_action(settings.oauth_url, state, organization), organization)
    response = _html(settings, page("Create the GitHub App", body))
    response.set_cookie(STATE_COOKIE, sign(settings, {"state": state}, STATE_TTL), max_age=STATE_TTL, path="/setup",
                        httponly=True, samesite="lax", secure=_public_base(request).startswith("https:"))
    return response


def _typed(query: QueryParams) -> Typed:
    owner = "organization" if query.get("owner") == "organization" else "personal"
    return Typed(owner, query.get("org", "").strip(), query.get("name", "").strip())


def _refused(request: Request, message: str, code: str, typed: Typed, status: int = 400) -> HTMLResponse:
    settings = _settings(request)
    return _html(settings, page("Create the GitHub App", notice(message, True) +
                                create_app_offer(_public_base(request), settings.handle, code, typed,
                                                 heading=False)), status)


def _confirm(app: dict, action: str, organization: str | None) -> str:
    owner = f"the organisation <strong>{esc(organization)}</strong>" if organization else "your personal account"
    permissions = "".join(f"<li>{esc(k)}: {esc(v)}</li>" for k, v in app["default_permissions"].items())
    events = ", ".join(esc(e) for e in app["default_events"])
    return (f"<p>GitHub will show a new App <strong>{esc(app['name'])}</strong> for {owner}, filled in with:</p>"
            f"<ul><li>Webhook URL: <code>{esc(app['hook_attributes']['url'])}</code></li>"
            f"<li>Callback URL (settings sign-in): <code>{esc(app['callback_urls'][0])}</code></li>"
            f"<li>Back to this bot after creating: <code>{esc(app['redirect_url'])}</code></li>"
            f"<li>Events: {events}</li><li>Permissions:<ul>{permissions}</ul></li></ul>"
            f'<form method="post" action="{esc(action)}">'
            f'<input type="hidden" name="manifest" value="{esc(json.dumps(app))}">'
            '<p><button type="submit">Continue on GitHub</button> <a href="/">Cancel</a></p></form>')


async def callback(request: Request) -> Response:
    settings = _settings(request)
    if settings.identity_source:
        return _already(settings)
    expected = str((unsign(settings, request.cookies.get(STATE_COOKIE)) or {}).get("state", ""))
    given = request.query_params.get("state", "")
    if not expected or not hmac.compare_digest(expected.encode(), given.encode()):
        return _failed(settings, "This answer from GitHub does not belong to a setup started in this browser "
                       "(state mismatch). Start again from the start page.")
    code_now = current_code(request)
    if not setup_code.carries(given, code_now):
        return _failed(settings, "This setup was not started with this service's setup code (it changes at "
                       "every start). Start again from the start page.", 403)
    code = request.query_params.get("code", "")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", code):
        return _failed(settings, "GitHub's answer carries no valid code. Start again from the start page.")
    request.app.state.setup_code = None  # taken: one App per setup code, even with two answers at once
    try:
        app = await manifest.convert(settings.github_api_url, code)
        manifest.store(app, settings)
    except manifest.ManifestFailed as exc:
        request.app.state.setup_code = code_now  # nothing was created: the operator may try again
        return _failed(settings, str(exc), 502)
    except manifest.AlreadyStored:
        return _already(settings)
    await activate(request.app)
    log.info("first run: GitHub App %s (id %s, @%s) created and stored in %s; webhooks are accepted from now on",
             app.get("name") or app.get("slug"), app.get("id"), app.get("slug"), settings.data_dir / manifest.FILE)
    return _created(settings, app)


def _created(settings: Settings, app: dict) -> HTMLResponse:
    install = f"{str(app.get('html_url') or '').rstrip('/')}/installations/new"
    body = (notice(f"The GitHub App {app.get('name') or app.get('slug')} is created; this bot uses it from now on.") +
            f'<p>Next: <a href="{esc(install)}" rel="noreferrer">install it on your repositories</a>, then '
            f'mention <code>@{esc(app.get("slug", ""))}</code> on an issue.</p><p><a href="/">Start page</a></p>')
    response = _html(settings, page("GitHub App created", body))
    response.delete_cookie(STATE_COOKIE, path="/setup")
    return response


async def activate(app: Starlette) -> None:
    """Use the stored App at once: webhooks are accepted and, in `bot serve`, the workers start."""
    state = app.state
    state.setup_code = None
    settings = state.settings = state.settings.with_stored_app(manifest.stored_app(state.settings))
    state.missing_config = settings.missing_app_config()
    if (not state.missing_config and getattr(state, "pool", None) is None
            and getattr(state, "start_workers", False) and settings.workers > 0):
        state.pool = WorkerPool(state.db, settings)
        await state.pool.start()
        if getattr(state, "presence", None) is not None:  # the pool's heartbeat stands for the service now
            await state.presence.stop()
            state.presence = None


def _already(settings: Settings) -> HTMLResponse:
    return _html(settings, page("Already configured", notice(
        "This bot already has a GitHub App. To start over, remove its variables (or the data dir's "
        "github-app.sealed) and restart.", True) + '<p><a href="/">Start page</a></p>'), 409)


def _failed(settings: Settings, message: str, status: int = 400) -> HTMLResponse:
    log.warning("first run: the GitHub App was not created: %s", message)
    return _html(settings, page("The GitHub App was not created", notice(message, True) +
                                '<p><a href="/">Start page</a></p>'), status)


routes = [
    Route("/setup/github-app", start, methods=["GET"], name="setup_github_app"),
    Route(manifest.CALLBACK_PATH, callback, methods=["GET"], name="setup_github_app_callback"),
]
