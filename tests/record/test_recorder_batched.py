"""The recorder queues events and a writer thread stores them in batches (bot/record/event_log.py,
bot/record/event_writer.py): recording costs the caller no database statement and no wait, and
every reader in the process, and every end of a run, sees every event recorded before it."""
from __future__ import annotations

import asyncio
import sqlite3
import threading

from adapters.base import Event, EventKind, Tier
from bot.db import connect
from bot.record import event_log, event_writer
from bot.record.recorder import Recorder

SECRET = "sk-ant-api03-" + "s" * 40


def recorder_at(tmp_path) -> Recorder:
    return Recorder(connect(path=tmp_path / "bot.db"), secrets=[SECRET])


def stored(tmp_path, run_id: str) -> list[tuple]:
    """The run's events as another process would read them: a connection of its own."""
    with sqlite3.connect(tmp_path / "bot.db") as other:
        return other.execute("SELECT seq, kind, raw FROM run_events WHERE run_id = ? ORDER BY seq",
                             [run_id]).fetchall()


def test_recording_an_event_runs_no_statement_on_the_callers_connection(tmp_path):
    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    statements: list[str] = []
    recorder.db.conn.set_trace_callback(statements.append)
    recorder.attest(run_id, Event(EventKind.TEXT, raw=b'{"type":"text","text":"hello"}'))
    recorder.declare_gap(run_id, "codex's model calls")
    recorder.db.conn.set_trace_callback(None)
    assert statements == []
    assert [kind for _, kind, _ in _read(recorder, run_id)] == ["text", "gap"]


def test_an_event_recorded_while_another_process_holds_the_write_lock_returns_at_once(tmp_path):
    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    other = sqlite3.connect(tmp_path / "bot.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock: a write on the caller's thread would wait
    try:
        seq = recorder.declare_gap(run_id, "recorded while the database was busy")
    finally:
        other.execute("ROLLBACK")
    assert seq == 1 and [raw for _, _, raw in _read(recorder, run_id)] == ["recorded while the database was busy"]


def test_finishing_a_run_returns_only_once_its_events_are_stored(tmp_path, monkeypatch):
    finished = threading.Event()
    written_after_finish: list[bool] = []
    redact = event_writer.redact

    def redact_after_a_look_at_finish(text, secrets):
        if not written_after_finish:  # the writer's first event: is finish_run already back?
            written_after_finish.append(finished.wait(2))
        return redact(text, secrets)

    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    monkeypatch.setattr(event_writer, "redact", redact_after_a_look_at_finish)
    for n in range(5):
        recorder.attest(run_id, Event(EventKind.TEXT, raw=f'{{"n":{n}}}'.encode()))
    recorder.finish_run(run_id, "ok")
    finished.set()
    assert written_after_finish == [False]
    assert len(stored(tmp_path, run_id)) == 5


def test_a_finished_run_recorded_again_numbers_on(tmp_path):
    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    recorder.declare_gap(run_id, "one")
    recorder.finish_run(run_id, "ok")
    assert Recorder(recorder.db).record(run_id, Tier.ENFORCED, "commit", raw="3f2a9c1") == 2
    assert [seq for seq, _, _ in _read(recorder, run_id)] == [1, 2]


def test_a_run_another_process_wrote_numbers_on_from_the_database(tmp_path):
    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    with sqlite3.connect(tmp_path / "bot.db") as other:  # a `bot run` that was killed wrote these
        other.executemany("INSERT INTO run_events (run_id, seq, tier, kind, raw) VALUES (?, ?, 'attested', 'text', ?)",
                          [(run_id, seq, f"line {seq}") for seq in (1, 2, 3)])
    event_log.event_log(recorder.db).forget(run_id)  # as a process that never saw the run
    assert Recorder(recorder.db).record(run_id, Tier.ENFORCED, "request", raw="the request") == 4


def test_a_flood_of_events_is_stored_whole_and_in_the_order_recorded(tmp_path):
    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    for n in range(1, 1001):
        recorder.attest(run_id, Event(EventKind.TEXT, raw=f'{{"n":{n}}}'.encode()))
    assert [(e["seq"], e["raw"]) for e in recorder.events(run_id)] == [(n, f'{{"n":{n}}}') for n in range(1, 1001)]


def test_a_secret_in_a_queued_event_never_reaches_the_database(tmp_path):
    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    recorder.record(run_id, Tier.ATTESTED, "error", tool=f"tool {SECRET}", outcome=f"bad key {SECRET}",
                    raw=f'{{"error":"{SECRET}"}}'.encode())
    recorder.flush(run_id)
    with sqlite3.connect(tmp_path / "bot.db") as other:
        dump = repr(other.execute("SELECT * FROM run_events").fetchall())
    assert SECRET not in dump and "[redacted]" in dump


async def test_a_flood_reader_waits_while_the_queue_is_over_its_mark(tmp_path, monkeypatch):
    gate = threading.Event()
    redact = event_writer.redact

    def redact_once_let_through(text, secrets):
        gate.wait(30)
        return redact(text, secrets)

    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    monkeypatch.setattr(event_writer, "redact", redact_once_let_through)
    for n in range(event_log.HIGH_WATER + 1):
        recorder.declare_gap(run_id, f"gap {n}")
    waiting = asyncio.create_task(recorder.attest_async(run_id, Event(EventKind.TEXT, raw=b'{"n":"last"}')))
    await asyncio.sleep(0)
    held = not waiting.done()  # only the writer's progress can let it go, and the writer is held
    gate.set()
    assert held and await waiting == event_log.HIGH_WATER + 2


async def test_waiting_for_events_to_be_stored_leaves_the_event_loop_running(tmp_path):
    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    other = sqlite3.connect(tmp_path / "bot.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    recorder.declare_gap(run_id, "stored once the other process lets go")
    asyncio.get_running_loop().call_soon(other.execute, "ROLLBACK")  # runs only if the loop does
    await asyncio.wait_for(recorder.flushed(run_id), 60)
    assert [raw for _, _, raw in stored(tmp_path, run_id)] == ["stored once the other process lets go"]


def _read(recorder: Recorder, run_id: str) -> list[tuple]:
    return [(e["seq"], e["kind"], e["raw"]) for e in recorder.events(run_id)]


def test_the_process_wide_event_log_keeps_no_callers_connection_alive(tmp_path):
    """Each database's log lives as long as the process: it keeps how to connect, never the first
    caller's connection (a test suite of thousands of databases ran out of descriptors)."""
    import gc
    import weakref

    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    recorder.attest(run_id, Event(EventKind.TEXT, raw=b'{"type":"text","text":"hello"}'))
    recorder.finish_run(run_id, "ok")
    first = weakref.ref(recorder.db)
    del recorder
    gc.collect()
    assert first() is None


def test_an_event_is_stamped_when_recorded_not_when_written_in_the_runs_time_format(tmp_path, monkeypatch):
    """The writer makes the time's text (off the event loop); the time is still the recording's."""
    import re
    import time

    from bot.record.recorder import now_iso

    go = threading.Event()
    redact = event_writer.redact
    monkeypatch.setattr(event_writer, "redact", lambda text, secrets: go.wait(5) and redact(text, secrets))
    recorder = recorder_at(tmp_path)
    run_id = recorder.start_run(agent="codex")
    before = now_iso()
    recorder.declare_gap(run_id, "stamped now")
    after = now_iso()
    time.sleep(0.02)  # the writer is held meanwhile: a time made when it writes would be later than `after`
    go.set()
    recorder.flush(run_id)
    with sqlite3.connect(tmp_path / "bot.db") as other:
        (ts,) = other.execute("SELECT ts FROM run_events WHERE run_id = ?", [run_id]).fetchone()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", ts)
    assert before <= ts <= after
