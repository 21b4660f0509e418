"""One database API over SQLite (the default: $BOT_DATA_DIR/bot.db, WAL) and PostgreSQL
(`BOT_DATABASE_URL=postgresql://…`, psycopg 3), so the bot scales from one machine to many.

    db = connect()                       # BOT_DATABASE_URL, else the data dir's SQLite file
    db.execute("UPDATE jobs SET status = ? WHERE id = ?", ["done", 7]).rowcount
    db.query("SELECT * FROM jobs WHERE conversation = :c", {"c": key})   # a list of dicts
    with db.transaction(): ...           # BEGIN IMMEDIATE / BEGIN … COMMIT (ROLLBACK on error)

Connections are in autocommit mode: a statement outside `transaction()` commits by itself. The
schema is migrated on connect (bot/db/migrations.py). What differs between the two is in
bot/db/dialect.py and nowhere else.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bot import config
from bot.db import migrations
from bot.db.dialect import POSTGRESQL, SQLITE, Dialect
from bot.errors import BotError

Params = Sequence[Any] | dict[str, Any] | None


class DatabaseConfigError(BotError, RuntimeError):
    """BOT_DATABASE_URL names no database the bot can use, or PostgreSQL lacks the shared key."""


class Result:
    """A statement's outcome: its rows as dicts (RETURNING or SELECT) and how many rows it changed."""

    def __init__(self, cursor):
        self._cursor = cursor
        self.rowcount = cursor.rowcount
        self.lastrowid = getattr(cursor, "lastrowid", None)

    @property
    def columns(self) -> list[str]:
        return [column[0] for column in self._cursor.description or ()]

    def fetchone(self) -> dict | None:
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[dict]:
        return self._cursor.fetchall() if self._cursor.description else []

    def __iter__(self) -> Iterator[dict]:
        return iter(self.fetchall())


class Database:
    def __init__(self, conn, dialect: Dialect, url: str):
        self.conn, self.dialect, self.url = conn, dialect, url

    @property
    def shared(self) -> bool:
        """Several machines may use this database at once (PostgreSQL)."""
        return self.dialect.shared

    def execute(self, sql: str, params: Params = None) -> Result:
        if self.dialect is POSTGRESQL and self.conn.closed:  # the server restarted or dropped us
            self.conn = _postgresql(self.url).conn
        if not params:
            return Result(self.conn.execute(sql))
        return Result(self.conn.execute(self.dialect.translate(sql), params))

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if self.dialect is SQLITE:
            self.conn.executemany(sql, rows)
        else:
            with self.conn.cursor() as cursor:
                cursor.executemany(self.dialect.translate(sql), rows)

    def query(self, sql: str, params: Params = None) -> list[dict]:
        return self.execute(sql, params).fetchall()

    @property
    def in_transaction(self) -> bool:
        if self.dialect is SQLITE:
            return self.conn.in_transaction
        import psycopg.pq  # noqa: PLC0415 - only a PostgreSQL connection gets here
        return self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """One write transaction (nested: a savepoint of the open one); rolled back on an exception."""
        if self.in_transaction:
            self.execute("SAVEPOINT nested")
            try:
                yield self
            except BaseException:
                self.execute("ROLLBACK TO nested")
                self.execute("RELEASE nested")
                raise
            self.execute("RELEASE nested")
            return
        self.execute(self.dialect.begin)
        try:
            yield self
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def table_names(self) -> list[str]:
        if self.dialect is SQLITE:
            sql = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        else:
            sql = "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
        return [row["name"] for row in self.query(sql)]

    def describe(self) -> str:
        """Where the data lives, without a password."""
        if self.dialect is SQLITE:
            return f"SQLite {self.url.removeprefix('sqlite:///')}"
        parts = urlsplit(self.url)
        host = parts.hostname or "(unix socket)"
        return f"PostgreSQL {host}{':' + str(parts.port) if parts.port else ''}{parts.path}"

    def close(self) -> None:
        self.conn.close()


def url() -> str:
    """BOT_DATABASE_URL, else the data dir's SQLite file."""
    return config.env("BOT_DATABASE_URL") or f"sqlite:///{config.data_dir() / 'bot.db'}"


def connect(database_url: str | None = None, *, path: Path | None = None, migrate: bool = True) -> Database:
    """A connection, migrated to the latest schema unless `migrate=False` (`bot migrate` does it)."""
    target = f"sqlite:///{path}" if path is not None else (database_url or url())
    scheme = target.split(":", 1)[0]
    if scheme == "sqlite":
        db = _sqlite(target)
    elif scheme in ("postgresql", "postgres"):
        db = _postgresql(target)
    else:
        raise DatabaseConfigError(f"BOT_DATABASE_URL must start with postgresql:// or sqlite:///, not {scheme}:")
    if migrate:
        migrations.migrate(db)
    return db


def _dict_row(cursor, row) -> dict:
    return {column[0]: value for column, value in zip(cursor.description, row, strict=True)}


def _sqlite(target: str) -> Database:
    path = target.removeprefix("sqlite:///")
    if not path.startswith("/"):
        path = str(Path(path).resolve())
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = _dict_row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # WAL stays consistent; a crash loses at most the last commits
    conn.execute("PRAGMA busy_timeout=30000")
    return Database(conn, SQLITE, f"sqlite:///{path}")


def _postgresql(target: str) -> Database:
    if not config.env("BOT_SECRET_KEY"):
        raise DatabaseConfigError(
            "BOT_SECRET_KEY must be set when BOT_DATABASE_URL is PostgreSQL: every machine must seal and "
            "open secrets, settings sessions and CLI homes with the same key (a per-machine key file would "
            "make the other machines' rows unreadable). Generate one with `openssl rand -base64 32` and "
            "give it to every process.")
    import psycopg  # noqa: PLC0415 - SQLite-only deployments never load the driver
    from psycopg.rows import dict_row  # noqa: PLC0415

    try:
        conn = psycopg.connect(target, autocommit=True, row_factory=dict_row)
    except psycopg.OperationalError as exc:
        raise DatabaseConfigError(f"cannot connect to PostgreSQL ({_redacted(target)}): {exc}") from None
    return Database(conn, POSTGRESQL, target)


def _redacted(target: str) -> str:
    parts = urlsplit(target)
    if parts.password:
        return target.replace(f":{parts.password}@", ":***@")
    return target
