"""Copy a whole bot database into another one (an existing SQLite deployment into PostgreSQL):
every table of the schema, every row, the ids kept, in one transaction on the target, which must
be empty. Secrets, settings sessions and packed homes stay sealed: the target's processes need the
same key (BOT_SECRET_KEY set to the old data dir's secret.key)."""
from __future__ import annotations

from bot.db import Database, migrations
from bot.errors import BotError

BATCH = 1000


class CopyRefused(BotError, RuntimeError):
    """The target database already holds rows: copying would mix two deployments."""


def copy(source: Database, target: Database) -> dict[str, int]:
    """Rows copied per table."""
    migrations.migrate(source)
    migrations.migrate(target)
    busy = [t for t in migrations.TABLES if target.query(f"SELECT COUNT(*) AS n FROM {t}")[0]["n"]]
    if busy:
        raise CopyRefused(f"the target database is not empty ({', '.join(busy)} hold rows); copy into a new one")
    counts = {}
    with target.transaction():
        for table in migrations.TABLES:
            counts[table] = _copy_table(source, target, table)
        for table, column in migrations.SERIAL_KEYS.items():
            statement = target.dialect.reset_sequence(table, column)
            if statement:
                target.execute(statement)
    return counts


def _copy_table(source: Database, target: Database, table: str) -> int:
    wanted = target.execute(f"SELECT * FROM {table} LIMIT 0").columns
    result = source.execute(f"SELECT * FROM {table}")
    columns = [c for c in result.columns if c in wanted]
    insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    rows = [[row[c] for c in columns] for row in result.fetchall()]
    for start in range(0, len(rows), BATCH):
        target.executemany(insert, rows[start:start + BATCH])
    return len(rows)
