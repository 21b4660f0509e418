"""`bot worker`: run workers only, no web server. Start one on each machine that should run
episodes, all pointed at the same PostgreSQL (BOT_DATABASE_URL) with the same BOT_SECRET_KEY;
`bot serve` with BOT_WORKERS=0 takes the webhooks. SIGTERM stops claiming, gives running jobs
BOT_SHUTDOWN_GRACE seconds and leaves the rest leased for another worker."""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys

from sse_starlette.sse import AppStatus

from bot import config
from bot.cli import service_logging
from bot.config import Settings
from bot.db import DatabaseConfigError
from bot.service import store
from bot.service.worker import WorkerPool
from bot.settings import manifest
from sandbox import doctor_checks
from sandbox.limits import raise_open_files_limit

log = logging.getLogger("bot.cli.worker")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot worker", description=__doc__)
    parser.add_argument("--workers", type=int, default=None, help="episodes at once (default: BOT_WORKERS)")
    args = parser.parse_args(argv)
    try:
        settings = manifest.load_settings(os.environ)  # with a GitHub App created from `/` on this data dir
    except config.MissingConfig as exc:
        print(f"bot worker: {exc}", file=sys.stderr)
        return 2
    size = args.workers if args.workers is not None else settings.workers
    if size < 1:
        print("bot worker: BOT_WORKERS (or --workers) must be at least 1", file=sys.stderr)
        return 2
    missing = settings.missing_app_config()
    if missing:
        print("bot worker: GitHub App not configured: " + " ".join(missing), file=sys.stderr)
        return 2
    try:
        store.connect(settings=settings).close()  # refuse now, in words, what the pool could not run with
    except DatabaseConfigError as exc:
        print(f"bot worker: {exc}", file=sys.stderr)
        return 2
    refusal = tier1_refusal(settings)
    if refusal:
        print(f"bot worker: tier 1 cannot run here: {refusal}", file=sys.stderr)
        return 2
    raise_open_files_limit()
    service_logging.start(settings)  # as bot serve's: BOT_LOG_FORMAT, the job's ids, secrets masked
    asyncio.run(_run(size, settings))
    return 0


def tier1_refusal(settings: Settings) -> str | None:
    """The first failing floor check, in one line, when episodes run in tier 1: a worker that
    could run none refuses to start rather than claim jobs it would fail."""
    if settings.sandbox_tier != 1:
        return None
    failed = [detail for _, ok, detail in doctor_checks(settings.sandbox_host) if not ok]
    return " ".join(failed[0].split()) if failed else None


async def _run(size: int, settings: Settings) -> None:
    AppStatus.disable_automatic_graceful_drain()  # the episodes' bridges outlive a SIGTERM's grace
    db = store.connect(settings=settings)
    pool = WorkerPool(db, settings, size)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await pool.start()
    log.info("worker %s: %d at once, database %s, data dir %s", pool.owner, size, db.describe(), settings.data_dir)
    await stop.wait()
    await pool.stop(settings.number("BOT_SHUTDOWN_GRACE"))
    AppStatus.should_exit = True
