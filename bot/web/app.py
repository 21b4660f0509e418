"""The Starlette app: every route composed here, workers started and stopped with it."""
from __future__ import annotations

import contextlib
import html
import logging

from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from bot import config
from bot.service import retention, store
from bot.service.worker import WorkerPool
from bot.settings import routes as settings
from bot.web import intake
from bot.web import run_page

log = logging.getLogger("bot.web.app")


async def home(request: Request) -> HTMLResponse:
    missing = request.app.state.missing_config
    if missing:
        items = "".join(f"<li>{html.escape(m)}</li>" for m in missing)
        state = (f"<p><strong>Not configured yet</strong>: webhooks are answered 503 until these are set "
                 f"(environment variables, then restart):</p><ul>{items}</ul>")
    else:
        counts = {row["status"]: row["n"] for row in request.app.state.db.query(
            "SELECT status, COUNT(*) AS n FROM jobs GROUP BY status")}
        state = (f"<p>Ready. Mention <code>@{html.escape(config.handle())}</code> on an issue or pull "
                 f"request. Jobs: {counts.get('running', 0)} running, {counts.get('queued', 0)} queued, "
                 f"{counts.get('done', 0)} done, {counts.get('failed', 0)} failed.</p>")
    return HTMLResponse(f"<!doctype html><html lang=en><meta charset=utf-8><title>github-agent-bot</title>"
                        f"<h1>github-agent-bot</h1>{state}<p>Webhook URL: <code>/webhook</code>. "
                        "Health: <code>/healthz</code>. "
                        "Keys and subscriptions: <a href=/settings>settings</a>.</p></html>")


async def healthz(request: Request) -> JSONResponse:
    request.app.state.db.execute("SELECT 1")
    pool = getattr(request.app.state, "pool", None)
    return JSONResponse({"ok": True, "configured": not request.app.state.missing_config,
                         "running_jobs": len(pool.running) if pool else 0})


def _settings_routes() -> list:
    return list(settings.routes)


def _hold_bridge_streams(hold: bool) -> None:
    """sse_starlette (under the MCP SDK) drains every SSE stream of the event loop as soon as the
    process's uvicorn starts shutting down, which would cut the in-process bridges' tool calls at
    SIGTERM. Running jobs get their grace period first; the streams close after it."""
    if hold:
        AppStatus.disable_automatic_graceful_drain()
    else:
        AppStatus.should_exit = True


def create_app(start_workers: bool = True) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        _hold_bridge_streams(True)
        app.state.db = store.connect()
        app.state.missing_config = config.missing_app_config()
        app.state.pool = None
        for problem in app.state.missing_config:
            log.warning("not configured: %s", problem)
        if start_workers and not app.state.missing_config and config.workers() > 0:  # 0: intake only
            app.state.pool = WorkerPool(app.state.db)
            await app.state.pool.start()
        sweeper = retention.Sweeper(app.state.db).start()
        yield
        await sweeper.stop()
        if app.state.pool is not None:
            await app.state.pool.stop(config.value("BOT_SHUTDOWN_GRACE"))
        _hold_bridge_streams(False)

    routes = [Route("/", home), Route("/healthz", healthz),
              Route("/webhook", intake.webhook, methods=["POST"]), *_settings_routes(), *run_page.routes]
    return Starlette(routes=routes, lifespan=lifespan)
