"""`/readyz` (it can do its work) and Prometheus `/metrics`.

/readyz is ready when the database answers a query of the jobs table, the GitHub App is verified
(GitHub accepted its id and key, bot.settings.app_check), and the workers' claim loop has looked
for work recently (an intake replica with BOT_WORKERS=0 has none to look); its job counts are the
ones the page at `/` shows (bot.web.home.job_counts).
/metrics is never on the public port by default: it is served on a separate listener
(BOT_METRICS_ADDR, e.g. 127.0.0.1:9464) and, when BOT_METRICS_TOKEN is set, on the main port to a
bearer of that token only; otherwise the main port answers 404.
"""
from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Iterator
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from adapters import base as adapters
from bot import metrics
from bot.config import Settings
from bot.loopback import LoopbackServer
from bot.review import signal as review_signal
from bot.review import signal_series
from bot.settings.app_check import verify_app
from bot.web.home import job_counts
from bot.web.metrics_host import MetricsHostCheck

log = logging.getLogger("bot.web.health")
INTAKE_ONLY = "none here (BOT_WORKERS=0: intake only)"
CLAIMING_WITHIN_S = 30.0  # a claim loop silent for longer is stuck (it looks every half second)


async def readiness(app: Any) -> tuple[bool, dict[str, Any]]:
    checks: dict[str, Any] = {}
    try:
        checks["jobs"] = job_counts(app.state)
        checks["database"] = "ok"
    except Exception as exc:  # any failure to read the queue means not ready
        checks["database"] = f"unreachable: {type(exc).__name__}"
    if app.state.missing_config:
        checks["app"] = "not configured: " + "; ".join(app.state.missing_config)
    else:
        check = await verify_app(app.state.settings)
        checks["app"] = "verified" if check.ok else f"not verified: {check.message}"
    pool = getattr(app.state, "pool", None)
    last = getattr(pool, "last_claim_at", None)
    if pool is None and app.state.settings.workers == 0:  # an intake replica: workers run elsewhere
        checks["workers"] = INTAKE_ONLY
    elif pool is None:
        checks["workers"] = "not started"
    elif last is None or time.monotonic() - last > CLAIMING_WITHIN_S:
        checks["workers"] = "not claiming"
    else:
        checks["workers"] = "claiming"
    ready = (checks["database"] == "ok" and checks["app"] == "verified"
             and checks["workers"] in ("claiming", INTAKE_ONLY))
    return ready, checks


async def readyz(request: Request) -> JSONResponse:
    ready, checks = await readiness(request.app)
    return JSONResponse({"ready": ready, **checks}, status_code=200 if ready else 503)


class StoredState:
    """Gauges read from the database at scrape time: they agree with `/` and survive restarts."""

    def __init__(self, db: Any):
        self.db = db

    def describe(self) -> list[Metric]:
        return []  # collected at scrape time only

    def collect(self) -> Iterator[Metric]:
        for part in (self._queue, self._jobs, self._spend, self._review_signal):
            try:
                yield from list(part())
            except Exception as exc:  # a scrape must not fail because one table is missing or busy
                log.warning("metrics from the database failed: %s: %s", type(exc).__name__, exc)

    def _queue(self) -> Iterator[Metric]:
        now = time.time()
        depth = GaugeMetricFamily("bot_queue_depth", "Jobs waiting to be claimed.", labels=["kind"])
        oldest = GaugeMetricFamily("bot_queue_oldest_age_seconds", "Age of the oldest queued job.")
        age = 0.0
        for row in self.db.query("SELECT kind, COUNT(*) AS n, MIN(created_at) AS first FROM jobs "
                                 "WHERE status = 'queued' GROUP BY kind"):
            depth.add_metric([row["kind"]], row["n"])
            age = max(age, now - row["first"])
        oldest.add_metric([], age)
        yield depth
        yield oldest

    def _jobs(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("bot_jobs", "Stored jobs by status and agent (reply jobs: agent \"-\").",
                                   labels=["status", "agent"])
        agents = set(adapters.names())
        agent_of = ("json_extract(spec, '$.command.agent')" if getattr(self.db, "dialect", None) is None
                    or self.db.dialect.name == "sqlite" else "(spec::jsonb -> 'command' ->> 'agent')")
        for row in self.db.query(f"SELECT status, kind, {agent_of} AS agent, COUNT(*) AS n FROM jobs "
                                 "GROUP BY status, kind, agent"):
            agent = row["agent"] if row["kind"] == "episode" and row["agent"] in agents else "-"
            if row["kind"] == "episode" and row["agent"] is None:
                agent = "default"
            family.add_metric([row["status"], agent], row["n"])
        yield family

    def _review_signal(self) -> Iterator[Metric]:
        yield from metrics.review_signal(review_signal.per_agent(self.db))
        yield from metrics.review_series(signal_series.weekly(self.db, None, time.time()))

    def _spend(self) -> Iterator[Metric]:
        tokens = CounterMetricFamily("bot_model_tokens", "Model tokens spent, by agent (the relay's ledger).",
                                     labels=["agent"])
        cost = CounterMetricFamily("bot_model_cost_usd", "Model cost in USD, by agent (the relay's ledger).",
                                   labels=["agent"])
        rows = self.db.query("SELECT r.agent AS agent, SUM(s.tokens) AS tokens, SUM(COALESCE(s.usd, 0)) AS usd "
                             "FROM model_spend s JOIN runs r ON r.id = s.run_id GROUP BY r.agent")
        for row in rows:
            tokens.add_metric([row["agent"] or "-"], row["tokens"] or 0)
            cost.add_metric([row["agent"] or "-"], row["usd"] or 0.0)
        yield tokens
        yield cost


def exposition(db: Any) -> bytes:
    stored = CollectorRegistry()
    stored.register(StoredState(db))
    return generate_latest(metrics.REGISTRY) + generate_latest(stored)


async def metrics_on_main_port(request: Request) -> Response:
    """The main port serves /metrics only to a bearer of BOT_METRICS_TOKEN (not set: 404)."""
    token = request.app.state.settings.text("BOT_METRICS_TOKEN")
    if not token:
        return Response("Not Found", status_code=404)
    offered = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if not hmac.compare_digest(offered.encode(), token.encode()):
        return Response("Unauthorized", status_code=401, headers={"www-authenticate": "Bearer"})
    return Response(exposition(request.app.state.db), media_type=CONTENT_TYPE_LATEST)


def metrics_app(db: Any, address: tuple[str, int]) -> Starlette:
    """The separate listener's app (BOT_METRICS_ADDR at `address`): /metrics only, no token, to a
    request that names the listener as its Host (bot/web/metrics_host.py)."""
    async def scrape(request: Request) -> Response:
        return Response(exposition(db), media_type=CONTENT_TYPE_LATEST)
    return Starlette(routes=[Route("/metrics", scrape)],
                     middleware=[Middleware(MetricsHostCheck, configured_host=address[0])])


async def start_metrics_listener(db: Any, settings: Settings) -> LoopbackServer | None:
    """The separate /metrics listener when BOT_METRICS_ADDR names one."""
    address = metrics_address(settings.text("BOT_METRICS_ADDR"))
    if address is None:
        return None
    server = LoopbackServer(uvicorn.Config(metrics_app(db, address), host=address[0], port=address[1],
                                           log_level="warning", access_log=False, lifespan="off", log_config=None),
                            "metrics listener")
    port = await server.start()
    log.info("metrics on http://%s:%d/metrics", address[0], port)
    return server


def metrics_address(configured: str | None) -> tuple[str, int] | None:
    """BOT_METRICS_ADDR's host and port (no host: the loopback address), None when it is empty."""
    text = (configured or "").strip()
    if not text:
        return None
    host, _, port = text.rpartition(":")
    return (host or "127.0.0.1"), int(port)
