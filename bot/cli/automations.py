"""`bot automations tick [--at TIME]`: evaluate every known repository's schedules once as of TIME
(ISO 8601, UTC when no zone; default now), claiming the latest due slot of each automation once
(bot/automations/schedule.py) and queueing its run in the same transaction (bot/service/schedules.py).
Safe to run beside the service and other ticks: a slot is claimed by one of them.

`bot automations token OWNER/REPO NAME [--revoke]`: make (or rotate) the token that fires the
automation NAME over HTTP, printed once (only its digest is stored), or revoke it
(bot/automations/fire_tokens.py). The operator's way; a repository's maintainers have its settings page."""
from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys

from bot.automations import fire, fire_tokens
from bot.config import Settings
from bot.db import Database
from bot.service import schedules, store


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot automations", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    tick = commands.add_parser("tick", help="evaluate the schedules once")
    tick.add_argument("--at", type=_moment, default=None, help="the time to evaluate as of (ISO 8601, UTC)")
    token = commands.add_parser("token", help="make, rotate or revoke an automation's fire token")
    token.add_argument("repo", type=_repo, help="OWNER/REPO")
    token.add_argument("name", type=_name, help="the automation's name in .github/bot.yml")
    token.add_argument("--revoke", action="store_true", help="revoke the token instead")
    args = parser.parse_args(argv)
    db = store.connect(settings=Settings.load(os.environ))
    if args.command == "token":
        return _token(db, args.repo, args.name, args.revoke)
    due = schedules.tick(db, args.at or dt.datetime.now(dt.UTC))
    for repo, name, slot in due:
        print(f"{repo} {name} {slot}")
    print(f"{len(due)} slot(s) due")
    return 0


def _token(db: Database, repo: str, name: str, revoke: bool) -> int:
    if revoke:
        done = fire_tokens.revoke(db, repo, name)
        print(f"revoked the fire token of {name} in {repo}" if done else f"{name} in {repo} has no fire token",
              file=sys.stderr)
        return 0 if done else 1
    if fire.target(db, repo, name) is None:
        print(f"note: as the bot last read {repo}'s .github/bot.yml, {name} does not declare `fire`: a call is "
              "answered 404 until it does (the settings page, or an event, reads the file again)", file=sys.stderr)
    print(fire_tokens.issue(db, repo, name, repo_id=None, installation_id=None, by="operator"))
    return 0


def _repo(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,100}/[A-Za-z0-9_.\-]{1,100}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not OWNER/REPO")
    return text


def _name(text: str) -> str:
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,62}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an automation's name")
    return text


def _moment(text: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (2026-12-07T06:00Z)") from None
