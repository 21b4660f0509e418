"""One database API over SQLite (the default: $BOT_DATA_DIR/bot.db, WAL) and PostgreSQL
(`BOT_DATABASE_URL=postgresql://…`, psycopg 3), so the bot scales from one machine to many.

    db = connect(settings=settings)      # BOT_DATABASE_URL, else the data dir's SQLite file
    db.execute("UPDATE jobs SET status = ? WHERE id = ?", ["done", 7]).rowcount
    db.query("SELECT * FROM jobs WHERE conversation = :c", {"c": key})   # a list of dicts
    with db.transaction(): ...           # BEGIN IMMEDIATE / BEGIN … COMMIT (ROLLBACK on error)

Connections are in autocommit mode: a statement outside `transaction()` commits by itself. The
schema is migrated on connect (bot/db/migrations.py). What differs between the two is in
bot/db/dialect.py and nowhere else.
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bot.config import Settings
from bot.db import migrations
from bot.db.database import Database, Result
from bot.db.dialect import POSTGRESQL, SQLITE, Dialect
from bot.errors import BotError

__all__ = ["Database", "DatabaseConfigError", "Result", "another", "connect", "url"]


class DatabaseConfigError(BotError, RuntimeError):
    """BOT_DATABASE_URL names no database the bot can use, or PostgreSQL lacks the shared key."""


def url(settings: Settings) -> str:
    """BOT_DATABASE_URL, else the data dir's SQLite file, of the entry point's `settings`."""
    return settings.text("BOT_DATABASE_URL") or f"sqlite:///{settings.data_dir / 'bot.db'}"


def connect(database_url: str | None = None, *, path: Path | None = None, migrate: bool = True,
            settings: Settings | None = None) -> Database:
    """A connection, migrated to the latest schema unless `migrate=False` (`bot migrate` does it).
    The database is `path`'s SQLite file, else `database_url`, else the one of `settings` (`url`);
    PostgreSQL needs the settings' shared key (without settings, it is refused)."""
    if path is not None:
        target = f"sqlite:///{path}"
    elif database_url:
        target = database_url
    elif settings is not None:
        target = url(settings)
    else:
        raise TypeError("connect() needs the entry point's settings, a database URL or a path")
    scheme = target.split(":", 1)[0]
    if scheme == "sqlite":
        db = _sqlite(target)
    elif scheme in ("postgresql", "postgres"):
        db = _postgresql(target, _shared_key(settings))
    else:
        raise DatabaseConfigError(f"BOT_DATABASE_URL must start with postgresql:// or sqlite:///, not {scheme}:")
    if migrate:
        migrations.migrate(db)
    return db


def another(db: Database) -> Database:
    """A second connection to `db`'s database, already migrated (a thread of its own writes on it:
    a connection serves one thread at a time, and its transactions are its own)."""
    return reopen(db.url, db.dialect)


def reopen(url: str, dialect: Dialect) -> Database:
    """A new connection to the database at `url` of `dialect`, already migrated: for a holder that
    must not keep the first connection alive (a process-wide registry, bot/record/event_log.py)."""
    if dialect is SQLITE:
        return _sqlite(url)
    return Database(_pg_connection(url), POSTGRESQL, url, reopen=_pg_connection)


def _dict_row(cursor: sqlite3.Cursor, row: tuple) -> dict:
    return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}


def _sqlite(target: str) -> Database:
    path = target.removeprefix("sqlite:///")
    if not path.startswith("/"):
        path = str(Path(path).resolve())
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = _dict_row
    _wal(conn)
    conn.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; a crash loses at most the last commits
    conn.execute("PRAGMA busy_timeout=30000")
    return Database(conn, SQLITE, f"sqlite:///{path}")


def _wal(conn: sqlite3.Connection, deadline_s: float = 30.0) -> None:
    """Switch a new database to WAL. SQLite answers "database is locked" at once, without waiting
    out the busy timeout, when another process is switching the same new file at that moment: try
    again, as long as the busy timeout would have waited."""
    give_up = time.monotonic() + deadline_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > give_up:
                raise
            time.sleep(0.01)


def _shared_key(settings: Settings | None) -> bool:
    return settings is not None and bool(settings.text("BOT_SECRET_KEY"))


def _postgresql(target: str, shared_key: bool) -> Database:
    if not shared_key:
        raise DatabaseConfigError(
            "BOT_SECRET_KEY must be set when BOT_DATABASE_URL is PostgreSQL: every machine must seal and "
            "open secrets, settings sessions and CLI homes with the same key (a per-machine key file would "
            "make the other machines' rows unreadable). Generate one with `openssl rand -base64 32` and "
            "give it to every process.")
    return Database(_pg_connection(target), POSTGRESQL, target, reopen=_pg_connection)


def _pg_connection(target: str) -> Any:
    import psycopg  # noqa: PLC0415 - SQLite-only deployments never load the driver
    from psycopg.rows import dict_row  # noqa: PLC0415

    try:
        return psycopg.connect(target, autocommit=True, row_factory=dict_row)
    except psycopg.OperationalError as exc:
        raise DatabaseConfigError(f"cannot connect to PostgreSQL ({_redacted(target)}): {exc}") from None


def _redacted(target: str) -> str:
    parts = urlsplit(target)
    if parts.password:
        return target.replace(f":{parts.password}@", ":***@")
    return target
