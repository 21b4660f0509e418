"""The run events of one database, queued in order and written in batches off the event loop.

A recorder appends an event and gets its sequence number at once; a writer thread
(bot/record/event_writer.py) redacts the queued events and inserts them, up to BATCH per
transaction, in the order they were appended. Each event has a ticket (its place in the queue of
this process); `written` is the last ticket committed, so "event N is durable" is `written >= N`.

    log = event_log(db)                      # one per database per process
    seq = log.append(db, run_id, fields, secrets, size)
    log.flush(run_id)                        # returns once every event of the run so far is stored
    await log.flushed(run_id)                # the same without holding the event loop
    await log.room()                         # a flood's reader waits here while the queue is long

Sequence numbers come from memory: a run started in this process counts from 1, a run seen first
by an append is counted on from the database once (`max(seq)`), and the count is forgotten when
the run ends with nothing queued. That is sound because one process at a time writes a run's
events: a run id is a fresh uuid per episode, a job retried after a crash starts a new run (the
dead attempt's run is only marked interrupted, bot/service/worker.py), and `bot run`'s sweep
writes to a run of a process that is gone.
"""
from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections import Counter, deque
from collections.abc import Callable

from bot.db import Database, reopen
from bot.errors import BotError
from bot.record.event_writer import ROW, SIZE, TICKET, Queued, write_until_idle

BATCH = 100  # events per transaction at most
HIGH_WATER = 2_000  # queued events above which a flood's reader waits (`room`)
HIGH_WATER_BYTES = 16 << 20  # ... or queued raw text above this
LOW_WATER = HIGH_WATER // 2  # it goes on once the queue is down to this


class RecordNotStored(BotError, RuntimeError):
    """The database refused the events' writes (full, locked, gone); they stay queued and the
    writer keeps trying, but whoever waits for them to be durable is told now."""


class EventLog:
    def __init__(self, url: str, connect: Callable[[], Database]) -> None:
        self.url = url
        self._connect = connect
        self._lock = threading.Condition()
        self._queue: deque[Queued] = deque()
        self._next_seq: dict[str, int] = {}
        self._queued_per_run: Counter[str] = Counter()
        self._last_ticket: dict[str, int] = {}
        self._ticket = 0
        self._written = 0
        self._bytes = 0
        self._failures = 0
        self._failure: BaseException | None = None
        self._async_waiters: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._writer: threading.Thread | None = None

    # appending ------------------------------------------------------------------------------

    def opened(self, run_id: str) -> None:
        """A run this process just created: its events count from 1 without asking the database."""
        with self._lock:
            self._next_seq.setdefault(run_id, 1)

    def append(self, db: Database, run_id: str, fields: tuple, secrets: tuple[str, ...], size: int) -> int:
        """Queue one event of `run_id` (`fields`: its columns after run_id and seq, texts not yet
        redacted; `secrets`: what the writer masks in them); returns its sequence number. `db` is
        read once, for a run this process has not counted yet."""
        with self._lock:
            seq = self._next_seq.get(run_id)
            if seq is None:
                seq = _stored_max(db, run_id) + 1
            self._next_seq[run_id] = seq + 1
            self._ticket += 1
            self._queue.append((self._ticket, size, secrets, (run_id, seq, *fields)))
            self._queued_per_run[run_id] += 1
            self._last_ticket[run_id] = self._ticket
            self._bytes += size
            self._start_writer()
            if len(self._queue) == 1:  # the writer waits only on an empty queue (`take`): wake it
                self._lock.notify_all()
        return seq

    def forget(self, run_id: str) -> None:
        """The run ended: its count leaves memory once nothing of it is queued (a later event
        counts on from the database)."""
        with self._lock:
            if not self._queued_per_run[run_id]:
                self._next_seq.pop(run_id, None)
                self._last_ticket.pop(run_id, None)
                del self._queued_per_run[run_id]

    # waiting --------------------------------------------------------------------------------

    def flush(self, run_id: str | None = None, timeout_s: float | None = None) -> None:
        """Return once every event appended so far (of `run_id`, or of every run) is committed;
        RecordNotStored if the writer fails meanwhile."""
        with self._lock:
            ticket = self._wanted(run_id)
            failures = self._failures
            done = self._lock.wait_for(lambda: self._written >= ticket or self._failures != failures, timeout_s)
            if self._written < ticket:
                raise RecordNotStored(f"the run events were not stored: {self._failure}" if done else
                                      f"the run events were not stored within {timeout_s} s")

    async def flushed(self, run_id: str | None = None) -> None:
        """`flush`, awaited: the event loop runs on while the writer works."""
        with self._lock:
            ticket = self._wanted(run_id)
        await self._until(ticket)

    async def room(self) -> None:
        """Wait while the queue is over its high-water mark (a flood's reader is slowed to the
        writer's pace instead of the queue growing without end)."""
        with self._lock:
            if len(self._queue) <= HIGH_WATER and self._bytes <= HIGH_WATER_BYTES:
                return
            ticket = self._written + max(1, len(self._queue) - LOW_WATER)
        await self._until(ticket)

    def _wanted(self, run_id: str | None) -> int:
        return self._ticket if run_id is None else self._last_ticket.get(run_id, 0)

    async def _until(self, ticket: int) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._written >= ticket:
                return
            future = loop.create_future()
            self._async_waiters.append((ticket, loop, future))
        await future

    # the writer's side (bot/record/event_writer.py: `Source`) -----------------------------------

    def _start_writer(self) -> None:
        if self._writer is None:
            self._writer = threading.Thread(target=write_until_idle, args=(self, self._connect),
                                            name=f"run events ({self.url.split(':', 1)[0]})", daemon=True)
            self._writer.start()

    def take(self, idle_s: float) -> list[Queued]:
        """The next batch, oldest first (left queued until `written`); [] once idle for `idle_s`,
        and the writer is then gone (the next append starts another)."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._queue, idle_s):
                self._writer = None
                return []
            return [self._queue[i] for i in range(min(BATCH, len(self._queue)))]

    def written(self, batch: list[Queued]) -> None:
        """`batch` (the head of the queue) is committed."""
        with self._lock:
            for _ in batch:
                done = self._queue.popleft()
                self._queued_per_run[done[ROW][0]] -= 1
                self._bytes -= done[SIZE]
            self._written = batch[-1][TICKET]
            self._failure = None
            self._lock.notify_all()
            ready = [w for w in self._async_waiters if w[0] <= self._written]
            self._async_waiters = [w for w in self._async_waiters if w[0] > self._written]
        for _, loop, future in ready:
            _resolve(loop, future, None)

    def writer_gone(self) -> None:
        """The writer thread ends (idle, or stopped by a fault: the next append starts another)."""
        with self._lock:
            if self._writer is threading.current_thread():
                self._writer = None

    def failed(self, error: BaseException) -> None:
        """A write failed; the batch stays queued. Whoever waits is told."""
        with self._lock:
            self._failures += 1
            self._failure = error
            self._lock.notify_all()
            waiting, self._async_waiters = self._async_waiters, []
        for _, loop, future in waiting:
            _resolve(loop, future, RecordNotStored(f"the run events were not stored: {error}"))


def _resolve(loop: asyncio.AbstractEventLoop, future: asyncio.Future, error: BaseException | None) -> None:
    def settle() -> None:
        if not future.done():
            future.set_result(None) if error is None else future.set_exception(error)

    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
        loop.call_soon_threadsafe(settle)


def _stored_max(db: Database, run_id: str) -> int:
    row = db.execute("SELECT coalesce(max(seq), 0) AS seq FROM run_events WHERE run_id = ?", [run_id]).fetchone()
    assert row is not None  # an aggregate always returns one row
    return int(row["seq"])


# one log per database per process -------------------------------------------------------------

_logs: dict[str, EventLog] = {}
_logs_lock = threading.Lock()
SHUTDOWN_FLUSH_S = 30.0


def event_log(db: Database) -> EventLog:
    """The process's log of `db`'s database (every Recorder on it shares the queue and the counts)."""
    with _logs_lock:
        log = _logs.get(db.url)
        if log is None:  # the log outlives this `db`: it keeps how to connect, never the connection
            url, dialect = db.url, db.dialect
            log = _logs[db.url] = EventLog(db.url, lambda: reopen(url, dialect))
        return log


@atexit.register
def flush_all() -> None:
    """At exit (bot serve's shutdown, the end of `bot run`): every queued event is written."""
    for log in list(_logs.values()):
        with contextlib.suppress(RecordNotStored):
            log.flush(timeout_s=SHUTDOWN_FLUSH_S)
