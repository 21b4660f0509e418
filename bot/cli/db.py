"""`bot db copy --from URL --to URL`: move a deployment to another database, e.g. the data dir's
SQLite file into PostgreSQL, with every row (jobs, sessions, runs and events, secrets and their
audit, settings sessions, spend, packed homes). Stop the service first; the target must be empty.
Set BOT_SECRET_KEY to the old data dir's secret.key so the sealed rows still open."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bot.config import Settings
from bot.db import connect
from bot.db.copy import CopyRefused, copy


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot db", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    copier = commands.add_parser("copy", help="copy every table into an empty database")
    copier.add_argument("--from", dest="source", required=True, help="sqlite:///path/bot.db or postgresql://…")
    copier.add_argument("--to", dest="target", required=True, help="postgresql://… (an empty database)")
    args = parser.parse_args(argv)
    settings = Settings.load(os.environ)
    problem = _key_mismatch(args.source, settings.text("BOT_SECRET_KEY"))
    if problem:
        print(f"bot db copy: {problem}", file=sys.stderr)
        return 2
    try:
        counts = copy(connect(args.source, settings=settings), connect(args.target, settings=settings))
    except CopyRefused as exc:
        print(f"bot db copy: {exc}", file=sys.stderr)
        return 1
    for table, rows in counts.items():
        print(f"{table:<18} {rows:>8} rows")
    return 0


def _key_mismatch(source: str, secret_key: str | None) -> str | None:
    """Sealed rows copied from a data dir whose key file is not BOT_SECRET_KEY would never open."""
    if not source.startswith("sqlite:///"):
        return None
    key_file = Path(source.removeprefix("sqlite:///")).parent / "secret.key"
    if key_file.exists() and key_file.read_text().strip() != (secret_key or "").strip():
        return (f"set BOT_SECRET_KEY to the contents of {key_file} first: the copied secrets are sealed "
                "with it, and every process on the new database must use the same key")
    return None
