"""bot/web/review_push.py on each backend: a push merged into a waiting review keeps that review's
requester, is recorded so that its redelivery does nothing, and two replicas merging pushes at the
same instant store one job."""
from __future__ import annotations

import json
import threading
import time
import uuid

import pytest

from bot.db import Database
from bot.review import memory
from bot.service import queue, store
from bot.web.review_push import coalesced
from tests.entry_settings import current

CONVERSATION = "octo/repo#2"


@pytest.fixture(autouse=True)
def on_each_backend(backend):
    yield backend


def spec(n: int, author: str = "alice") -> dict:
    return {"repo": "octo/repo", "number": 2, "author": author, "command": {"kind": "run", "review": True},
            "trigger_key": f"pull_request.synchronize:item:99::2026-12-01T00:00:{n:02d}Z",
            "automatic": {"kind": "synchronize", "detail": f"{n:040d}", "draft": False}}


def push(conn: Database, n: int, author: str = "alice", delivery: str | None = None,
         trigger: str | None = None) -> int | None:
    pushed = spec(n, author)
    if trigger is not None:
        pushed["trigger_key"] = trigger
    return coalesced(conn, delivery_id=delivery or f"delivery-{n}", event="pull_request", action="synchronize",
                     kind="episode", conversation=CONVERSATION, spec=pushed)


def pushed(db: Database, n: int, **kwargs) -> int | None:
    return store.write(db, lambda conn: push(conn, n, **kwargs))


def reviewed_db() -> Database:
    db = store.connect(settings=current())
    memory.remember(db, "octo/repo", 2, ["codex"], "a" * 40, 1, [])
    return db


def specs(db: Database) -> list[dict]:
    return [json.loads(job["spec"]) for job in store.jobs(db)]


def test_a_push_by_another_person_never_changes_the_waiting_reviews_requester():
    db = reviewed_db()
    maintainers = pushed(db, 1, author="alice")
    forks = pushed(db, 2, author="forker")
    assert forks != maintainers
    assert [(s["author"], s["automatic"]["detail"]) for s in specs(db)] == [("alice", f"{1:040d}"),
                                                                            ("forker", f"{2:040d}")]


def test_pushes_by_the_same_person_still_give_one_review_of_the_last_push():
    db = reviewed_db()
    assert pushed(db, 1) == pushed(db, 2) == pushed(db, 3)
    [only] = specs(db)
    assert only["automatic"]["detail"] == f"{3:040d}" and only["coalesced"] == 3 and only["author"] == "alice"


def test_a_merged_push_redelivered_after_its_review_was_claimed_queues_nothing():
    db = reviewed_db()
    first = pushed(db, 1)
    assert pushed(db, 2) == first
    assert queue.claim(db, "worker-1").id == first
    assert pushed(db, 2) is None and len(store.jobs(db)) == 1


def test_a_merged_push_redelivered_while_its_review_waits_is_not_counted_twice():
    db = reviewed_db()
    pushed(db, 1), pushed(db, 2)
    assert pushed(db, 2) is None
    assert specs(db)[0]["coalesced"] == 2


def test_a_merged_push_replayed_under_a_new_delivery_id_is_a_duplicate():
    db = reviewed_db()
    first = pushed(db, 1)
    assert pushed(db, 2) == first
    queue.claim(db, "worker-1")
    assert pushed(db, 2, delivery=uuid.uuid4().hex) is None and len(store.jobs(db)) == 1


def test_a_merged_push_whose_review_failed_may_be_queued_again():
    db = reviewed_db()
    first = pushed(db, 1)
    pushed(db, 2)
    queue.claim(db, "worker-1")
    queue.finish(db, first, "failed", error="provider down")
    assert pushed(db, 2) not in (None, first)


def test_a_push_after_the_waiting_review_was_stopped_queues_a_new_one():
    db = reviewed_db()
    first = pushed(db, 1)
    queue.request_stop(db, CONVERSATION, "alice")
    assert pushed(db, 2) not in (None, first)


def test_the_database_refuses_a_second_waiting_push_review_of_one_requester():
    db = reviewed_db()
    pushed(db, 1)
    [key] = [job["coalesce_key"] for job in db.query("SELECT coalesce_key FROM jobs")]
    with pytest.raises(Exception, match="(?i)unique"):
        db.execute("INSERT INTO jobs (delivery_id, kind, conversation, spec, coalesce_key, created_at) "
                   "VALUES ('x', 'episode', ?, '{}', ?, ?)", [CONVERSATION, key, time.time()])


def test_two_replicas_coalescing_pushes_at_the_same_instant_store_one_job(backend):
    """The first replica's insert is not committed yet when the second replica's push arrives."""
    db = reviewed_db()
    first = store.connect(settings=current())
    first.execute(first.dialect.begin)
    first_job = push(first, 1)
    results: list[int | None] = []
    second = threading.Thread(target=lambda: results.append(pushed(store.connect(settings=current()), 2)))
    second.start()
    _until_waiting_or_ended(second, backend)
    first.execute("COMMIT")
    second.join(timeout=120)
    assert results == [first_job] and first_job is not None
    [only] = specs(db)
    assert only["coalesced"] == 2 and only["automatic"]["detail"] == f"{2:040d}"


def _until_waiting_or_ended(second: threading.Thread, backend: str) -> None:
    """PostgreSQL: the second replica's insert waits on the first's uncommitted row (with the unique
    index) or ends at once (without it). SQLite: the second writer waits for the write lock."""
    if backend != "postgresql":
        return
    watcher = store.connect(settings=current())
    for _ in range(2400):
        waiting = watcher.query("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                "AND datname = current_database()")[0]["n"]
        if waiting or not second.is_alive():
            return
        time.sleep(0.05)
    raise AssertionError("the second push neither waited nor ended")
