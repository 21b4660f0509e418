"""How `store.enqueue_delivery` finds a duplicate, on each backend: a job about an object (every job
the intake queues for a GitHub event has its `trigger_key`) by that object, since one delivery id
names one signed body and so one object; a job about none (a schedule's slot, an automation's run)
by its delivery id. So the delivery id is indexed only for jobs without a trigger (migration 21)."""
from __future__ import annotations

import pytest

from bot.automations import scheduled_job
from bot.db import Database
from bot.service import store
from tests.entry_settings import current
from tests.spine.helpers import minimal_spec

CONVERSATION = "octo/repo#4"
SLOT = scheduled_job.delivery_of("octo/repo", "nightly", "2026-12-08T00:00")


@pytest.fixture(autouse=True)
def on_each_backend(backend):
    yield backend


def enqueue(conn: Database, delivery: str, trigger: str | None = None) -> int | None:
    spec = {**minimal_spec(CONVERSATION), **({"trigger_key": trigger} if trigger else {})}
    return store.enqueue_delivery(conn, delivery_id=delivery, event="issue_comment", action="created",
                                  kind="episode", conversation=CONVERSATION, spec=spec)


def test_a_job_without_a_trigger_is_a_duplicate_of_a_live_job_with_its_delivery_id():
    db = store.connect(settings=current())
    assert store.write(db, lambda conn: enqueue(conn, SLOT)) is not None
    assert store.write(db, lambda conn: enqueue(conn, SLOT)) is None and len(store.jobs(db)) == 1


def test_a_failed_job_without_a_trigger_lets_its_delivery_id_queue_again():
    db = store.connect(settings=current())
    first = store.write(db, lambda conn: enqueue(conn, SLOT))
    assert first is not None
    store.update_job(db, first, status="failed")
    assert store.write(db, lambda conn: enqueue(conn, SLOT)) is not None and len(store.jobs(db)) == 2


def test_a_redelivery_of_a_job_with_a_trigger_is_a_duplicate():
    db = store.connect(settings=current())
    assert store.write(db, lambda conn: enqueue(conn, "d-1", "issue_comment.created:comment:7")) is not None
    assert store.write(db, lambda conn: enqueue(conn, "d-1", "issue_comment.created:comment:7")) is None


def test_an_event_whose_unsigned_delivery_header_names_a_slot_does_not_keep_that_slots_job_from_queuing():
    """X-GitHub-Delivery is outside the HMAC: a replayed signed body may carry any delivery id."""
    db = store.connect(settings=current())
    assert store.write(db, lambda conn: enqueue(conn, SLOT, "issue_comment.created:comment:8")) is not None
    assert store.write(db, lambda conn: enqueue(conn, SLOT)) is not None and len(store.jobs(db)) == 2
