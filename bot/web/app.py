"""The Starlette app: every route composed here, workers started and stopped with it."""
from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
from collections.abc import AsyncIterator

from sse_starlette.sse import AppStatus
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from bot.config import Settings
from bot.service import retention, store
from bot.service.checkpoint import Checkpoints
from bot.service.wakeup import Presence
from bot.service.worker import WorkerPool
from bot.settings import first_run, manifest, setup_code
from bot.settings import routes as settings
from bot.settings.address import listening_base
from bot.web import fire_route, health, intake, run_page
from bot.web import home as home_page
from bot.web.host_check import HostCheck

log = logging.getLogger("bot.web.app")
# A young collection runs once this many more containers were made than freed. A delivery makes
# about 60 that die with its request; at the default 700, the 16 in flight crossed it every dozen
# deliveries and each collection walked what they held (about 7 µs per delivery, bench intake).
# Garbage in a cycle still goes, later: at most this many objects wait for it.
YOUNG_COLLECTION_AFTER = 10_000


async def home(request: Request) -> HTMLResponse:
    return await home_page.home(request)


async def healthz(request: Request) -> JSONResponse:
    request.app.state.db.execute("SELECT 1")
    pool = getattr(request.app.state, "pool", None)
    return JSONResponse({"ok": True, "configured": not request.app.state.missing_config,
                         "running_jobs": len(pool.running) if pool else 0})


def _settings_routes() -> list[Route]:
    return list(settings.routes) + list(first_run.routes)


def _hold_bridge_streams(hold: bool) -> None:
    """sse_starlette (under the MCP SDK) drains every SSE stream of the event loop as soon as the
    process's uvicorn starts shutting down, which would cut the in-process bridges' tool calls at
    SIGTERM. Running jobs get their grace period first; the streams close after it."""
    if hold:
        AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]  # sse_starlette: untyped
    else:
        AppStatus.should_exit = True


def _open_setup(app: Starlette, settings: Settings, address: str | None) -> None:
    """No App from any source: a one-time setup code, in the log only, opens the manifest flow."""
    app.state.setup_code = None
    if settings.identity_source is None:
        app.state.setup_code = setup_code.new_code()
        base = (settings.text("BOT_PUBLIC_URL") or address or "").rstrip("/") or listening_base(
            settings.word("BOT_HOST"), settings.whole("BOT_PORT"))
        log.warning("first run: open %s/?code=%s to create the GitHub App (or set GITHUB_APP_ID, "
                    "GITHUB_PRIVATE_KEY_PATH and GITHUB_WEBHOOK_SECRET and start again)", base, app.state.setup_code)


def create_app(start_workers: bool = True, address: str | None = None, settings: Settings | None = None) -> Starlette:
    """`address`: the URL the server listens on (`bot serve` says it), for the first run's log line.
    `settings`: the entry point's; without them the app reads the environment (and the stored App)
    once, when it starts."""
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # an App set in part is refused here (PartialIdentity), never "not configured"
        current = app.state.settings = settings or manifest.load_settings(os.environ)
        _hold_bridge_streams(True)
        app.state.start_workers = start_workers
        app.state.db = store.connect(settings=current)
        checkpoints = Checkpoints.of(app.state.db)  # SQLite: copied back on a thread, not by the loop's commits
        app.state.missing_config = current.missing_app_config()
        app.state.pool = None
        for problem in app.state.missing_config if current.identity_source else ():  # first run: one line below
            log.warning("not configured: %s", problem)
        _open_setup(app, current, address)
        if start_workers and not app.state.missing_config and current.workers > 0:  # 0: intake only
            app.state.pool = WorkerPool(app.state.db, current)
            await app.state.pool.start()
        app.state.presence = None
        if start_workers and app.state.pool is None:  # `bot serve` without workers: still seen running
            app.state.presence = Presence(app.state.db)
            app.state.presence.start()
        # bot gc, every BOT_GC_INTERVAL, on a thread of its own
        sweeper = retention.Sweeper(current.number("BOT_GC_INTERVAL"), retention.Policy.from_settings(current),
                                    current.data_dir, lambda: store.connect(settings=current)).start()
        metrics_listener = await health.start_metrics_listener(app.state.db, current)
        # What is alive now lives as long as the service: out of the collector's reach, each full
        # collection (one every few thousand deliveries, more during a flood) walks only what the
        # requests made, not every module, class and setting (90 ms -> a few ms in `bot serve`).
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(YOUNG_COLLECTION_AFTER, *thresholds[1:])
        yield
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        if metrics_listener is not None:
            await metrics_listener.stop()
        await sweeper.stop()
        if app.state.pool is not None:
            await app.state.pool.stop(current.number("BOT_SHUTDOWN_GRACE"))
        if app.state.presence is not None:
            await app.state.presence.stop()
        if checkpoints is not None:
            await asyncio.to_thread(checkpoints.stop)
        _hold_bridge_streams(False)

    routes = [Route("/", home), Route("/healthz", healthz), Route("/readyz", health.readyz),
              Route("/metrics", health.metrics_on_main_port),
              Route("/webhook", intake.webhook, methods=["POST"]), *fire_route.routes, *_settings_routes(),
              *run_page.routes]
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(HostCheck)],
                     exception_handlers={404: home_page.not_found})
