"""`bot keys rotate [--key-out FILE]`: re-encrypt every stored secret under a new master key.

The old key is no longer needed afterwards (bot/credentials/rotation.py). With the key in the data
dir's secret.key, the running service picks the new key up at once; with BOT_SECRET_KEY, the new
key goes to FILE (0600) and the service must be restarted with it. Settings-page sessions end.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bot.config import Settings
from bot.credentials import rotation
from bot.episode import session_home
from bot.settings import manifest

# every sealed value the bot keeps beside the stored secrets
SESSION_HOMES = rotation.SealedColumn("session_homes", ("conversation", "agent"), "sealed",
                                      lambda row: session_home._context(row["conversation"], row["agent"]))


def sealed_files(data_dir: Path) -> tuple[rotation.SealedFile, ...]:
    return (rotation.SealedFile(data_dir / manifest.FILE, manifest.CONTEXT),)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot keys", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rotate = sub.add_parser("rotate", help="re-encrypt every secret under a new key")
    rotate.add_argument("--key-out", type=Path, help="where the new key goes when BOT_SECRET_KEY holds the old one")
    args = parser.parse_args(argv)
    try:
        settings = Settings.load(os.environ)
        done = rotation.rotate(settings, args.key_out, (rotation.SECRETS, SESSION_HOMES),
                               sealed_files(settings.data_dir))
    except rotation.RotationError as exc:
        print(f"bot keys rotate: {exc}", file=sys.stderr)
        return 1
    print(f"rotated: {done.secrets} sealed value(s) re-encrypted under the new key in {done.key_file}; "
          f"{done.sessions_ended} settings session(s) ended (sign in again)")
    return 0
