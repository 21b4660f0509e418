"""The gauges /metrics reads from the database (jobs by status and agent) on both backends."""
from __future__ import annotations

from bot.service import store
from bot.web import health
from tests.entry_settings import current


def _queue(db, delivery_id: str, agent: str | None, kind: str = "episode") -> None:
    command = {} if agent is None else {"agent": agent}
    store.write(db, lambda conn: store.enqueue_delivery(
        conn, delivery_id=delivery_id, event="issue_comment", action="created", kind=kind,
        conversation=f"o/r#{delivery_id}", spec={"command": command}))


def _jobs_gauge(db) -> dict[tuple[str, str], float]:
    families = [family for family in health.StoredState(db).collect() if family.name == "bot_jobs"]
    return {(sample.labels["status"], sample.labels["agent"]): sample.value
            for family in families for sample in family.samples}


def test_queued_jobs_are_counted_by_agent(backend):
    db = store.connect(settings=current())
    for n, agent in enumerate(["codex", "codex", "claude", None]):
        _queue(db, f"d{n}", agent)
    _queue(db, "reply", None, kind="reply")
    assert _jobs_gauge(db) == {("queued", "codex"): 2, ("queued", "claude"): 1, ("queued", "default"): 1,
                               ("queued", "-"): 1}


def test_every_database_family_is_read_without_a_failure(backend, caplog):
    db = store.connect(settings=current())
    _queue(db, "d1", "codex")
    text = health.exposition(db).decode()
    assert [r.getMessage() for r in caplog.records if r.name == "bot.web.health"] == []
    assert 'bot_queue_depth{kind="episode"} 1.0' in text
