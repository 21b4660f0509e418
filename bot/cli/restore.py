"""`bot restore FILE [--force]`: put a `bot backup` archive's database and key back in the data
dir (stop the service first; the current database is kept aside)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bot.config import Settings
from bot.service import backup
from bot.settings import manifest


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot restore", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="an archive made by `bot backup`")
    parser.add_argument("--force", action="store_true", help="replace the data dir's current database")
    args = parser.parse_args(argv)
    try:
        done = backup.restore(args.file, Settings.load(os.environ), force=args.force,
                              sealed_files=(manifest.FILE,))
    except backup.BackupError as exc:
        print(f"bot restore: {exc}", file=sys.stderr)
        return 1
    aside = f"; the previous database is at {done.moved_aside}" if done.moved_aside else ""
    key = "and key " if done.key_restored else ""
    print(f"restored: database {key}to {done.database} ({done.secrets} secret(s) open){aside}")
    return 0
