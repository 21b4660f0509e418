"""`/`: the first page an operator sees, in the settings pages' layout.

Not configured: what is missing, and "Create the GitHub App" (the manifest flow, which needs the
setup code of the service's log; its link `/?code=…` fills it in). Configured:
"Ready" only once GitHub accepted the App id and key (bot/settings/app_check.py), the full webhook
URL to paste into GitHub, and the jobs, counted as `/healthz` counts them.
"""
from __future__ import annotations

import time

from starlette.datastructures import State
from starlette.requests import Request
from starlette.responses import HTMLResponse

from bot.config import Settings
from bot.settings import first_run, setup_code
from bot.settings.address import own_base
from bot.settings.app_check import AppCheck, verify_app
from bot.settings.pages import esc, page
from bot.settings.routes import SECURITY_HEADERS


def public_base(request: Request) -> str:
    """BOT_PUBLIC_URL, else the address this service listens on: never the request's Host."""
    return own_base(request.app.state.settings, request.scope.get("server"))


def job_counts(state: State) -> dict[str, int]:
    """Running: this process's workers, the number `/healthz` reports; the rest from the jobs table
    (a running row whose lease ran out is waiting to be claimed again, so it counts as queued)."""
    rows = state.db.query("SELECT status, COUNT(*) AS n FROM jobs WHERE status <> 'running' GROUP BY status")
    counts = {row["status"]: int(row["n"]) for row in rows}
    stale = state.db.query("SELECT COUNT(*) AS n FROM jobs WHERE status = 'running' AND lease_expires < ?",
                           [time.time()])[0]["n"]
    pool = getattr(state, "pool", None)
    return {"running": len(pool.running) if pool else 0, "queued": counts.get("queued", 0) + int(stale),
            "done": counts.get("done", 0), "failed": counts.get("failed", 0),
            "cancelled": counts.get("cancelled", 0)}


async def home(request: Request) -> HTMLResponse:
    state = request.app.state
    settings: Settings = state.settings
    base = public_base(request)
    if state.missing_config:
        offer = settings.identity_source is None
        status = _not_configured(state.missing_config, base, _code_of_link(request), settings.handle, offer)
    else:
        check = await verify_app(settings)
        status = _ready(check, settings.handle) if check.ok else (
            f'<p class="notice error" role="alert"><strong>Not ready</strong>: {esc(check.message)}</p>')
    body = (status + _webhook(base, settings.is_set("BOT_PUBLIC_URL")) + _jobs(job_counts(state)) +
            '<h2>More</h2><ul><li><a href="/settings">Settings</a>: connect keys and subscriptions '
            '(yours, a repository\'s, an organisation\'s)</li><li><a href="/healthz">/healthz</a></li></ul>')
    return HTMLResponse(page("Status", body), headers=SECURITY_HEADERS)


async def not_found(request: Request, exc: Exception) -> HTMLResponse:
    """Any path no route serves: the site's page, naming the path (escaped) and the way back."""
    body = (f"<p>There is no page at <code>{esc(request.url.path)}</code> on this bot.</p>"
            '<p><a href="/">Start page</a> · <a href="/settings">Settings</a></p>')
    return HTMLResponse(page("Page not found", body), status_code=404, headers=SECURITY_HEADERS)


def _ready(check: AppCheck, handle: str) -> str:
    app = (f' (<a href="{esc(check.html_url)}" rel="noreferrer">{esc(check.name)}</a>)'
           if check.html_url else "")
    return (f'<p class="notice" role="status"><strong>Ready</strong>{app}. Mention '
            f"<code>@{esc(handle)}</code> on an issue or pull request.</p>")


def _code_of_link(request: Request) -> str:
    """The setup code of the log's link (`/?code=…`), carried into the form only when it is this start's."""
    given = request.query_params.get("code", "")
    return given if setup_code.matches(given, first_run.current_code(request)) else ""


def _not_configured(missing: list[str], base: str, code: str, handle: str, offer_app: bool) -> str:
    items = "".join(f"<li>{esc(m)}</li>" for m in missing)
    offer = first_run.create_app_offer(base, handle, code) if offer_app else ""
    return (f'<p class="notice error" role="alert"><strong>Not configured yet</strong>: webhooks are '
            f"answered 503 until the GitHub App is set up.</p><ul>{items}</ul>{offer}"
            "<p>Or set the variables by hand (README, “Create and configure the GitHub App”) and restart.</p>")


def _webhook(base: str, public: bool) -> str:
    note = ("" if public else
            " <span class=muted>(the address this service listens on; set <code>BOT_PUBLIC_URL</code> to "
            "the public one)</span>")
    return (f"<h2>Webhook</h2><p>Paste into the App's <em>Webhook URL</em>: <code>{esc(base)}/webhook</code>"
            f"{note}</p>")


def _jobs(counts: dict[str, int]) -> str:
    cells = "".join(f'<tr><th scope=row>{esc(name)}</th><td data-label="Jobs">{n}</td></tr>'
                    for name, n in counts.items())
    return (f"<h2>Jobs</h2><table><caption>Jobs by state</caption><thead><tr><th scope=col>State</th>"
            f"<th scope=col>Jobs</th></tr></thead><tbody>{cells}</tbody></table>")
