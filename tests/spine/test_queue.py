"""The jobs table as a queue: leases, ordering, reclaim."""
from __future__ import annotations

import time

import pytest

from bot.service import queue, store
from tests.entry_settings import current
from tests.spine.helpers import enqueue


class Clock:
    """The queue's clock, moved by the test: a lease is over when the test says so."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now

    def pass_lease(self, lease_s: float) -> None:
        self.now += lease_s + 1


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(queue, "time", fake)
    return fake


def test_claim_takes_the_oldest_job():
    """Jobs are claimed in arrival order."""
    db = store.connect(settings=current())
    first = enqueue(db, "episode", "o/r#1")
    enqueue(db, "episode", "o/r#2")
    assert queue.claim(db, "w1").id == first


def test_second_job_of_a_conversation_waits_for_the_first():
    """One conversation runs one episode at a time."""
    db = store.connect(settings=current())
    enqueue(db, "episode", "o/r#1")
    enqueue(db, "episode", "o/r#1")
    queue.claim(db, "w1")
    assert queue.claim(db, "w2") is None


def test_other_conversations_run_in_parallel():
    """A busy conversation does not block another one."""
    db = store.connect(settings=current())
    enqueue(db, "episode", "o/r#1")
    enqueue(db, "episode", "o/r#1")
    other = enqueue(db, "episode", "o/r#2")
    queue.claim(db, "w1")
    assert queue.claim(db, "w2").id == other


def test_reply_jobs_do_not_wait_behind_an_episode():
    """A help reply in a busy thread is claimable at once."""
    db = store.connect(settings=current())
    enqueue(db, "episode", "o/r#1")
    reply = enqueue(db, "reply", "o/r#1")
    queue.claim(db, "w1")
    assert queue.claim(db, "w2").id == reply


def test_a_claimed_job_is_not_claimed_twice():
    """Two claimers never get the same job."""
    db = store.connect(settings=current())
    enqueue(db, "episode", "o/r#1")
    assert queue.claim(db, "w1") is not None and queue.claim(db, "w2") is None


def test_expired_lease_is_reclaimed(clock):
    """A job whose owner died (lease expired) is claimed again, attempts counted."""
    db = store.connect(settings=current())
    job_id = enqueue(db, "episode", "o/r#1")
    queue.claim(db, "dead", lease_s=0.01)
    clock.pass_lease(0.01)
    again = queue.claim(db, "w2")
    assert (again.id, again.attempts) == (job_id, 2)


def test_renew_fails_once_another_worker_owns_the_job(clock):
    """Renewal is refused after the job was reclaimed by someone else."""
    db = store.connect(settings=current())
    job_id = enqueue(db, "episode", "o/r#1")
    queue.claim(db, "w1", lease_s=0.01)
    clock.pass_lease(0.01)
    queue.claim(db, "w2")
    assert queue.renew(db, job_id, "w1") is False and queue.renew(db, job_id, "w2") is True


def test_finished_job_frees_the_conversation():
    """After the first episode finishes, the next one of the thread is claimable."""
    db = store.connect(settings=current())
    first = enqueue(db, "episode", "o/r#1")
    second = enqueue(db, "episode", "o/r#1")
    queue.claim(db, "w1")
    queue.finish(db, first, "done")
    assert queue.claim(db, "w1").id == second


def test_busy_job_is_not_reclaimed_by_its_own_worker(clock):
    """A worker never reclaims a job it is still running, even after its lease lapsed."""
    db = store.connect(settings=current())
    job_id = enqueue(db, "episode", "o/r#1")
    queue.claim(db, "w1", lease_s=0.01)
    clock.pass_lease(0.01)
    assert queue.claim(db, "w1", busy=(job_id,)) is None


def test_worker_that_lost_the_job_cannot_finish_it(clock):
    """A finish by the worker whose lease was taken over leaves the new owner's job running."""
    db = store.connect(settings=current())
    job_id = enqueue(db, "episode", "o/r#1")
    queue.claim(db, "w1", lease_s=0.01)
    clock.pass_lease(0.01)
    queue.claim(db, "w2")
    assert queue.finish(db, job_id, "cancelled", owner="w1") is False
    assert (store.get_job(db, job_id)["status"], store.get_job(db, job_id)["lease_owner"]) == ("running", "w2")
