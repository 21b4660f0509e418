"""The scheduler's cost per minute (issue 35): AUTOMATIONS scheduled automations over REPOSITORIES
repositories, each repository's `.github/bot.yml` stored as the service stores it
(bot.automations.schedule.remember), then one tick per minute as the worker pool's Ticker runs it
(bot.service.schedules.tick: every schedule evaluated, the due slots claimed and their jobs queued).

The first tick (one minute before the timed ones) parses every file and sees every schedule for the
first time, as a freshly started process does; the timed ticks are the steady state (each file's
parse kept by the process while its text is unchanged, each schedule's first sight read in one query). Per backend: ms per tick (median and range over TICKS minutes), this
process's CPU per tick (on PostgreSQL the server's own CPU is not in it), and the slots claimed per
tick. SQLite is a file in a temporary folder; PostgreSQL a throwaway cluster (tests/store/postgres.py)
when it is installed, else skipped and said so.

`python -m bench.automations` prints the same lines.
"""
from __future__ import annotations

import base64
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.size import pick

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot import db as bot_db  # noqa: E402
from bot.automations.schedule import forget_parsed, remember  # noqa: E402
from bot.db import Database  # noqa: E402
from bot.service.schedules import tick  # noqa: E402
from tests.entry_settings import current  # noqa: E402
from tests.store.postgres import Cluster, bin_dir  # noqa: E402

REPOSITORIES = pick(1_000, 20)
PER_REPOSITORY = 10
AUTOMATIONS = REPOSITORIES * PER_REPOSITORY
TICKS = pick(5, 2)
FIRST_TIMED = dt.datetime(2026, 12, 7, 6, 0, tzinfo=dt.UTC)  # a Monday, 06:00 UTC
KEY = base64.b64encode(b"b" * 32).decode()
# A mix of what repositories declare, a repository's minute spreading the hourly and daily ones
CRONS = ("{m} * * * *", "*/15 * * * *", "{m} 6 * * 1", "{m} 2 * * *", "*/5 * * * *", "{m} */6 * * *",
         "{m} 9 * * 1-5", "0 0 1 * *", "*/10 8-18 * * 1-5", "0 6 * * *")


def config(index: int) -> str:
    minute = index % 60
    lines = ["automations:"]
    for n, cron in enumerate(CRONS[:PER_REPOSITORY]):
        lines += [f"  - name: job{n}", "    on:", f"      schedule: [{{cron: \"{cron.format(m=minute)}\"}}]",
                  "    agent: codex", f"    prompt: Scheduled chore {n} of repository {index}."]
    return "\n".join(lines) + "\n"


def stored(db: Database) -> None:
    for index in range(REPOSITORIES):
        remember(db, f"org{index // 100}/repo{index}", index + 1, 1, config(index), ".github/bot.yml@abc1234")


def measured(db: Database) -> tuple[float, list[float], list[float], list[int]]:
    """(the first tick's wall ms, then wall ms, CPU ms and slots claimed of each timed tick)."""
    forget_parsed()
    started = time.perf_counter()
    tick(db, FIRST_TIMED - dt.timedelta(minutes=1))
    first = (time.perf_counter() - started) * 1000
    walls, cpus, claims = [], [], []
    for minute in range(TICKS):
        wall, cpu = time.perf_counter(), time.process_time()
        claimed = tick(db, FIRST_TIMED + dt.timedelta(minutes=minute))
        cpus.append((time.process_time() - cpu) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
        claims.append(len(claimed))
    return first, walls, cpus, claims


def lines_for(backend: str, connect: Callable[[], Database]) -> list[str]:
    db = connect()
    try:
        stored(db)
        first, walls, cpus, claims = measured(db)
    finally:
        db.close()
    where = f"{AUTOMATIONS:,} automations over {REPOSITORIES:,} repositories, {backend}"
    return [f"tick ({where}): {statistics.median(walls):.0f} ms median, {min(walls):.0f}-{max(walls):.0f} ms "
            f"over {TICKS} minutes ({statistics.median(walls) / AUTOMATIONS * 1000:.0f} us per automation)",
            f"first tick of a process ({backend}: every file parsed, every schedule first seen): {first:.0f} ms",
            f"tick CPU, this process ({backend}): {statistics.median(cpus):.0f} ms median, "
            f"{min(cpus):.0f}-{max(cpus):.0f} ms",
            f"slots claimed per tick ({backend}): {', '.join(str(n) for n in claims)} "
            f"(minutes from {FIRST_TIMED:%Y-%m-%d %H:%M} UTC)"]


def run() -> list[str]:
    os.environ["BOT_SECRET_KEY"] = KEY
    with tempfile.TemporaryDirectory(prefix="bench-automations-") as folder:
        lines = lines_for("SQLite", lambda: bot_db.connect(path=Path(folder) / "bot.db", settings=current()))
    bindir = bin_dir()
    if bindir is None:
        return [*lines, "PostgreSQL is not installed (make test installs Debian's postgresql): skipped"]
    cluster = Cluster(bindir)
    cluster.start()
    try:
        return [*lines, *lines_for("PostgreSQL", lambda: bot_db.connect(cluster.new_database(), settings=current()))]
    finally:
        cluster.stop()


if __name__ == "__main__":
    print("\n".join(run()))
