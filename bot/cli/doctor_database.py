"""`bot doctor`'s database section: the database the service or `bot run` would use, its schema
version and the connected workers, each row ok, warning, missing or failed.

Nothing is created: a database not there yet is a finding (`missing`), and the doctor never
migrates (that is `bot migrate`'s or the service's).
"""
from __future__ import annotations

import time
from pathlib import Path

from bot.cli import preflight
from bot.config import Settings
from bot.db import Database, DatabaseConfigError, connect, migrations
from bot.service.wakeup import connected_workers

SERVICE_DIR = Path(".bot-data")  # `bot serve`'s default BOT_DATA_DIR, relative to where it runs


def chosen_data_dir(settings: Settings) -> tuple[Path, str]:
    """The data dir the service or `bot run` would use, and whose it is: BOT_DATA_DIR when set;
    else the service's ./.bot-data when a database is there (the service runs in this folder);
    else `bot run`'s per-user folder."""
    if settings.is_set("BOT_DATA_DIR"):
        return settings.path("BOT_DATA_DIR").resolve(), "BOT_DATA_DIR"
    if (SERVICE_DIR / "bot.db").is_file():
        return SERVICE_DIR.resolve(), "the service's, in this folder"
    return preflight.user_data_dir(), "bot run's per-user data dir"


def database_section(settings: Settings) -> dict:
    server = bool(settings.text("BOT_DATABASE_URL"))
    folder, whose = chosen_data_dir(settings)
    file = folder / "bot.db"
    if not server and not file.is_file():
        return _section([_row("database", "missing", f"none yet at {file} ({whose}): the first `bot run` creates it")])
    try:
        db = connect(migrate=False, settings=settings) if server else connect(path=file, migrate=False)
    except DatabaseConfigError as exc:
        return _section([_row("database", "failed", str(exc))])
    try:
        where = db.describe() + ("" if server else f" ({whose})")
        rows = [_row("database", "ok", where), _schema_row(db), _workers_row(db)]
        if db.shared:
            key = settings.is_set("BOT_SECRET_KEY")
            rows.append(_row("shared key (BOT_SECRET_KEY)", "ok" if key else "failed", "set" if key else "not set"))
    finally:
        db.close()
    return _section(rows)


def _row(check: str, state: str, detail: str) -> dict:
    return {"check": check, "ok": state == "ok", "state": state, "detail": detail}


def _section(rows: list[dict]) -> dict:
    return {"section": "database", "configured": True, "ok": all(row["state"] != "failed" for row in rows),
            "rows": rows}


def _schema_row(db: Database) -> dict:
    version = migrations.version(db)
    if version > migrations.LATEST:
        return _row("schema version", "failed",
                    f"{version}, newer than this bot knows ({migrations.LATEST}): upgrade this machine's bot")
    if version < migrations.LATEST:
        return _row("schema version", "warning",
                    f"{version}, not {migrations.LATEST} yet: `bot serve` or `bot migrate` applies the rest")
    return _row("schema version", "ok", str(version))


def _workers_row(db: Database) -> dict:
    """The processes heartbeating on this database: worker pools, and `bot serve` processes that
    run none (capacity 0: a first run waiting for its GitHub App, an intake with BOT_WORKERS=0)."""
    seen = connected_workers(db, time.time()) if "workers" in db.table_names() else []
    if not seen:
        return _row("connected workers", "missing", "none: no `bot serve` is running on this database")
    workers = [w for w in seen if w["capacity"] > 0]
    if not workers:
        hosts = "; ".join(f"{w['host']} pid {w['pid']}" for w in seen)
        return _row("connected workers", "warning",
                    f"no worker: `bot serve` runs here without workers ({hosts}); it starts them once its "
                    "GitHub App is set up, unless BOT_WORKERS=0 (then start `bot worker`)")
    listed = "; ".join(f"{w['host']} pid {w['pid']} v{w['version']} running {w['running']}/{w['capacity']}"
                       for w in workers)
    return _row("connected workers", "ok", f"{len(workers)}: {listed}")
