"""`bot serve`: the webhook service on uvicorn. SIGTERM stops taking jobs, gives running ones a
grace period (BOT_SHUTDOWN_GRACE seconds) and leaves the rest leased for the next start."""
from __future__ import annotations

import argparse
import logging
import os
import sys

import uvicorn

from bot import config
from bot.cli import preflight, service_logging
from bot.db import DatabaseConfigError
from bot.service import store
from bot.settings import manifest
from bot.settings.address import listening_base
from bot.web.app import create_app
from sandbox.layers import sweep_stale
from sandbox.limits import raise_open_files_limit


def main(argv: list[str]) -> int:
    try:
        # the App's variables: all of them or none, never a mix with a stored App
        settings = manifest.load_settings(os.environ)
        preflight.check_settings(settings)  # BOT_SANDBOX_TIER, BOT_DEFAULT_AGENT: refused before any "is on it"
    except config.MissingConfig as exc:
        print(f"bot serve: {exc}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="bot serve", description=__doc__)
    parser.add_argument("--host", default=settings.word("BOT_HOST"), help="address to listen on (default: BOT_HOST)")
    parser.add_argument("--port", type=int, default=settings.whole("BOT_PORT"),
                        help="port to listen on (default: BOT_PORT)")
    args = parser.parse_args(argv)
    try:
        store.connect(settings=settings).close()  # a missing shared key or a bad BOT_DATABASE_URL, said before starting
    except DatabaseConfigError as exc:
        print(f"bot serve: {exc}", file=sys.stderr)
        return 2
    raise_open_files_limit()  # one episode's connections must not starve the others
    sweep_stale()  # the capped layers' scratch folders of runs whose bot was killed
    service_logging.start(settings)
    address = listening_base(args.host, args.port)
    app = create_app(address=address, settings=settings)
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning",
                                           access_log=False, timeout_graceful_shutdown=5, log_config=None))
    logging.getLogger("bot.cli.serve").info("listening on http://%s:%d (data dir %s)",
                                        args.host, args.port, settings.data_dir)
    server.run()
    return 0
