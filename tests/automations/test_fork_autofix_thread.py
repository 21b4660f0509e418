"""A fork's failing check suite names no pull request, so its job is queued in none's thread; once
the worker finds the pull request by the head commit, the autofix queues again on that pull
request (`queue_on_pull`), once per pull request and head: `@bot stop` and `@bot pause` there find
it, a pause there holds it, and it takes turns with a mention there, on SQLite and PostgreSQL."""
from __future__ import annotations

from bot import db as bot_db
from bot.automations import autofix, pauses
from bot.intake.decide import Event, decide
from bot.intake.spec import JobSpec
from bot.service import queue, schedules, store
from tests.automations import payloads
from tests.entry_settings import current
from tests.spine.helpers import enqueue, minimal_spec

HEAD = "a" * 40
FORK_PR = 3


def _forks_checks(delivery: str = "d-1") -> JobSpec:
    found = decide(Event("check_suite", payloads.check_suite(head=HEAD, pulls=()), delivery=delivery), "bot")
    return found.spec


def _queued(db, spec: JobSpec, job_id: int = 1) -> int | None:
    return autofix.queue_on_pull(db, job_id, spec, FORK_PR, HEAD, schedules.enqueue)


def _on_pull(db) -> list[dict]:
    return [job for job in store.jobs(db) if job["conversation"] == f"{_forks_checks().repo}#{FORK_PR}"]


def test_a_forks_autofix_queues_on_the_pull_request_its_head_names(backend):
    db = bot_db.connect(settings=current())
    spec = _forks_checks()
    _queued(db, spec)
    [job] = _on_pull(db)
    queued = JobSpec.from_json(job["spec"])
    assert (queued.number, queued.is_pr, queued.automatic) == (FORK_PR, True, spec.automatic)


def test_a_retry_or_a_second_suite_of_the_same_head_queues_nothing_more(backend):
    db = bot_db.connect(settings=current())
    assert _queued(db, _forks_checks("d-1")) is not None
    assert _queued(db, _forks_checks("d-1")) is None
    assert _queued(db, _forks_checks("d-2"), job_id=2) is None
    assert len(_on_pull(db)) == 1


def test_a_stop_on_the_forks_pull_request_flags_its_autofix(backend):
    db = bot_db.connect(settings=current())
    job = _queued(db, _forks_checks())
    assert queue.request_stop(db, f"{_forks_checks().repo}#{FORK_PR}", "alice") == [job]


def test_a_paused_forks_pull_request_holds_its_autofix_and_a_pause_ends_it(backend):
    db = bot_db.connect(settings=current())
    _queued(db, _forks_checks())
    pauses.pause(db, _forks_checks().repo, FORK_PR, "alice")
    [job] = _on_pull(db)
    spec = JobSpec.from_json(job["spec"])
    assert "paused by @alice" in (pauses.holds(db, spec) or "") and pauses.ends(spec)


def test_a_mention_on_the_forks_pull_request_waits_for_its_autofix(backend):
    db = bot_db.connect(settings=current())
    thread = f"{_forks_checks().repo}#{FORK_PR}"
    _queued(db, _forks_checks())
    enqueue(db, "episode", thread, minimal_spec(thread))
    first = queue.claim(db, "worker-1")
    assert first is not None and first.spec.automatic is not None
    assert queue.claim(db, "worker-2", busy=(first.id,)) is None
