"""`bot runs list` and `bot runs show` (bot/runs_cli.py) over the data dir's bot.db."""
from __future__ import annotations

import json

from bot.cli import main as cli
from bot.record.recorder import Recorder
from tests.entry_settings import database


def seeded_run() -> str:
    recorder = Recorder(database())  # $BOT_DATA_DIR/bot.db, set per test by the shared conftest
    run_id = recorder.start_run(agent="gemini", conversation="octo/repo#7")
    recorder.enforced(run_id, "save_file", {"path": "a"}, outcome="ok", duration_ms=2.5,
                      detail={"path": "a"})
    recorder.declare_gap(run_id, "gemini's model calls")
    return run_id


def test_list_shows_recent_runs(capsys):
    """`bot runs list` prints each run with its agent and status; with no request known, its request
    column says so ("-"), never the thread's id in the request's place."""
    run_id = seeded_run()
    assert cli.main(["runs", "list"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith(run_id[:12]))
    assert "gemini" in line and "running" in line and line.endswith(" -") and "octo/repo#7" not in line


def test_show_prints_events_and_tier_counts(capsys):
    """`bot runs show ID` prints every event and the tier totals."""
    run_id = seeded_run()
    assert cli.main(["runs", "show", run_id[:10]]) == 0
    out = capsys.readouterr().out
    assert "save_file" in out and "gemini's model calls" in out
    assert "record   1 enforced · 0 attested · 1 unobserved" in out


def test_show_json_is_the_whole_record(capsys):
    """`--json` gives the run and its events as JSON."""
    run_id = seeded_run()
    assert cli.main(["runs", "show", run_id, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["run"]["id"] == run_id and [e["seq"] for e in data["events"]] == [1, 2]


def test_show_unknown_run_fails_clearly(capsys):
    """An unknown id exits 1 and says how to find runs."""
    assert cli.main(["runs", "show", "nope"]) == 1
    assert "bot runs list" in capsys.readouterr().err
