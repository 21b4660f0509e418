"""`bot runs list [--limit N] [--json]` and `bot runs show RUN_ID [--json]`: the recorded runs.

`show` accepts an unambiguous id prefix and prints the run, then every event in order
(seq, time, tier, kind, tool, outcome, duration, raw line) and the tier counts.
"""
from __future__ import annotations

import argparse
import json
import sys

from bot.record.recorder import Recorder


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot runs", description="show the recorded runs")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="the most recent runs")
    listing.add_argument("--limit", type=int, default=20)
    listing.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="one run's whole record")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    recorder = Recorder()
    if args.command == "list":
        return list_runs(recorder, args.limit, args.json)
    return show_run(recorder, args.run_id, args.json)


def list_runs(recorder: Recorder, limit: int, as_json: bool) -> int:
    runs = recorder.recent(limit)
    if as_json:
        print(json.dumps(runs, indent=2))
        return 0
    if not runs:
        print("no runs recorded yet")
        return 0
    print(f"{'run':<12} {'started':<24} {'agent':<9} {'status':<10} {'events':>6}  conversation")
    for run in runs:
        print(f"{run['id'][:12]:<12} {run['started_at'] or '':<24} {run['agent'] or '':<9} "
              f"{run['status'] or '':<10} {run['events']:>6}  {run['conversation'] or ''}")
    return 0


def show_run(recorder: Recorder, run_id: str, as_json: bool) -> int:
    run = recorder.run(run_id)
    if run is None:
        print(f"bot runs: no run {run_id!r} (or the prefix is ambiguous); see `bot runs list`",
              file=sys.stderr)
        return 1
    events = recorder.events(run["id"])
    if as_json:
        print(json.dumps({"run": run, "events": events}, indent=2))
        return 0
    for key in ("id", "conversation", "job_id", "agent", "agent_version", "session_id", "resumed",
                "mode", "status", "started_at", "finished_at", "sandbox_tier", "base_commit"):
        print(f"{key:<14} {run.get(key) if run.get(key) is not None else '—'}")
    for key in ("limits", "egress", "summary"):
        print(f"{key:<14} {json.dumps(run[key], sort_keys=True) if run[key] else '—'}")
    print(f"\n{'seq':>4} {'time':<12} {'tier':<10} {'kind':<11} {'tool':<15} {'outcome':<24} {'ms':>8}  raw")
    for e in events:
        duration = f"{e['duration_ms']:.1f}" if e["duration_ms"] is not None else ""
        raw = (e["raw"] or "").replace("\n", "\\n")
        print(f"{e['seq']:>4} {e['ts'][11:23]:<12} {e['tier']:<10} {e['kind']:<11} {e['tool'] or '':<15} "
              f"{(e['outcome'] or '')[:24]:<24} {duration:>8}  {raw[:200]}")
    counts = recorder.tier_counts(run["id"])
    print("\n" + " · ".join(f"{tier} {counts.get(tier, 0)}" for tier in ("enforced", "attested", "unobserved")))
    return 0
