"""Exactly once: a (repository, automation, slot) is claimed by one job, on SQLite and PostgreSQL."""
from __future__ import annotations

import threading

from bot import db as bot_db
from bot.automations.runs import claim, runs
from tests.entry_settings import current


def test_a_slot_is_claimed_once(backend):
    db = bot_db.connect(settings=current())
    assert claim(db, "o/r", "triage", "delivery-1", 1)
    assert not claim(db, "o/r", "triage", "delivery-1", 2)
    assert runs(db, "o/r", "triage") == ["delivery-1"]


def test_the_job_that_claimed_a_slot_may_claim_it_again_after_its_worker_died(backend):
    db = bot_db.connect(settings=current())
    assert claim(db, "o/r", "triage", "delivery-1", 7)
    assert claim(db, "o/r", "triage", "delivery-1", 7)


def test_each_automation_and_repository_has_its_own_slots(backend):
    db = bot_db.connect(settings=current())
    assert claim(db, "o/r", "triage", "d", 1) and claim(db, "o/r", "label", "d", 2)
    assert claim(db, "o/other", "triage", "d", 3)


def test_two_connections_racing_on_one_slot_claim_it_once(backend):
    won: list[bool] = []
    barrier = threading.Barrier(4)

    def race(job_id: int) -> None:
        db = bot_db.connect(settings=current())
        barrier.wait()
        won.append(claim(db, "o/r", "deps", "2026-12-07T06:00Z", job_id))
        db.close()

    threads = [threading.Thread(target=race, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False, False, False, True]
