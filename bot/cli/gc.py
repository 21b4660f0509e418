"""`bot gc [--dry-run]`: one retention sweep of the data dir now (bot/service/retention.py).

`--dry-run` prints what the sweep would remove and removes nothing. The service runs the same
sweep every BOT_GC_INTERVAL seconds; running both at once is safe (mirrors and spares are taken
under their locks, a thread with a queued or running job is skipped).
"""
from __future__ import annotations

import argparse
import asyncio
import os

from bot.config import Settings
from bot.service import retention, store


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot gc", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print what would go; remove nothing")
    args = parser.parse_args(argv)
    settings = Settings.load(os.environ)
    db = store.connect(settings=settings)
    policy = retention.Policy.from_settings(settings)
    planned = retention.plan(db, policy, settings.data_dir)
    print(f"data dir: {planned.disk_bytes} bytes on disk (budget {policy.budget_bytes})")
    for line in planned.lines():
        print(("would remove: " if args.dry_run else "") + line)
    if args.dry_run:
        return 0
    swept = asyncio.run(retention.apply(db, planned))
    print(f"removed: {swept.events} event(s) of {swept.runs} run(s), {swept.threads} CLI home(s), "
          f"{swept.spares} spare worktree(s), {len(swept.mirrors)} mirror(s), "
          f"{swept.refusals} config refusal record(s)")
    return 0
