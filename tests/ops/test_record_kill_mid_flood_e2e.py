"""kill -9 of `bot serve` while a CLI floods its stdout and makes bridged calls: after a restart,
the record holds every bridged call whose answer the CLI received (a call is answered only once
its event is stored), and what it holds of the run has no hole and keeps the CLI's order. Lines
the CLI printed after the last stored event may be gone: nothing acted on them."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.ops.acked_flood_cli import AckedFlood
from tests.ops.soak import _comment_payload
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e
FLOODING = 101


def run_events(data: Path) -> list[dict]:
    """The flooding episode's events, read from the service's database after the restart."""
    with sqlite3.connect(data / "bot.db") as db:
        db.row_factory = sqlite3.Row
        [run_id] = [row["id"] for row in db.execute("SELECT id FROM runs ORDER BY started_at LIMIT 1")]
        return [dict(row) for row in db.execute("SELECT seq, tier, kind, raw FROM run_events WHERE run_id = ? "
                                                "ORDER BY seq", [run_id])]


def test_every_answered_bridged_call_is_in_the_record_after_a_kill_mid_flood(tmp_path):
    gh = seeded_github()
    cli = AckedFlood(tmp_path / "cli")
    env = service_env(tmp_path, gh, make_remote(tmp_path), "http://127.0.0.1:9", BOT_CODEX_BIN=str(cli.path),
                      BOT_SANDBOX_TIER="0", BOT_WORKERS="1")
    services = [Service(env, tmp_path / "serve1.log").start()]
    try:
        cli.arm()
        gh.add_comment(REPO, 1, "@bot codex flood", user="Codertocat", comment_id=FLOODING)
        assert services[0].deliver(_comment_payload(1, FLOODING, "@bot codex flood")).status_code == 202
        cli.wait_acked(10)
        services[0].kill()
        acked = cli.acked()
        services.append(Service(env, tmp_path / "serve2.log").start())
        events = run_events(Path(env["BOT_DATA_DIR"]))
    finally:
        cli.stop()
        for service in services:
            service.stop()
        gh.stop()

    calls = [json.loads(e["raw"]).get("path") for e in events if e["kind"] == "tool_call"]
    assert [f"ack-{n}.txt" for n in acked] == calls[:len(acked)]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    printed = [json.loads(e["raw"])["n"] for e in events if e["tier"] == "attested" and '"turn.progress"' in e["raw"]]
    assert printed == list(range(1, len(printed) + 1)) and len(printed) >= len(acked) * 200
