"""An alert's run queues in its automation's issue's thread, as scheduled and fired runs do: one
job per automation, queued in the transaction that claims the alert's slot for it (so a retry or a
redelivery queues nothing more, and a crash leaves both or neither). So `@bot stop` in the issue
finds it, a paused issue holds it (recorded as skipped) and it takes turns with a mention there, on
SQLite and PostgreSQL."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot import db as bot_db
from bot.automations import alert_run, automation_issue, pauses, runs, scheduled_job, scheduled_run
from bot.automations.schedule import last_valid, remember
from bot.intake.automation_event import ALERT_EVENTS, ALERT_FIELDS, EventFacts
from bot.intake.decide import Event, decide
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.service import queue, schedules, store
from tests.automations import payloads
from tests.entry_settings import current
from tests.spine.helpers import enqueue, minimal_spec

REPO = "Codertocat/Hello-World"
DECLARED = ("automations:\n"
            "  - {name: deps-fix, on: {dependabot_alert: {}}, agent: codex, prompt: Fix it.}\n"
            "  - {name: deps-note, on: {dependabot_alert: {}}, agent: claude, prompt: Say which.}\n")
FACTS = EventFacts("dependabot_alert", "created", alert=(("number", "3"), ("package", "lodash")))


def _alert(delivery: str = "d-1") -> JobSpec:
    found = decide(Event("dependabot_alert", payloads.dependabot_alert(), delivery=delivery, via_app=True), "bot")
    return found.spec


def _db(issues: dict[str, int] | None = None):
    db = bot_db.connect(settings=current())
    remember(db, REPO, 11, 22, DECLARED, ".github/bot.yml@abc1234")
    for name, number in (issues or {}).items():
        automation_issue.store(db, REPO, name, number)
    return db


def _automations(db):
    return list(last_valid(db, REPO))


def _queue(db, spec: JobSpec, job_id: int = 1, account_cap: int = 0) -> list:
    return [alert_run.queue(db, job_id, spec, FACTS, automation, schedules.enqueue, account_cap)
            for automation in _automations(db)]


def _threads(db) -> dict[str, str]:
    return {scheduled_job.slot_of(JobSpec.from_json(job["spec"]))[0]: job["conversation"] for job in store.jobs(db)}


def test_an_alerts_runs_queue_each_in_its_automations_issue_thread(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    _queue(db, _alert())
    assert _threads(db) == {"deps-fix": f"{REPO}#5", "deps-note": f"{REPO}#6"}


def test_an_alerts_run_before_its_issue_was_opened_moves_into_it_when_opened(backend):
    db = _db()
    _queue(db, _alert())
    assert _threads(db)["deps-fix"] == scheduled_job.own_key(REPO, "deps-fix")
    automation_issue.store(db, REPO, "deps-fix", 9)
    assert _threads(db) == {"deps-fix": f"{REPO}#9", "deps-note": scheduled_job.own_key(REPO, "deps-note")}


def test_an_alerts_run_carries_its_fields_and_claims_its_slot_with_its_job(backend):
    db = _db({"deps-fix": 5})
    _queue(db, _alert())
    job = next(j for j in store.jobs(db) if j["conversation"] == f"{REPO}#5")
    spec = JobSpec.from_json(job["spec"])
    name, slot = scheduled_job.slot_of(spec)
    assert (name, slot) == ("deps-fix", "alert:d-1") and scheduled_job.alert_facts(spec) == FACTS
    [row] = db.query("SELECT job_id, kind FROM automation_runs WHERE automation = 'deps-fix'")
    assert (row["job_id"], row["kind"]) == (job["id"], runs.RUN)


def test_a_retry_of_the_alerts_job_queues_nothing_more(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    _queue(db, _alert(), job_id=1)
    assert [a.runs for a in _queue(db, _alert(), job_id=1)] == [False, False]
    assert len(store.jobs(db)) == 2


def test_a_redelivered_alert_queues_nothing_more(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    _queue(db, _alert(), job_id=1)
    _queue(db, _alert(), job_id=2)
    assert len(store.jobs(db)) == 2


def test_a_stop_in_the_automations_issue_flags_its_alerts_run(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    _queue(db, _alert())
    [job] = [j["id"] for j in store.jobs(db) if j["conversation"] == f"{REPO}#5"]
    assert queue.request_stop(db, f"{REPO}#5", "alice") == [job]


def test_a_mention_in_the_automations_issue_waits_for_its_alerts_run(backend):
    db = _db({"deps-fix": 5})
    _queue(db, _alert())
    enqueue(db, "episode", f"{REPO}#5", minimal_spec(f"{REPO}#5"))
    first = queue.claim(db, "worker-1")
    second = queue.claim(db, "worker-2", busy=(first.id,))
    assert first.conversation == f"{REPO}#5" and first.spec.automatic is not None
    assert second is None or second.conversation != f"{REPO}#5"


def test_an_alerts_run_waits_for_a_mention_running_in_the_automations_issue(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    enqueue(db, "episode", f"{REPO}#5", minimal_spec(f"{REPO}#5"))
    mention = queue.claim(db, "worker-1")
    _queue(db, _alert())
    other = queue.claim(db, "worker-2", busy=(mention.id,))
    assert other is not None and other.conversation == f"{REPO}#6"
    assert queue.claim(db, "worker-3", busy=(mention.id, other.id)) is None


def test_an_alert_in_a_paused_automation_issue_claims_and_queues_nothing(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    pauses.pause(db, REPO, 5, "alice")
    _queue(db, _alert())
    assert list(_threads(db)) == ["deps-note"] and runs.outcomes(db, REPO, "deps-fix") == []


def test_an_alerts_run_held_by_a_pause_that_came_after_it_was_queued_is_recorded_skipped(backend):
    db = _db({"deps-fix": 5})
    _queue(db, _alert())
    pauses.pause(db, REPO, 5, "alice")
    job = next(j for j in store.jobs(db) if j["conversation"] == f"{REPO}#5")
    assert "paused by @alice" in (pauses.holds(db, JobSpec.from_json(job["spec"])) or "")
    [(slot, kind, why)] = runs.outcomes(db, REPO, "deps-fix")
    assert (slot, kind) == ("alert:d-1", runs.SKIPPED) and "paused by @alice" in why


def test_a_pause_ends_an_alerts_run_under_way(backend):
    db = _db({"deps-fix": 5})
    _queue(db, _alert())
    job = next(j for j in store.jobs(db) if j["conversation"] == f"{REPO}#5")
    assert pauses.ends(JobSpec.from_json(job["spec"]))


def test_an_alert_over_its_accounts_cap_queues_no_run(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})
    _queue(db, _alert("d-1"), account_cap=1)
    admitted = _queue(db, _alert("d-2"), job_id=2, account_cap=1)
    assert all(a.refused for a in admitted) and len(store.jobs(db)) == 1


@pytest.mark.parametrize("text", ["", "dependabot_alert.created", "dependabot_alert.created number=3 colour=red",
                                  "issues.opened number=3"])
def test_an_alerts_run_whose_fields_read_back_outside_the_allowlist_has_no_facts(text):
    spec = JobSpec(repo=REPO, number=0, author="", command=Command(kind="run", request=text))
    assert scheduled_job.alert_facts(spec) is None


@given(st.text(max_size=300))
def test_any_text_an_alerts_run_carries_reads_back_only_as_the_alert_fields_allow(text):
    facts = scheduled_job.alert_facts(JobSpec(repo=REPO, number=0, author="", command=Command(kind="run", request=text)))
    assert facts is None or (facts.event in ALERT_EVENTS and "number" in dict(facts.alert)
                             and all(ALERT_FIELDS[key](value) for key, value in facts.alert))


def _queued_spec(db, name: str = "deps-fix") -> JobSpec:
    return next(spec for spec in (JobSpec.from_json(j["spec"]) for j in store.jobs(db))
                if scheduled_job.slot_of(spec)[0] == name)


async def test_an_alerts_run_whose_fields_were_changed_in_its_row_runs_nothing_and_is_recorded_skipped(backend):
    db = _db({"deps-fix": 5})
    _queue(db, _alert())
    spec = _queued_spec(db)
    changed = dataclasses.replace(spec, command=Command(kind="run", request="dependabot_alert.created colour=red"))
    assert await scheduled_run.run(db, changed, None, asyncio.Event(), issue_thread=None, make_context=None) == "done"
    [(_, kind, why)] = runs.outcomes(db, REPO, "deps-fix")
    assert kind == runs.SKIPPED and "no longer declares its alert's event" in why


async def test_an_alerts_run_whose_automation_no_longer_runs_on_alerts_is_recorded_skipped(backend):
    db = _db({"deps-fix": 5})
    _queue(db, _alert())
    remember(db, REPO, 11, 22, DECLARED.replace("dependabot_alert", "code_scanning_alert"), ".github/bot.yml@def5678")
    assert await scheduled_run.run(db, _queued_spec(db), None, asyncio.Event(), issue_thread=None,
                                   make_context=None) == "done"
    assert [kind for _, kind, _ in runs.outcomes(db, REPO, "deps-fix")] == [runs.SKIPPED]


def test_a_crash_while_queuing_an_alerts_run_leaves_its_slot_unclaimed_and_the_retry_queues_it(backend):
    db = _db({"deps-fix": 5, "deps-note": 6})

    def crash(conn, delivery_id, conversation, spec):
        schedules.enqueue(conn, delivery_id, conversation, spec)
        raise ConnectionError("the process died here")

    with pytest.raises(ConnectionError):
        alert_run.queue(db, 1, _alert(), FACTS, _automations(db)[0], crash, 0)
    assert store.jobs(db) == [] and runs.outcomes(db, REPO, "deps-fix") == []
    _queue(db, _alert(), job_id=1)
    assert _threads(db) == {"deps-fix": f"{REPO}#5", "deps-note": f"{REPO}#6"}
