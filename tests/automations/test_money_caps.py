"""An automation's `max_usd_per_day` at the claim, on SQLite and PostgreSQL (issue 35): once the
relay's ledger holds that day's cap for the automation, its next run is refused with why and
recorded, before anything is spent; another automation's spend, or yesterday's, does not count."""
from __future__ import annotations

import datetime as dt

from bot import db as bot_db
from bot.automations import caps
from bot.automations.runs import outcomes
from bot.relay.budgets import Ledger, Scope, automation_key
from bot.workspace.repo_config import parse
from tests.entry_settings import current

A_DOLLAR_A_DAY = parse("automations:\n  - {name: triage, on: {issues: {}}, agent: codex, prompt: p, "
                       "max_usd_per_day: 1}\n").automations[0]


def _spent(db, usd: float, repo: str = "O/R", name: str = "triage") -> None:
    Ledger(db).add("a-run", Scope(conversation=f"{repo}#1", automation=automation_key(repo, name)), 100, usd)


def _admit(db, slot: str, now: float | None = None) -> caps.Admission:
    with db.transaction() as conn:
        return caps.admit(conn, "o/r", A_DOLLAR_A_DAY, slot, 1, "alice", 0, now=now)


def test_a_run_of_an_automation_whose_day_is_spent_is_refused_and_recorded(backend):
    db = bot_db.connect(settings=current())
    _spent(db, 0.6)
    assert _admit(db, "d-1").runs
    _spent(db, 0.4)
    refused = _admit(db, "d-2")
    assert not refused.runs
    assert refused.refused == "its model cost today (UTC) is $1.00, its cap (`max_usd_per_day: 1`)"
    assert outcomes(db, "o/r", "triage")[-1] == ("d-2", "refused", refused.refused)


def test_another_automations_spend_does_not_count(backend):
    db = bot_db.connect(settings=current())
    _spent(db, 5.0, name="deps")
    _spent(db, 5.0, repo="o/other")
    assert _admit(db, "d-1").runs


def test_yesterdays_spend_utc_does_not_count_today(backend):
    db = bot_db.connect(settings=current())
    _spent(db, 5.0)
    tomorrow = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).timestamp()
    assert _admit(db, "d-1", now=tomorrow).runs
    assert caps.over_money(db, "o/r", A_DOLLAR_A_DAY) is not None
