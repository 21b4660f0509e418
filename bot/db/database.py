"""A connection of either backend behind one API (bot/db/__init__.py connects)."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from bot.db.dialect import SQLITE, Dialect

Params = Sequence[Any] | dict[str, Any] | None


class Result:
    """A statement's outcome: its rows as dicts (RETURNING or SELECT) and how many rows it changed."""

    def __init__(self, cursor: Any) -> None:
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
    def __init__(self, conn: Any, dialect: Dialect, url: str, reopen: Callable[[str], Any] | None = None) -> None:
        self.conn, self.dialect, self.url, self._reopen = conn, dialect, url, reopen

    @property
    def shared(self) -> bool:
        """Several machines may use this database at once (PostgreSQL)."""
        return self.dialect.shared

    def execute(self, sql: str, params: Params = None) -> Result:
        if self._reopen is not None and self.conn.closed:  # the server restarted or dropped us
            self.conn = self._reopen(self.url)
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
