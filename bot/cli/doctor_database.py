"""`bot doctor`'s database section: where the data lives, its schema version, the connected workers."""
from __future__ import annotations

import time

from bot import config
from bot.db import Database, DatabaseConfigError, connect, migrations
from bot.service.wakeup import connected_workers


def database_section() -> dict:
    try:
        db = connect(migrate=False)  # the doctor looks; migrating is `bot migrate`'s or the service's
    except DatabaseConfigError as exc:
        return {"section": "database", "configured": True, "ok": False,
                "rows": [{"check": "database", "ok": False, "detail": str(exc)}]}
    try:
        rows = [{"check": "database", "ok": True, "detail": db.describe()}, _schema_row(db), _workers_row(db)]
        if db.shared:
            rows.append({"check": "shared key (BOT_SECRET_KEY)", "ok": config.is_set("BOT_SECRET_KEY"),
                         "detail": "set" if config.is_set("BOT_SECRET_KEY") else "not set"})
    finally:
        db.close()
    return {"section": "database", "configured": True, "ok": all(row["ok"] for row in rows), "rows": rows}


def _schema_row(db: Database) -> dict:
    version = migrations.version(db)
    if version > migrations.LATEST:
        return {"check": "schema version", "ok": False,
                "detail": f"{version}, newer than this bot knows ({migrations.LATEST}): upgrade this machine's bot"}
    pending = "" if version == migrations.LATEST else f" ({migrations.LATEST} is applied at start or by `bot migrate`)"
    return {"check": "schema version", "ok": True, "detail": f"{version}{pending}"}


def _workers_row(db: Database) -> dict:
    if "workers" not in db.table_names():
        return {"check": "connected workers", "ok": True, "detail": "none yet"}
    now = time.time()
    workers = connected_workers(db, now)
    listed = "; ".join(f"{w['host']} pid {w['pid']} v{w['version']} running {w['running']}/{w['capacity']}"
                       for w in workers)
    return {"check": "connected workers", "ok": True, "detail": f"{len(workers)}" + (f": {listed}" if listed else "")}
