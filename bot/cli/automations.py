"""`bot automations tick [--at TIME]`: evaluate every known repository's schedules once as of TIME
(ISO 8601, UTC when no zone; default now), claiming the latest due slot of each automation once
(bot/automations/schedule.py) and queueing its run in the same transaction (bot/service/schedules.py).
Safe to run beside the service and other ticks: a slot is claimed by one of them."""
from __future__ import annotations

import argparse
import datetime as dt
import os

from bot.config import Settings
from bot.service import schedules, store


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot automations", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    tick = commands.add_parser("tick", help="evaluate the schedules once")
    tick.add_argument("--at", type=_moment, default=None, help="the time to evaluate as of (ISO 8601, UTC)")
    args = parser.parse_args(argv)
    db = store.connect(settings=Settings.load(os.environ))
    due = schedules.tick(db, args.at or dt.datetime.now(dt.UTC))
    for repo, name, slot in due:
        print(f"{repo} {name} {slot}")
    print(f"{len(due)} slot(s) due")
    return 0


def _moment(text: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (2026-12-07T06:00Z)") from None
