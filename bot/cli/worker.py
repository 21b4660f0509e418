"""`bot worker`: run workers only, no web server. Start one on each machine that should run
episodes, all pointed at the same PostgreSQL (BOT_DATABASE_URL) with the same BOT_SECRET_KEY;
`bot serve` with BOT_WORKERS=0 takes the webhooks. SIGTERM stops claiming, gives running jobs
BOT_SHUTDOWN_GRACE seconds and leaves the rest leased for another worker. In a container whose own
cgroup caps the episodes (no cgroup subtree to make one per episode), one runs at a time whatever
BOT_WORKERS says, and the log says so.

`bot worker --check` is the worker's probe (it serves no HTTP): exit 0 while a worker of this host
heartbeats in the database (every 5 s; stale after 15), else 1 with one line on stderr."""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import time
from pathlib import Path

from bot import config
from bot.cli import service_logging
from bot.config import Settings
from bot.db import DatabaseConfigError, connect
from bot.db import url as database_url
from bot.service import retention, store, wakeup
from bot.settings import manifest

# The worker pool, the sandbox and the SSE streams are imported where the worker starts: the probe
# (`--check`), run every few seconds in each pod, stays a tenth of a second of CPU instead of 1.5 s.

log = logging.getLogger("bot.cli.worker")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot worker", description=__doc__)
    parser.add_argument("--workers", type=int, default=None, help="episodes at once (default: BOT_WORKERS)")
    parser.add_argument("--check", action="store_true",
                        help="exit 0 while a worker of this host heartbeats in the database (a probe), else 1")
    args = parser.parse_args(argv)
    if args.check:
        return check(Settings(dict(os.environ)))
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
    from sandbox.layers import sweep_stale  # noqa: PLC0415 - the probe stays light (above)
    from sandbox.limits import raise_open_files_limit  # noqa: PLC0415 - the probe stays light (above)

    raise_open_files_limit()
    sweep_stale()  # the capped layers' scratch folders of runs whose bot was killed
    service_logging.start(settings)  # as bot serve's: BOT_LOG_FORMAT, the job's ids, secrets masked
    size = episodes_at_once(settings, size)
    asyncio.run(_run(size, settings))
    return 0


def check(settings: Settings) -> int:
    """The probe: this host's worker heartbeat, fresh or not, said in one line."""
    host = socket.gethostname()
    try:
        found = _heartbeat(settings, host)
    except Exception as exc:  # a probe answers in one line whatever failed
        print(f"bot worker --check: cannot read the database: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    if found is None:
        print(f"bot worker --check: no heartbeat from a worker on {host} in the last {wakeup.ALIVE_S:.0f} s",
              file=sys.stderr)
        return 1
    print(f"bot worker --check: heartbeat {time.time() - found['seen_at']:.0f} s ago (pid {found['pid']}, "
          f"running {found['running']}/{found['capacity']})")
    return 0


def _heartbeat(settings: Settings, host: str) -> wakeup.WorkerRow | None:
    target = database_url(settings)
    if target.startswith("sqlite:///") and not Path(target.removeprefix("sqlite:///")).is_file():
        return None  # no database yet: nothing heartbeats, and the probe creates nothing
    db = connect(migrate=False, settings=settings)
    try:
        return wakeup.host_heartbeat(db, host) if "workers" in db.table_names() else None
    finally:
        db.close()


def tier1_refusal(settings: Settings) -> str | None:
    """The first failing floor check, in one line, when episodes run in tier 1: a worker that
    could run none refuses to start rather than claim jobs it would fail."""
    if settings.sandbox_tier != 1:
        return None
    from sandbox import doctor_checks  # noqa: PLC0415 - the probe stays light (above)

    failed = [detail for _, ok, detail in doctor_checks(settings.sandbox_host) if not ok]
    return " ".join(failed[0].split()) if failed else None


def episodes_at_once(settings: Settings, asked: int) -> int:
    """`asked`, or 1 when the container's own cgroup caps the episodes: its caps hold for one
    episode, and a second would share them (said in the log)."""
    if settings.sandbox_tier != 1:
        return asked
    from sandbox import container_caps  # noqa: PLC0415 - the probe stays light (above)

    caps = container_caps(settings.sandbox_host)
    if caps is None:
        return asked
    if asked > 1:
        log.warning("worker: caps: %s: 1 at once, not %d (BOT_WORKERS); to run several, mount a cgroup "
                    "subtree where BOT_CGROUP_ROOT points (docs/deploy.md)", caps, asked)
    else:
        log.info("worker: caps: %s", caps)
    return 1


async def _run(size: int, settings: Settings) -> None:
    from sse_starlette.sse import AppStatus  # noqa: PLC0415 - the probe stays light (above)

    from bot.service.worker import WorkerPool  # noqa: PLC0415
    AppStatus.disable_automatic_graceful_drain()  # the episodes' bridges outlive a SIGTERM's grace
    db = store.connect(settings=settings)
    pool = WorkerPool(db, settings, size)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await pool.start()
    # this machine's data dir (worktrees, mirrors, CLI homes, scratch) is swept here: no intake sees it
    sweeper = retention.Sweeper(settings.number("BOT_GC_INTERVAL"), retention.Policy.from_settings(settings),
                                settings.data_dir, lambda: store.connect(settings=settings)).start()
    log.info("worker %s: %d at once, database %s, data dir %s", pool.owner, size, db.describe(), settings.data_dir)
    await stop.wait()
    await sweeper.stop()
    await pool.stop(settings.number("BOT_SHUTDOWN_GRACE"))
    AppStatus.should_exit = True
