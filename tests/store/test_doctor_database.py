"""`bot doctor` shows the database, its schema version and the connected workers."""
from __future__ import annotations

import os
import time

from bot.cli.doctor_database import database_section
from bot.config import Settings
from bot.db import migrations
from bot.service import store, wakeup
from tests.entry_settings import current


def _rows() -> dict[str, dict]:
    return {row["check"]: row for row in database_section(Settings(dict(os.environ)))["rows"]}


def test_doctor_names_the_backend_and_the_schema_version(backend):
    store.connect(settings=current())
    rows = _rows()
    assert rows["database"]["detail"].startswith("PostgreSQL" if backend == "postgresql" else "SQLite")
    assert rows["schema version"]["detail"] == str(migrations.LATEST)


def test_doctor_lists_the_workers_that_heartbeat(backend):
    wakeup.beat(store.connect(settings=current()), "host-b:7:abc", running=1, capacity=2, started_at=time.time())
    assert "1: " in _rows()["connected workers"]["detail"] and "running 1/2" in _rows()["connected workers"]["detail"]


def test_a_database_newer_than_the_bot_is_not_ok(backend):
    db = store.connect(settings=current())
    db.execute("INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, 'future', 0)",
               [migrations.LATEST + 1])
    section = database_section(Settings(dict(os.environ)))
    assert section["ok"] is False and "upgrade" in _rows()["schema version"]["detail"]
