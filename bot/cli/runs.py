"""`bot runs list [--limit N] [--json]` and `bot runs show RUN_ID [--json]`: the recorded runs.

`list` is one aligned line per run: id, start, agent, status, duration, tokens, cost and the
request. `show` (an unambiguous id prefix is enough) is the run as a person reads it: what was
asked, what the agent answered, where it ran and what it spent, then every event on one line
(long details wrapped). `--json` is the same data as JSON values (numbers, booleans, objects),
never JSON inside strings.

Without BOT_DATA_DIR the per-user data folder is read (bot/cli/preflight.py), and nothing is
created when no run was ever recorded there.
A run a killed `bot run` left "running" is recorded interrupted first (bot/cli/local_runs.py).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters import base as adapters
from adapters.base import EventKind
from bot import config
from bot.cli import local_runs, preflight
from bot.cli.render import one_line, safe
from bot.config import Settings
from bot.record.provenance import model_spend
from bot.record.recorder import Recorder
from bot.service import store

TIERS = ("enforced", "attested", "unobserved")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bot runs", description="Show the runs recorded in the data dir.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{list,show}")
    listing = sub.add_parser("list", help="the most recent runs, newest first",
                             description="The most recent runs, newest first.")
    listing.add_argument("--limit", type=int, default=20, help="how many runs to show (default: 20)")
    listing.add_argument("--json", action="store_true", help="print the runs as a JSON array")
    show = sub.add_parser("show", help="one run: request, answer, spend and every event",
                          description="One run: request, answer, spend and every event.")
    show.add_argument("run_id", help="the run's id, or an unambiguous prefix of it (see `bot runs list`)")
    show.add_argument("--json", action="store_true", help="print the run and its events as one JSON object")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    explicit = Settings.load(os.environ).is_set("BOT_DATA_DIR")
    folder = preflight.use_user_data_dir()
    settings = Settings.load(os.environ)  # with the data dir the runs are in
    if not has_records(folder, settings.is_set("BOT_DATABASE_URL")):
        if args.command == "show":
            print(f"bot runs: no run {args.run_id!r}: nothing is recorded in {folder} "
                  "(`bot runs list` shows the runs of BOT_DATA_DIR)", file=sys.stderr)
            return 1
        print("[]" if args.json else f"no runs recorded yet (in {folder}){'' if explicit else service_hint()}")
        return 0
    recorder = Recorder(store.connect(settings=settings))
    local_runs.sweep(recorder, folder)  # a killed `bot run` left its run "running"
    if args.command == "list":
        return list_runs(recorder, args.limit, args.json)
    return show_run(recorder, args.run_id, args.json)


def service_hint() -> str:
    """`bot serve`'s default data dir is ./.bot-data: say so when one is here."""
    service = Path(next(v.default for v in config.VARIABLES if v.name == "BOT_DATA_DIR") or ".bot-data")
    if not (service / "bot.db").is_file():
        return ""
    return f"; the service's runs are in {service}: BOT_DATA_DIR={service} bot runs list"


def has_records(folder: Path, on_a_server: bool) -> bool:
    """Whether a database exists to read (a server database always does)."""
    return on_a_server or (folder / "bot.db").is_file()


# the data of a run ---------------------------------------------------------------------------

def described(recorder: Recorder, run: dict[str, Any], events: list[dict] | None = None) -> dict[str, Any]:
    """A run as values: parsed JSON columns, booleans, None for unknown, duration, spend, request."""
    events = recorder.events(run["id"]) if events is None else events
    row = dict(run)
    for column in ("limits", "egress", "summary"):
        if isinstance(row.get(column), str):
            row[column] = json.loads(row[column]) if row[column] else {}
    row["job_id"] = None if row.get("job_id") in (None, "", "None") else row["job_id"]
    row["resumed"] = None if row.get("resumed") is None else bool(row["resumed"])
    row["duration_s"] = _seconds_between(row.get("started_at"), row.get("finished_at"))
    spend = model_spend(events)
    row["tokens"] = spend.total_tokens if spend else None
    row["cost_usd"] = round(spend.cost_usd, 6) if spend and spend.cost_usd is not None else None
    row["request"] = request_of(recorder, row, events)
    row["answer"] = answer_of(row.get("agent"), events)
    row["events"] = len(events)
    return row


def request_of(recorder: Recorder, run: dict, events: list[dict]) -> str | None:
    """What was asked: the request the run recorded (`bot run`), else its job's (the service)."""
    for event in events:
        if event["kind"] == "request":
            return event["raw"]
    if run.get("job_id") and "jobs" in recorder.db.table_names():
        rows = list(recorder.db.query("select spec from jobs where id = ?", [run["job_id"]]))
        if rows:
            try:
                return (json.loads(rows[0]["spec"]).get("command") or {}).get("request")
            except (ValueError, AttributeError, TypeError):
                return None
    return None


def answer_of(agent: str | None, events: list[dict]) -> str | None:
    """The agent's last message, parsed again from the CLI's own lines the run kept."""
    if agent not in adapters.names():
        return None
    adapter = adapters.get(agent)
    texts = [event.text for row in events if row["tier"] == "attested" and row["kind"] == "text"
             for event in adapter.parse((row["raw"] or "").encode()) if event.kind == EventKind.TEXT]
    return texts[-1].strip() if texts and texts[-1].strip() else None


def event_value(event: dict) -> dict[str, Any]:
    """An event for --json: a detail recorded as JSON becomes an object."""
    row = dict(event)
    raw = row.pop("raw", "") or ""
    try:
        detail = json.loads(raw) if raw[:1] in ("{", "[") else None
    except ValueError:
        detail = None
    row["detail"] = detail if detail is not None else (raw or None)
    return row


# list ----------------------------------------------------------------------------------------

def list_runs(recorder: Recorder, limit: int, as_json: bool) -> int:
    runs = [described(recorder, run) for run in recorder.recent(limit)]
    if as_json:
        print(json.dumps(runs, indent=2))
        return 0
    if not runs:
        print("no runs recorded yet")
        return 0
    rows = [(run["id"][:12], _when(run.get("started_at")), run.get("agent") or "-", run.get("status") or "-",
             _duration(run["duration_s"]), _tokens(run["tokens"]), _cost(run["cost_usd"]),
             one_line(run["request"] or "-", 200)) for run in runs]
    header = ("RUN", "STARTED", "AGENT", "STATUS", "TIME", "TOKENS", "COST", "REQUEST")
    print("\n".join(_table([header, *rows], right={4, 5, 6})))
    return 0


def _table(rows: list[tuple[str, ...]], right: set[int]) -> list[str]:
    """Aligned columns; the last one takes what is left of the terminal's width."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    room = max(_width() - sum(widths) - 2 * len(widths), 20)
    lines = []
    for row in rows:
        cells = [cell.rjust(w) if i in right else cell.ljust(w)
                 for i, (cell, w) in enumerate(zip(row[:-1], widths, strict=True))]
        last = row[-1] if len(row[-1]) <= room else row[-1][:room - 1] + "…"
        lines.append("  ".join(cells + [last]).rstrip())
    return lines


# show ----------------------------------------------------------------------------------------

def show_run(recorder: Recorder, run_id: str, as_json: bool) -> int:
    found = recorder.run(run_id)
    if found is None:
        print(f"bot runs: no run {run_id!r} (or the prefix is ambiguous); see `bot runs list`",
              file=sys.stderr)
        return 1
    events = recorder.events(found["id"])
    run = described(recorder, found, events)
    if as_json:
        print(json.dumps({"run": run, "events": [event_value(e) for e in events]}, indent=2))
        return 0
    print("\n".join(run_lines(run, recorder.tier_counts(run["id"]))))
    print("\n".join(event_lines(events)))
    return 0


def run_lines(run: dict, counts: Counter) -> list[str]:
    summary = run.get("summary") or {}
    session = ("resumed session" if run.get("resumed") else "new session") if run.get("resumed") is not None else ""
    fields = [
        ("run", run["id"]),
        ("status", " · ".join(filter(None, [run.get("status"), f"{run.get('agent') or ''} "
                                           f"{run.get('agent_version') or ''}".strip(), session]))),
        ("error", summary.get("error")),
        ("started", f"{_when(run.get('started_at'))} · took {_duration(run['duration_s'])}"
         if run.get("started_at") else None),
        ("thread", f"{run['conversation']}" + (f" (job {run['job_id']})" if run.get("job_id") else "")
         if run.get("conversation") else None),
        ("session", run.get("session_id")),
        ("spend", " · ".join(filter(None, [_tokens(run["tokens"]) + " tokens" if run["tokens"] else None,
                                           _cost(run["cost_usd"]) if run["cost_usd"] is not None else None]))),
        ("sandbox", _sandbox(run)),
        ("base", (run.get("base_commit") or "")[:12]),
        ("record", " · ".join(f"{counts.get(tier, 0)} {tier}" for tier in TIERS)),
    ]
    lines = [line for name, value in fields if value for line in _hanging(f"{name:<8} ", str(value))]
    for title, text in (("request", run.get("request")), ("answer", run.get("answer"))):
        lines += ["", title] + _wrapped(text or "(not recorded)", indent="  ")
    return lines


def event_lines(events: list[dict]) -> list[str]:
    lines = ["", f"events ({len(events)})"]
    for e in events:
        ms = f"{e['duration_ms']:.0f} ms" if e["duration_ms"] is not None else ""
        head = "  ".join(filter(None, [f"{e['seq']:>4}", (e["ts"] or "")[11:19], f"{e['tier']:<10}",
                                       e["kind"], e["tool"] or "", e["outcome"] or "", ms]))
        lines += _hanging("", head, indent=" " * 8)
        detail = _detail(e)
        if detail:
            lines += _wrapped(detail, indent=" " * 8, limit=600)
    return lines


def _detail(event: dict) -> str:
    """The bot's own detail as `key=value` words (a JSON object flattened); the CLI's own lines
    (attested) are left to --json."""
    if event["tier"] == "attested":
        return ""
    value = event_value(event)["detail"]
    if isinstance(value, dict):
        return " ".join(f"{key}={item}" for key, item in _flat(value) if item not in (None, "", [], {}))
    return " ".join(safe(str(value or "")).split())


def _flat(value: dict, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, item in sorted(value.items()):
        if isinstance(item, dict):
            yield from _flat(item, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", ",".join(map(str, item)) if isinstance(item, list) else item


def _wrapped(text: str, indent: str, limit: int | None = None) -> list[str]:
    text = safe(text)
    if limit and len(text) > limit:
        text = text[:limit - 1] + "…"
    width = max(_width() - len(indent), 30)
    lines = []
    for paragraph in text.splitlines() or [""]:
        lines += textwrap.wrap(paragraph, width, break_long_words=True, break_on_hyphens=False) or [""]
    return [indent + line if line else "" for line in lines]


def _hanging(lead: str, text: str, indent: str | None = None) -> list[str]:
    """`lead` + text on one line, wrapped at the terminal's width under a hanging indent."""
    return textwrap.wrap(one_line(text, 600), max(_width(), 40), initial_indent=lead,
                         subsequent_indent=indent if indent is not None else " " * len(lead),
                         break_on_hyphens=False) or [lead.rstrip()]


def _sandbox(run: dict) -> str | None:
    if run.get("sandbox_tier") is None:
        return None
    hosts = sorted(h for h, c in (run.get("egress") or {}).items() if c.get("allowed"))
    return f"tier {run['sandbox_tier']} · egress {', '.join(hosts) if hosts else 'none'}"


def _seconds_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    try:
        return round((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 3)
    except ValueError:
        return None


def _when(iso: str | None) -> str:
    if not iso:
        return "-"
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso[:16]


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    whole = int(round(seconds))
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


def _tokens(tokens: int | None) -> str:
    return f"{tokens:,}" if tokens else "-"


def _cost(usd: float | None) -> str:
    if usd is None:
        return "-"
    return f"${usd:.2f}" if usd >= 0.01 or usd == 0 else "<$0.01"


def _width() -> int:
    return shutil.get_terminal_size((100, 24)).columns
