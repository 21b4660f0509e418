"""The caps are exact under concurrency: claims racing at the moment a cap is reached never pass it,
on SQLite (one writer at a time) and on PostgreSQL (each claim takes its automation's and its
account's lock for its transaction, so the next one counts after the first has committed)."""
from __future__ import annotations

import threading
import time

import pytest

from bot import db as bot_db
from bot.automations import caps
from bot.automations.runs import outcomes
from bot.workspace.repo_config import parse
from tests.entry_settings import current

NOON = 1_796_644_800.0  # 2026-12-07T12:00Z


def _automation(name: str, per_day: int):
    return parse(f"automations:\n  - {{name: {name}, on: {{issues: {{}}}}, agent: codex, prompt: p, "
                 f"max_runs_per_day: {per_day}}}\n").automations[0]


def _admit(db, automation, slot: str, account: str | None = "alice", account_cap: int = 0) -> caps.Admission:
    with db.transaction() as conn:
        return caps.admit(conn, "o/r", automation, slot, None, account, account_cap, now=NOON)


def _race(automations, account_cap: int) -> list[caps.Admission]:
    """Eight connections, each claiming a slot of its own at the same moment."""
    barrier = threading.Barrier(8)
    admitted: list[caps.Admission] = []

    def claim(n: int) -> None:
        db = bot_db.connect(settings=current())
        barrier.wait()
        admitted.append(_admit(db, automations[n % len(automations)], f"d-{n}", account_cap=account_cap))
        db.close()

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return admitted


def test_claims_racing_on_the_daily_cap_run_exactly_the_cap(backend):
    bot_db.connect(settings=current()).close()
    admitted = _race([_automation("triage", 3)], account_cap=0)
    assert sum(a.runs for a in admitted) == 3 and sum(a.refused is not None for a in admitted) == 5


def test_claims_racing_on_one_accounts_hourly_cap_run_exactly_the_cap(backend):
    bot_db.connect(settings=current()).close()
    admitted = _race([_automation(f"a{n}", 50) for n in range(8)], account_cap=2)
    assert sum(a.runs for a in admitted) == 2


def _blocked_or_done(watcher, racer: threading.Thread) -> None:
    """Returns once `racer` waits on a lock (PostgreSQL's view of it) or has ended."""
    while racer.is_alive() and not watcher.query("SELECT 1 FROM pg_locks WHERE NOT granted"):
        time.sleep(0.01)


def _second_claim_while_the_first_is_uncommitted(first_admit, second_admit) -> caps.Admission:
    """The first claim admitted but not committed; a second claim on another connection meanwhile."""
    first, second, watcher = (bot_db.connect(settings=current()) for _ in range(3))
    found: list[caps.Admission] = []
    racer = threading.Thread(target=lambda: found.append(second_admit(second)))
    with first.transaction() as conn:
        assert first_admit(conn).runs
        racer.start()
        _blocked_or_done(watcher, racer)
    racer.join()
    for db in (first, second, watcher):
        db.close()
    return found[0]


def test_a_claim_racing_the_one_that_reached_the_daily_cap_waits_for_it_and_is_refused(pg_url):
    once = _automation("triage", 1)
    second = _second_claim_while_the_first_is_uncommitted(
        lambda conn: caps.admit(conn, "o/r", once, "d-1", None, "alice", 0, now=NOON),
        lambda db: _admit(db, once, "d-2", account="bob"))
    assert not second.runs and "max_runs_per_day: 1" in (second.refused or "")
    db = bot_db.connect(settings=current())
    assert [kind for _, kind, _ in outcomes(db, "o/r", "triage")] == ["run", "refused"]


def test_a_claim_racing_the_one_that_reached_an_accounts_cap_waits_for_it_and_is_refused(pg_url):
    second = _second_claim_while_the_first_is_uncommitted(
        lambda conn: caps.admit(conn, "o/r", _automation("one", 50), "d-1", None, "alice", 1, now=NOON),
        lambda db: _admit(db, _automation("two", 50), "d-1", account="alice", account_cap=1))
    assert not second.runs and "the cap of one account" in (second.refused or "")


@pytest.mark.parametrize("name", ["triage", "x" * 63])
def test_claims_of_other_automations_and_accounts_do_not_wait(pg_url, name):
    second = _second_claim_while_the_first_is_uncommitted(
        lambda conn: caps.admit(conn, "o/r", _automation("busy", 1), "d-1", None, "alice", 1, now=NOON),
        lambda db: _admit(db, _automation(name, 1), "d-1", account="bob", account_cap=1))
    assert second.runs
