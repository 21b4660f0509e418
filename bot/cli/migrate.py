"""`bot migrate`: bring the database (BOT_DATABASE_URL, else the data dir's SQLite file) to the
latest schema. Every process also does this when it starts, under a lock, so running it first is
only for operators who want the migration to happen at a moment they choose (docs/deploy.md)."""
from __future__ import annotations

import argparse
import os

from bot.config import Settings
from bot.db import connect, migrations


def main(argv: list[str]) -> int:
    argparse.ArgumentParser(prog="bot migrate", description=__doc__).parse_args(argv)
    db = connect(migrate=False, settings=Settings.load(os.environ))
    before = migrations.version(db)
    applied = migrations.migrate(db)
    print(f"{db.describe()}: schema version {before} → {migrations.version(db)}"
          + (f" (applied {', '.join(map(str, applied))})" if applied else " (nothing to do)"))
    return 0
