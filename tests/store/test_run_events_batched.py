"""Run events written in batches by the recorder's writer thread, on each backend (the `backend`
fixture: the data dir's SQLite file, or a fresh PostgreSQL database)."""
from __future__ import annotations

import pytest

from adapters.base import Event, EventKind, Tier
from bot.db import another
from bot.record.event_log import BATCH
from bot.record.recorder import Recorder
from tests.entry_settings import database


@pytest.fixture(autouse=True)
def on_each_backend(backend):
    yield backend


def stored(run_id: str) -> list[dict]:
    """The run's events through a connection of their own, as another process reads them."""
    other = database()
    try:
        return other.query("SELECT seq, tier, kind, tool, outcome, raw FROM run_events WHERE run_id = ? ORDER BY seq",
                           [run_id])
    finally:
        other.close()


def test_events_of_several_batches_are_read_back_whole_and_in_order():
    recorder = Recorder(database())
    run_id = recorder.start_run(agent="codex")
    count = 2 * BATCH + 7
    for n in range(count):
        recorder.attest(run_id, Event(EventKind.TEXT, raw=f'{{"n":{n}}}'.encode()))
    assert [(e["seq"], e["raw"]) for e in recorder.events(run_id)] == [(n + 1, f'{{"n":{n}}}') for n in range(count)]


def test_a_finished_run_has_every_event_stored_for_other_processes():
    recorder = Recorder(database())
    run_id = recorder.start_run(agent="codex")
    for n in range(BATCH + 1):
        recorder.declare_gap(run_id, f"gap {n}")
    recorder.finish_run(run_id, "ok")
    assert [e["seq"] for e in stored(run_id)] == list(range(1, BATCH + 2))


def test_an_event_the_database_refuses_is_stored_as_a_stand_in_and_the_next_ones_follow():
    recorder = Recorder(database())
    run_id = recorder.start_run(agent="codex")
    recorder.declare_gap(run_id, "before")
    recorder.enforced(run_id, "read_\ud800file", {"path": "a"}, outcome="refused", duration_ms=0.1)  # no UTF-8 for it
    recorder.declare_gap(run_id, "after")
    recorder.flush(run_id)
    events = stored(run_id)
    assert [(e["seq"], e["kind"]) for e in events] == [(1, "gap"), (2, "tool_call"), (3, "gap")]
    assert events[1]["outcome"] == "not stored" and "could not be stored" in events[1]["raw"]
    assert (events[1]["tier"], events[2]["raw"]) == (Tier.ENFORCED.value, "after")


def test_another_connection_to_the_same_database_sees_what_the_first_wrote():
    db = database()
    db.execute("INSERT INTO runs (id, agent, status) VALUES (?, 'codex', 'running')", ["run-seen"])
    twin = another(db)
    try:
        assert twin.query("SELECT agent FROM runs WHERE id = ?", ["run-seen"]) == [{"agent": "codex"}]
    finally:
        twin.close()
