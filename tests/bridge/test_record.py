"""The run record (bot/record.py): runs and run_events in a real SQLite file."""
from __future__ import annotations

import json

from adapters.base import Event, EventKind, Tier
from bot.record.recorder import Recorder, args_digest
from sandbox.base import EgressDecision

SECRET = "sk-test-SECRET-value-123"


def test_start_run_creates_running_row(recorder):
    """A started run is stored with its agent, conversation and status running."""
    run_id = recorder.start_run(agent="claude", conversation="o/r#1", limits={"timeout_s": 60})
    run = recorder.run(run_id)
    assert (run["agent"], run["conversation"], run["status"], run["limits"]) == (
        "claude", "o/r#1", "running", {"timeout_s": 60})


def test_database_is_in_wal_mode(recorder):
    """The shared bot.db runs in WAL mode so other modules can read while we write."""
    assert recorder.db.execute("pragma journal_mode").fetchone()["journal_mode"] == "wal"


def test_enforced_call_stores_digest_not_arguments(recorder, run_id):
    """A bridged call keeps the arguments' digest, never the file content itself."""
    args = {"path": "a.py", "content": "print('hello there')"}
    recorder.enforced(run_id, "save_file", args, outcome="ok", duration_ms=1.5, detail={"path": "a.py"})
    [event] = recorder.events(run_id)
    assert (event["tier"], event["tool"], event["args_digest"]) == ("enforced", "save_file", args_digest(args))
    assert "hello there" not in json.dumps(event)


def test_attested_event_keeps_raw_line(recorder, run_id):
    """A CLI event is recorded attested with its own line verbatim."""
    line = b'{"type":"item.completed","item":{"type":"agent_message","text":"done"}}'
    recorder.attest(run_id, Event(kind=EventKind.TEXT, text="done", raw=line))
    [event] = recorder.events(run_id)
    assert (event["tier"], event["kind"], event["raw"]) == ("attested", "text", line.decode())


def test_secret_in_raw_line_is_redacted(recorder, run_id):
    """A secret the CLI echoed never reaches the database."""
    recorder.attest(run_id, Event(kind=EventKind.ERROR, error=f"bad key {SECRET}",
                                  raw=f'{{"error":"bad key {SECRET}"}}'.encode()))
    dump = json.dumps(recorder.events(run_id))
    assert SECRET not in dump and "[redacted]" in dump


def test_secret_in_summary_is_redacted(recorder, run_id):
    """Run summaries pass through the same redaction."""
    recorder.finish_run(run_id, "ok", summary={"answer": f"the key is {SECRET}"})
    assert SECRET not in json.dumps(recorder.run(run_id))


def test_declared_gap_is_unobserved(recorder, run_id):
    """A declared gap is stored as an unobserved event naming what is not seen."""
    recorder.declare_gap(run_id, "codex's model calls")
    [event] = recorder.events(run_id)
    assert (event["tier"], event["kind"], event["raw"]) == ("unobserved", "gap", "codex's model calls")


def test_sequence_numbers_are_per_run(recorder, run_id):
    """Each run numbers its events from 1, independently of other runs."""
    other = recorder.start_run(agent="gemini")
    recorder.declare_gap(run_id, "a")
    recorder.declare_gap(other, "b")
    recorder.declare_gap(run_id, "c")
    assert [e["seq"] for e in recorder.events(run_id)] == [1, 2]
    assert [e["seq"] for e in recorder.events(other)] == [1]


def test_egress_counts_per_host(recorder, run_id):
    """The proxy's decisions become per-host allowed/denied counts on the run."""
    decisions = [EgressDecision("api.openai.com", 443, True, "allowlist", bytes_up=10, bytes_down=20),
                 EgressDecision("api.openai.com", 443, True, "allowlist", bytes_up=1, bytes_down=2),
                 EgressDecision("evil.example", 443, False, "not allowed")]
    recorder.attach_egress(run_id, decisions)
    assert recorder.run(run_id)["egress"] == {
        "api.openai.com": {"allowed": 2, "denied": 0, "bytes_up": 11, "bytes_down": 22},
        "evil.example": {"allowed": 0, "denied": 1, "bytes_up": 0, "bytes_down": 0}}


def test_run_found_by_unambiguous_prefix(recorder):
    """`bot runs show` accepts a prefix of the id when only one run has it."""
    run_id = recorder.start_run(agent="codex", run_id="abc123")
    recorder.start_run(agent="codex", run_id="abd999")
    assert recorder.run("abc")["id"] == run_id and recorder.run("ab") is None


def test_tier_counts_match_events(recorder, run_id):
    """Tier counts are computed from the stored events."""
    recorder.enforced(run_id, "run", {"command": "pytest"}, outcome="ok", duration_ms=1)
    recorder.attest(run_id, Event(kind=EventKind.TEXT, raw=b"x"))
    recorder.attest(run_id, Event(kind=EventKind.PROGRESS, raw=b"y"))
    assert recorder.tier_counts(run_id) == {"enforced": 1, "attested": 2}


def test_two_recorders_share_one_database(tmp_path):
    """Another process's Recorder on the same file sees the same runs."""
    first = Recorder(tmp_path / "bot.db")
    run_id = first.start_run(agent="opencode")
    first.record(run_id, Tier.ENFORCED, "halt", raw="stopped")
    assert Recorder(tmp_path / "bot.db").events(run_id)[0]["kind"] == "halt"
