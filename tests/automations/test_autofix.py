"""The autofix's intake and its attempts: a completed check suite or workflow run is a candidate on
its pull request (a fork's on none: the worker finds it by the head), never the bot's own App's;
`max_attempts` counts the bot's pushes since a person's, once per head whatever the deliveries,
on SQLite and PostgreSQL, and never more than declared when claims race."""
from __future__ import annotations

import threading

from bot import db as bot_db
from bot.automations import attempts
from bot.automations.runs import outcomes
from bot.intake.automation_event import KIND, EventFacts, read_detail
from bot.intake.decide import Episode, Event, Ignore, decide
from bot.workspace.repo_config import parse
from tests.automations import payloads
from tests.entry_settings import current

HEAD, FIX1, FIX2, PERSON = "a" * 40, "b" * 40, "c" * 40, "d" * 40
FIX = parse("automations:\n  - {name: fix-ci, on: {check_suite: {}}, agent: codex, prompt: p, may: [push]}\n"
            ).automations[0]


def test_a_failing_check_suite_is_a_candidate_on_its_pull_request():
    decision = decide(Event("check_suite", payloads.check_suite(), delivery="d-1"), "bot")
    assert isinstance(decision, Episode) and decision.spec.automatic.kind == KIND
    assert decision.spec.number == 2 and decision.spec.is_pr
    assert read_detail(decision.spec.automatic.detail) == EventFacts("check_suite", "completed", conclusion="failure",
                                                                     head=HEAD)


def test_a_forks_check_suite_names_no_pull_request_and_the_worker_finds_it_by_its_head():
    decision = decide(Event("check_suite", payloads.check_suite(pulls=()), delivery="d-1"), "bot")
    assert decision.spec.number == 0 and read_detail(decision.spec.automatic.detail).head == HEAD


def test_a_check_suite_of_the_bots_own_app_is_no_candidate():
    assert isinstance(decide(Event("check_suite", payloads.check_suite(app="bot")), "bot"), Ignore)


def test_the_checks_of_the_bots_own_push_are_a_candidate():
    """They count against max_attempts: a bot account as the sender does not stop them."""
    decision = decide(Event("check_suite", payloads.check_suite(sender="bot[bot]")), "bot")
    assert isinstance(decision, Episode) and decision.spec.author == "bot[bot]"


def test_a_failing_workflow_run_is_a_candidate_on_its_pull_request():
    decision = decide(Event("workflow_run", payloads.workflow_run(conclusion="timed_out")), "bot")
    assert decision.spec.number == 2
    assert read_detail(decision.spec.automatic.detail).conclusion == "timed_out"


def test_a_conclusion_or_head_outside_the_allowlist_makes_no_candidate():
    assert isinstance(decide(Event("check_suite", payloads.check_suite(conclusion="stale")), "bot"), Ignore)
    assert isinstance(decide(Event("check_suite", payloads.check_suite(head="HEAD; rm -rf")), "bot"), Ignore)


def test_two_check_suites_of_one_head_run_one_attempt(backend):
    db = bot_db.connect(settings=current())
    assert attempts.claim(db, "o/r", FIX, HEAD, 1) == attempts.Attempt(HEAD, 1)
    assert isinstance(attempts.claim(db, "o/r", FIX, HEAD, 2), attempts.Refused)


def test_a_retry_of_the_job_that_claimed_an_attempt_gets_the_same_attempt(backend):
    db = bot_db.connect(settings=current())
    assert attempts.claim(db, "o/r", FIX, HEAD, 7) == attempts.claim(db, "o/r", FIX, HEAD, 7)


def test_the_checks_of_the_bots_push_are_the_next_attempt_until_they_are_spent(backend):
    db = bot_db.connect(settings=current())
    first = attempts.claim(db, "o/r", FIX, HEAD, 1)
    attempts.pushed(db, "o/r", "fix-ci", first.root, FIX1)
    assert attempts.claim(db, "o/r", FIX, FIX1, 2) == attempts.Attempt(HEAD, 2)
    attempts.pushed(db, "o/r", "fix-ci", HEAD, FIX2)
    spent = attempts.claim(db, "o/r", FIX, FIX2, 3)
    assert isinstance(spent, attempts.Refused) and spent.notify and "2 attempts" in spent.why
    assert (f"head:{FIX2}", "refused", spent.why) in outcomes(db, "o/r", "fix-ci")


def test_a_persons_push_starts_the_count_again(backend):
    db = bot_db.connect(settings=current())
    attempts.pushed(db, "o/r", "fix-ci", attempts.claim(db, "o/r", FIX, HEAD, 1).root, FIX1)
    attempts.claim(db, "o/r", FIX, FIX1, 2)
    assert attempts.claim(db, "o/r", FIX, PERSON, 3) == attempts.Attempt(PERSON, 1)


def test_claims_racing_over_one_chain_never_exceed_max_attempts(backend):
    """Four heads of one chain (as if the bot had pushed each) claimed at once: at most two attempts
    (a claim that loses the race for the same attempt number runs nothing: it is not retried)."""
    setup = bot_db.connect(settings=current())
    heads = [f"{n}" * 40 for n in range(1, 5)]
    for head in heads:
        attempts.pushed(setup, "o/r", "fix-ci", HEAD, head)
    won: list[bool] = []
    barrier = threading.Barrier(4)

    def race(n: int) -> None:
        db = bot_db.connect(settings=current())
        barrier.wait()
        won.append(isinstance(attempts.claim(db, "o/r", FIX, heads[n], 10 + n), attempts.Attempt))
        db.close()

    threads = [threading.Thread(target=race, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 1 <= sum(won) <= 2 and len(won) == 4
