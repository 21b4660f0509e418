"""The thread that writes one database's queued run events (bot/record/event_log.py).

It redacts each event (every encoding of every secret is looked for: tens of microseconds a
short line, more a long one) and inserts a batch per transaction on a connection of its own.
Both would hold the event loop if done there, once per line of a CLI printing without end.

A write the database refuses as a whole (full, locked, gone) leaves the batch queued: the writer
waits and tries again, and whoever waits for those events hears of it. An event the database
refuses on its own (text it cannot encode) is stored as a stand-in that says so, so the events
after it are not held back, and nothing of the run is renumbered.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final, Protocol

from bot.db import Database
from bot.record.redact import redact

log = logging.getLogger("bot.record.event_writer")

IDLE_S = 2.0  # the writer (and its connection) goes after this long with nothing queued
RETRY_S = (0.2, 5.0)  # first and longest wait before a refused batch is tried again
SHARE_S = 0.0005  # the writer's longest run of Python work before it lets the event loop's thread have the GIL
PAUSE_S = 0.0002
COLUMNS = ("run_id", "seq", "ts", "tier", "kind", "tool", "args_digest", "outcome", "duration_ms", "raw")
INSERT = f"INSERT INTO run_events ({', '.join(COLUMNS)}) VALUES "
ROW_SQL = f"({', '.join('?' * len(COLUMNS))})"


# A queued event is a plain tuple of plain values: (ticket, size, secrets, row), `row` in COLUMNS'
# order with its texts not yet redacted and its time (`ts`) a float of time.time(), made text here.
# The garbage collector stops tracking such a tuple at its first pass, so a long queue (a flood
# the writer has not caught up with) is never promoted to the oldest generation, where each full
# collection walks the whole process (about 90 ms in `bot serve`).
Queued = tuple[int, int, tuple[str, ...], tuple]
TICKET: Final = 0
SIZE: Final = 1
SECRETS: Final = 2
ROW: Final = 3
RUN_ID, SEQ, TS, TIER, KIND, TOOL, DIGEST, OUTCOME, DURATION, RAW = range(10)  # in ROW


class Source(Protocol):
    """The queue the writer drains (bot/record/event_log.py:EventLog)."""

    def take(self, idle_s: float) -> list[Queued]: ...

    def written(self, batch: list[Queued]) -> None: ...

    def failed(self, error: BaseException) -> None: ...

    def writer_gone(self) -> None: ...


def write_until_idle(events: Source, connect: Callable[[], Database]) -> None:
    db: Database | None = None
    wait = RETRY_S[0]
    redacted: dict[int, tuple] = {}  # a batch tried again is not redacted again
    try:
        while batch := events.take(IDLE_S):
            try:
                db = db or connect()
                _write_batch(db, batch, redacted)
            except Exception as exc:  # refused as a whole: the batch stays queued
                log.warning("the run events could not be stored (%s); trying again in %.1f s", exc, wait)
                events.failed(exc)
                _closed(db)
                db = None
                time.sleep(wait)
                wait = min(wait * 2, RETRY_S[1])
                continue
            events.written(batch)
            redacted.clear()
            wait = RETRY_S[0]
    except BaseException as exc:
        log.exception("the run events' writer stopped")
        events.failed(exc)
        raise
    finally:
        events.writer_gone()
        _closed(db)


def _write_batch(db: Database, batch: list[Queued], redacted: dict[int, tuple]) -> None:
    """One transaction for the batch; if the database refuses one of its events rather than
    every write, one transaction per event instead."""
    try:
        _insert(db, _rows(batch, redacted))
    except Exception as exc:
        if _refused_as_a_whole(exc):
            raise
        _write_one_by_one(db, batch, redacted)


def _insert(db: Database, rows: list[tuple]) -> None:
    """One statement for the rows, in autocommit: its own transaction, and one step of SQLite's
    during which the write lock is held and the GIL let go. A BEGIN, a statement per row and a
    COMMIT would hold the lock across each hand-back of the GIL, which the event loop's thread
    may keep for a while, and the loop's own writes would find the database busy."""
    db.execute(INSERT + ", ".join([ROW_SQL] * len(rows)), [value for row in rows for value in row])


def _rows(batch: list[Queued], redacted: dict[int, tuple]) -> list[tuple]:
    """The batch's rows, redacted; the GIL is let go every SHARE_S, so the event loop's thread
    (which wants it for every request it serves) never waits a whole switch interval for it."""
    rows, since = [], time.perf_counter()
    for event in batch:
        row = redacted.get(event[TICKET])
        if row is None:
            row = redacted[event[TICKET]] = _redacted(event[ROW], event[SECRETS])
        rows.append(row)
        if time.perf_counter() - since >= SHARE_S:
            time.sleep(PAUSE_S)
            since = time.perf_counter()
    return rows


def _redacted(row: tuple, secrets: tuple[str, ...]) -> tuple:
    raw = row[RAW].decode("utf-8", "replace") if isinstance(row[RAW], bytes) else row[RAW]
    tool, outcome = row[TOOL], row[OUTCOME]
    return (*_head(row), redact(tool, secrets) if tool else tool, row[DIGEST],
            redact(outcome, secrets) if outcome else outcome, row[DURATION], redact(raw, secrets))


def _head(row: tuple) -> tuple:
    """The row's columns before `tool`, its time as stored: ISO 8601 in UTC to the millisecond, as
    bot/record/recorder.py's `now_iso` writes the runs' times (made here: a flood's every event would
    otherwise format its time on the event loop)."""
    return (row[RUN_ID], row[SEQ], iso_at(row[TS]), row[TIER], row[KIND])


def iso_at(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


def _write_one_by_one(db: Database, batch: list[Queued], redacted: dict[int, tuple]) -> None:
    """A batch with an event the database refuses: each event in a transaction of its own, the
    refused one as a stand-in naming why. A stand-in refused too (its run is not in the database)
    is dropped with an error in the log: holding it would hold every later event."""
    for event in batch:
        try:
            _insert(db, _rows([event], redacted))
        except Exception as exc:
            if _refused_as_a_whole(exc):
                raise
            row = event[ROW]
            log.error("run %s event %d (%s) refused by the database: %s", row[RUN_ID], row[SEQ], row[KIND], exc)
            _write_stand_in(db, row, exc)


def _write_stand_in(db: Database, row: tuple, error: Exception) -> None:
    why = f"this event could not be stored: the database refused it ({type(error).__name__})"
    stand_in = (*_head(row), None, None, "not stored", row[DURATION], why)
    try:
        _insert(db, [stand_in])
    except Exception as exc:
        if _refused_as_a_whole(exc):
            raise
        log.error("run %s event %d dropped: its stand-in was refused too (%s)", row[RUN_ID], row[SEQ], exc)


def _refused_as_a_whole(error: BaseException) -> bool:
    """The database could not take any write (disk full, locked, connection lost), as opposed to
    refusing one event's values. Both drivers name these so (sqlite3, psycopg)."""
    return any(cls.__name__ in ("OperationalError", "InterfaceError") for cls in type(error).__mro__)


def _closed(db: Database | None) -> None:
    if db is not None:
        try:
            db.close()
        except Exception:  # closing a broken connection may fail too; it is dropped either way
            log.debug("closing the run events' connection failed", exc_info=True)
