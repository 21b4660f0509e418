"""Everything that differs between SQLite and PostgreSQL, in one place.

Queries elsewhere are written once in the SQL both accept: `?` placeholders (or `:name`),
`ON CONFLICT … DO NOTHING / DO UPDATE … excluded.`, `RETURNING`, `COALESCE`, savepoints. This
module turns them into each driver's spelling and holds the few statements that cannot agree:
how a write transaction starts, the row lock of a queue claim, notifications, the migration lock,
a transaction's lock on a name, and the column types of the schema.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

MIGRATION_LOCK_KEY = 0x626F7464  # "botd": the advisory lock every starting process takes


@dataclass(frozen=True)
class Dialect:
    name: str
    begin: str  # a write transaction that takes the write lock at once
    lock_rows: str  # appended to a claim's row selection
    types: dict[str, str]
    shared: bool  # several machines may use the database at once

    def translate(self, sql: str) -> str:
        return sql if self.name == "sqlite" else _to_pyformat(sql)

    def ddl(self, template: str) -> str:
        return template.format(**self.types)

    def notify_sql(self, channel: str) -> str | None:
        return f"SELECT pg_notify('{channel}', '')" if self.name == "postgresql" else None

    def migration_lock(self) -> list[str]:
        """Statements, run first in the migration's transaction, that make concurrent starters wait."""
        if self.name == "postgresql":
            return [f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})"]
        return []  # BEGIN IMMEDIATE already holds SQLite's one write lock

    def transaction_lock(self, key: int) -> str | None:
        """A statement that waits for, then holds until the transaction ends, the lock named by `key`
        (a signed 64-bit number): None where a write transaction already excludes every other."""
        if self.name == "postgresql":
            return f"SELECT pg_advisory_xact_lock({int(key)})"
        return None  # BEGIN IMMEDIATE: SQLite's one write lock

    def reset_sequence(self, table: str, column: str) -> str | None:
        """After rows were copied in with their ids, the next generated id follows them."""
        if self.name != "postgresql":
            return None
        return (f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                f"COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)")


SQLITE = Dialect("sqlite", "BEGIN IMMEDIATE", "",
                 {"serial": "INTEGER PRIMARY KEY AUTOINCREMENT", "blob": "BLOB"}, shared=False)
POSTGRESQL = Dialect("postgresql", "BEGIN", "FOR UPDATE SKIP LOCKED",
                     {"serial": "BIGSERIAL PRIMARY KEY", "blob": "BYTEA"}, shared=True)


@lru_cache(maxsize=512)
def _to_pyformat(sql: str) -> str:
    """`?` → `%s`, `:name` → `%(name)s`, a literal `%` → `%%`; quoted text and `::` casts untouched."""
    out, i, quote = [], 0, None
    while i < len(sql):
        char = sql[i]
        if quote:
            out.append("%%" if char == "%" else char)
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
            out.append(char)
        elif char == "?":
            out.append("%s")
        elif char == "%":
            out.append("%%")
        elif char == ":" and i + 1 < len(sql) and sql[i + 1] == ":":
            out.append("::")
            i += 1
        elif char == ":" and i + 1 < len(sql) and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            j = i + 1
            while j < len(sql) and (sql[j].isalnum() or sql[j] == "_"):
                j += 1
            out.append(f"%({sql[i + 1:j]})s")
            i = j
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)
