"""What a worker pool does to be one of many: wake on LISTEN/NOTIFY, heartbeat, slow poll.

On PostgreSQL, every enqueue and every finish sends `NOTIFY bot_jobs` (bot.service.store) and
each pool LISTENs on its own connection, so a job queued by any intake replica, or a thread's next
episode freed by any worker, is claimed at once; the claim loop's poll becomes a slow safety net
(a lost notification, a lease that ran out). On SQLite the pool keeps its short poll.

Every pool heartbeats a `workers` row (host, pid, version, running jobs, capacity, last seen) so
`bot doctor` can show the connected workers; the row goes when the pool stops. A `bot serve` that
runs no pool (a first run waiting for its GitHub App, an intake with BOT_WORKERS=0) heartbeats a
row of capacity 0 (`Presence`): the doctor sees the service, and `bot restore` a database in use.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Sized
from importlib import metadata
from typing import Protocol, TypedDict, cast

from bot.db import Database
from bot.service.store import QUEUE_CHANNEL

log = logging.getLogger("bot.service.wakeup")
LOCAL_POLL_S = 0.5
SHARED_POLL_S = 5.0  # only the safety net: notifications do the waking
HEARTBEAT_S = 5.0
ALIVE_S = 3 * HEARTBEAT_S  # a worker not seen for this long is gone


def poll_seconds(db: Database) -> float:
    return SHARED_POLL_S if db.shared else LOCAL_POLL_S


def version() -> str:
    try:
        return metadata.version("github-agent-bot")
    except metadata.PackageNotFoundError:
        return "unknown"


class Pool(Protocol):
    """What the wakeup needs of bot.service.worker.WorkerPool."""

    db: Database
    owner: str
    size: int

    @property
    def running(self) -> Sized: ...

    def wake(self) -> None: ...


class Wakeup:
    """Started and stopped with a WorkerPool: `pool.wake()` on each notification, and its heartbeat."""

    def __init__(self, pool: Pool, *, listen: bool = True) -> None:
        self.pool = pool
        self.started_at = time.time()
        self._listens = listen
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._heartbeats()))
        if self._listens and self.pool.db.shared:
            self._tasks.append(asyncio.create_task(self._listen()))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            self.pool.db.execute("DELETE FROM workers WHERE owner = ?", [self.pool.owner])

    async def _listen(self) -> None:
        import psycopg  # noqa: PLC0415 - only a PostgreSQL pool gets here

        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.pool.db.url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {QUEUE_CHANNEL}")
                    self.pool.wake()  # anything queued while we were not listening
                    async for _ in conn.notifies():
                        self.pool.wake()
            except asyncio.CancelledError:
                raise
            except Exception:  # the poll covers the gap; listen again shortly
                log.warning("listening for queued jobs failed; retrying", exc_info=True)
                await asyncio.sleep(1.0)

    async def _heartbeats(self) -> None:
        while True:
            try:
                beat(self.pool.db, self.pool.owner, len(self.pool.running), self.pool.size, self.started_at)
            except Exception:
                log.warning("worker heartbeat failed", exc_info=True)
            await asyncio.sleep(HEARTBEAT_S)


class Presence:
    """A service process without a worker pool: its heartbeat row, capacity 0, claims nothing."""

    size = 0
    running: tuple[int, ...] = ()

    def __init__(self, db: Database) -> None:
        self.db = db
        self.owner = owner_id()
        self._heartbeat = Wakeup(self, listen=False)

    def wake(self) -> None:
        """Nothing to wake: this process claims no job."""

    def start(self) -> None:
        self._heartbeat.start()

    async def stop(self) -> None:
        await self._heartbeat.stop()


def owner_id() -> str:
    """A process's name in the `workers` table and on the leases it takes: host, pid, a nonce."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def beat(db: Database, owner: str, running: int, capacity: int, started_at: float) -> None:
    db.execute("INSERT INTO workers (owner, host, pid, version, running, capacity, started_at, seen_at) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (owner) DO UPDATE SET running = excluded.running, "
               "capacity = excluded.capacity, seen_at = excluded.seen_at",
               [owner, socket.gethostname(), os.getpid(), version(), running, capacity, started_at, time.time()])


class WorkerRow(TypedDict):
    """A worker's last heartbeat (the `workers` table)."""

    owner: str
    host: str
    pid: int | None
    version: str | None
    running: int
    capacity: int
    started_at: float | None
    seen_at: float


def host_heartbeat(db: Database, host: str, now: float | None = None) -> WorkerRow | None:
    """The freshest recent heartbeat of a worker pool (capacity above 0) on `host`, or None: what
    `bot worker --check` probes. A pod's host name is its own, so this is the pod's worker."""
    rows = db.query("SELECT owner, host, pid, version, running, capacity, started_at, seen_at FROM workers "
                    "WHERE host = ? AND capacity > 0 AND seen_at >= ? ORDER BY seen_at DESC",
                    [host, (now or time.time()) - ALIVE_S])
    return cast(WorkerRow, rows[0]) if rows else None


def connected_workers(db: Database, now: float | None = None) -> list[WorkerRow]:
    """The workers that heartbeated recently, oldest first."""
    since = (now or time.time()) - ALIVE_S
    rows = db.query("SELECT owner, host, pid, version, running, capacity, started_at, seen_at FROM workers "
                    "WHERE seen_at >= ? ORDER BY started_at", [since])
    return cast(list[WorkerRow], rows)
