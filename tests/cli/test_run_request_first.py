"""`bot run`'s request joins the run's record before the answer and its provenance are shown
(bot/cli/run.py:request_first), so the provenance's counts are the record's."""
from __future__ import annotations

import io

from adapters.base import Tier
from bot.cli.render import Terminal
from bot.cli.run import request_first
from bot.record import provenance
from bot.record.recorder import Recorder
from bot.record.secrets import Secrets
from tests.entry_settings import database

KEY = "sk-local-test-abcdef0123456789"


def _finished_run(recorder: Recorder) -> str:
    run_id = recorder.start_run(agent="codex", conversation="local:/repo")
    recorder.record(run_id, Tier.ENFORCED, "tool_call", tool="save_file", outcome="ok")
    recorder.record(run_id, Tier.ATTESTED, "text", raw="Wrote calc.py.")
    return run_id


def _answered(request: str, secrets: Secrets) -> tuple[Recorder, str, Terminal]:
    db = database()
    recorder = Recorder(db)
    run_id = _finished_run(recorder)
    term = Terminal(out=io.StringIO(), err=io.StringIO())
    request_first(db, term, request, secrets)("Wrote calc.py.", provenance.build(recorder, run_id))
    return recorder, run_id, term


def test_the_request_is_recorded_before_the_answer_is_shown():
    recorder, run_id, term = _answered("write calc.py", Secrets())
    assert term.result.answer == "Wrote calc.py."
    assert [(e["kind"], e["raw"]) for e in recorder.events(run_id) if e["kind"] == "request"] == [
        ("request", "write calc.py")]


def test_the_shown_counts_are_the_records_with_the_request():
    recorder, run_id, term = _answered("write calc.py", Secrets())
    shown = term.result.provenance
    assert shown is not None
    counted = recorder.tier_counts(run_id)
    assert (shown.tiers["enforced"]["count"], shown.tiers["attested"]["count"]) == (counted["enforced"],
                                                                                  counted["attested"]) == (2, 1)


def test_a_secret_in_the_request_is_masked_in_the_record():
    recorder, run_id, _ = _answered(f"use {KEY} to call it", Secrets([KEY]))
    [request] = [e["raw"] for e in recorder.events(run_id) if e["kind"] == "request"]
    assert KEY not in request and request.startswith("use ")
