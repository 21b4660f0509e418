"""The automations' caps on SQLite and PostgreSQL: per automation `max_runs_per_day` (UTC day), per
account BOT_AUTOMATION_ACCOUNT_RUNS_PER_HOUR across repositories; a refused run is recorded with
why and runs nothing, and a redelivery of it is neither run nor counted."""
from __future__ import annotations

from bot import db as bot_db
from bot.automations import caps
from bot.automations.runs import outcomes
from bot.workspace.repo_config import parse
from tests.entry_settings import current

TWO_A_DAY = parse("automations:\n  - {name: triage, on: {issues: {}}, agent: codex, prompt: p, "
                  "max_runs_per_day: 2}\n").automations[0]
NOON = 1_796_644_800.0  # 2026-12-07T12:00Z


def _admit(db, slot: str, account: str | None = "alice", now: float = NOON, repo: str = "o/r", cap: int = 0,
           job_id: int = 1) -> caps.Admission:
    with db.transaction() as conn:
        return caps.admit(conn, repo, TWO_A_DAY, slot, job_id, account, cap, now=now)


def test_a_run_over_the_automations_daily_cap_is_refused_and_recorded(backend):
    db = bot_db.connect(settings=current())
    assert _admit(db, "d-1").runs and _admit(db, "d-2").runs
    third = _admit(db, "d-3")
    assert not third.runs and "max_runs_per_day: 2" in third.refused
    assert outcomes(db, "o/r", "triage")[-1] == ("d-3", "refused", third.refused)


def test_the_runs_of_yesterday_utc_do_not_count_today(backend):
    db = bot_db.connect(settings=current())
    _admit(db, "d-1", now=NOON - 86_400)
    _admit(db, "d-2", now=NOON - 86_400)
    assert _admit(db, "d-3").runs


def test_a_refused_slot_redelivered_is_neither_run_nor_counted(backend):
    db = bot_db.connect(settings=current())
    _admit(db, "d-1"), _admit(db, "d-2"), _admit(db, "d-3")
    assert _admit(db, "d-3", job_id=2) == caps.Admission()
    assert [kind for _, kind, _ in outcomes(db, "o/r", "triage")] == ["run", "run", "refused"]


def test_one_account_over_its_hourly_cap_is_refused_in_any_repository(backend):
    db = bot_db.connect(settings=current())
    assert _admit(db, "d-1", repo="o/a", cap=2).runs and _admit(db, "d-1", repo="o/b", cap=2).runs
    refused = _admit(db, "d-2", repo="o/c", cap=2)
    assert not refused.runs and "the account that caused this event caused 2 automation runs" in refused.refused
    assert _admit(db, "d-3", repo="o/c", cap=2, account="bob").runs


def test_an_accounts_runs_older_than_an_hour_do_not_count(backend):
    db = bot_db.connect(settings=current())
    _admit(db, "d-1", repo="o/a", cap=1, now=NOON - 3_601)
    assert _admit(db, "d-2", repo="o/b", cap=1).runs


def test_no_account_cap_when_it_is_zero(backend):
    db = bot_db.connect(settings=current())
    assert all(_admit(db, "d", repo=f"o/{n}", cap=0).runs for n in range(3))
