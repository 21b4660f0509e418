"""An alert's job queued before its claims took the `alert:` slot (issue 35) and retried after:
its automations run once more, no more often than the old code's own retry ran them (a claim let
the job that made it run again), and a further retry queues nothing. No migration maps the old
claims to `alert:` slots: a retried job is one the upgrade's restart cut short, and its retry
(which claims with no job of its own) would find a mapped claim and queue nothing, losing the run
the cut attempt was making. On SQLite and PostgreSQL."""
from __future__ import annotations

from bot.automations import caps, scheduled_job
from bot.intake.spec import JobSpec
from bot.service import store
from tests.automations.test_alert_threads import REPO, _alert, _automations, _db, _queue

OLD_JOB = 1000  # the alert's job (its row is not needed here)


def _old_claims(db) -> None:
    """The claims the old code made: the plain delivery id as the slot, the alert's job on them."""
    with db.transaction() as conn:
        for automation in _automations(db):
            assert caps.admit(conn, REPO, automation, "d-1", OLD_JOB, None, 0).runs


def _runs_queued(db) -> list[tuple[str, str]]:
    return sorted(scheduled_job.slot_of(JobSpec.from_json(job["spec"])) for job in store.jobs(db))


def test_the_old_codes_retry_of_an_alerts_job_ran_its_automations_again(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    _old_claims(db)
    with db.transaction() as conn:
        assert all(caps.admit(conn, REPO, automation, "d-1", OLD_JOB, None, 0).runs for automation in _automations(db))


def test_an_old_alerts_job_retried_after_the_upgrade_queues_each_run_once(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    _old_claims(db)
    _queue(db, _alert(), job_id=OLD_JOB)
    _queue(db, _alert(), job_id=OLD_JOB)  # retried once more
    assert _runs_queued(db) == [("deps-fix", "alert:d-1"), ("deps-note", "alert:d-1")]
