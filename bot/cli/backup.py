"""`bot backup FILE`: the database (a consistent online copy, the service keeps running) and the
key in one 0600 archive (bot/service/backup.py). Restore it with `bot restore FILE`."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bot.config import Settings
from bot.service import backup
from bot.settings import manifest as first_run_app


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot backup", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="the archive to create (.tar.gz; must not exist)")
    args = parser.parse_args(argv)
    try:
        written = backup.backup(args.file, Settings.load(os.environ), sealed_files=(first_run_app.FILE,))
    except backup.BackupError as exc:
        print(f"bot backup: {exc}", file=sys.stderr)
        return 1
    print(f"backed up: database ({written['bytes']} bytes), key ({written['key']}) and "
          f"{len(written['files'])} sealed file(s) to {args.file}")
    return 0
