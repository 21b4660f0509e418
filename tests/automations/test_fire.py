"""A fired run's slot (bot/automations/fire.py), on SQLite and PostgreSQL: queued once per
idempotency key (a repeat answers with the first request's job), held to the automation's daily
cap and to the token's hourly cap, and only for an automation that declares `fire` as last stored."""
from __future__ import annotations

import threading

from bot import db as bot_db
from bot.automations import fire
from bot.automations.runs import outcomes
from bot.automations.schedule import remember
from bot.intake.spec import JobSpec
from bot.service import schedules, store
from tests.entry_settings import current

FIRED = ("automations:\n  - name: nightly\n    on:\n      fire: {}\n    agent: codex\n"
         "    prompt: Summarise what the caller says.\n    max_runs_per_day: 2\n"
         "  - name: triage\n    on:\n      issues: {}\n    agent: codex\n    prompt: p\n")


def _db(text: str = FIRED):
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 11, 22, text, ".github/bot.yml@abc1234")
    return db


def _fire(db, key: str | None = None, text: str = "hello", cap: int = 0) -> fire.Fired | fire.Refused:
    where, automation = fire.target(db, "o/r", "nightly")
    return fire.fire(db, where, automation, key, text, schedules.queue, account_cap=cap)


def _job_spec(db, job_id: int) -> JobSpec:
    return next(JobSpec.from_dict(job["spec"]) if isinstance(job["spec"], dict) else JobSpec.from_json(job["spec"])
                for job in store.jobs(db) if job["id"] == job_id)


def test_a_fired_run_queues_one_job_in_the_automations_queue_with_the_callers_text(backend):
    db = _db()
    fired = _fire(db, text="deploy failed on staging")
    assert isinstance(fired, fire.Fired) and fired.slot.startswith("fire:") and not fired.replayed
    spec = _job_spec(db, fired.job_id)
    assert spec.automatic.kind == "schedule" and spec.automatic.detail == f"nightly {fired.slot}"
    assert spec.command.request == "deploy failed on staging" and spec.installation_id == 22 and spec.repo_id == 11


def test_the_same_idempotency_key_answers_with_the_first_job_and_queues_nothing(backend):
    db = _db()
    first = _fire(db, key="abc-1")
    again = _fire(db, key="abc-1", text="other text")
    assert again == fire.Fired(first.job_id, "fire:abc-1", replayed=True)
    assert len(store.jobs(db)) == 1


def test_requests_without_a_key_each_run(backend):
    db = _db()
    assert _fire(db).job_id != _fire(db).job_id


def test_a_fired_run_over_the_daily_cap_is_refused_and_recorded(backend):
    db = _db()
    _fire(db, key="1"), _fire(db, key="2")
    refused = _fire(db, key="3")
    assert isinstance(refused, fire.Refused) and "max_runs_per_day: 2" in refused.why
    assert outcomes(db, "o/r", "nightly")[-1][:2] == ("fire:3", "refused")
    assert _fire(db, key="3") == refused and len(store.jobs(db)) == 2


def test_the_tokens_hourly_cap_counts_its_fired_runs(backend):
    db = _db(FIRED.replace("max_runs_per_day: 2", "max_runs_per_day: 50"))
    _fire(db, cap=1)
    refused = _fire(db, cap=1)
    assert isinstance(refused, fire.Refused) and "in the last hour" in refused.why


def test_an_automation_that_does_not_declare_fire_has_no_target(backend):
    db = _db()
    assert fire.target(db, "o/r", "triage") is None and fire.target(db, "o/r", "gone") is None
    assert fire.target(db, "o/other", "nightly") is None


def test_a_repository_without_an_installation_has_no_target(backend):
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 11, None, FIRED, ".github/bot.yml@abc1234")
    assert fire.target(db, "o/r", "nightly") is None


def test_two_requests_racing_with_one_key_queue_one_job(backend):
    _db()
    found: list = []
    barrier = threading.Barrier(2)

    def one() -> None:
        db = bot_db.connect(settings=current())
        barrier.wait()
        found.append(_fire(db, key="race"))

    threads = [threading.Thread(target=one) for _ in range(2)]
    [t.start() for t in threads], [t.join() for t in threads]
    assert len({f.job_id for f in found}) == 1 and sorted(f.replayed for f in found) == [False, True]
    assert len(store.jobs(bot_db.connect(settings=current()))) == 1
