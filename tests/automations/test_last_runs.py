"""The settings page's last runs of each automation (bot/automations/runs.py `last_runs`), on
SQLite and PostgreSQL: newest first, bounded per automation, runs with their job's status and
thread, their cost at the relay, refusals and skips with why; and their rendering, where every value is escaped."""
from __future__ import annotations

import time

from bot import db as bot_db
from bot.automations import runs
from bot.automations.runs import LastRun
from bot.relay.budgets import Ledger, Scope, automation_key
from bot.settings.automation_config import Declared
from bot.settings.automations_page import Where, section
from bot.workspace.repo_config import parse
from tests.entry_settings import current

WHERE = Where("/settings/repos/o/r", "csrf", "https://bot.example", "https://github.com", "o/r")


def test_each_automations_last_runs_are_newest_first_and_bounded(backend):
    db = bot_db.connect(settings=current())
    for k in range(8):
        runs.insert_row(db, "o/r", "triage", f"d-{k}", None, runs.RUN, "alice", None, at=1000.0 + k)
    runs.insert_row(db, "o/r", "triage", "d-9", None, runs.REFUSED, "alice", "over its cap", at=2000.0)
    runs.insert_row(db, "o/r", "triage", "note:1:2026-12-07", None, "note", None, "x", at=3000.0)
    found = runs.last_runs(db, "o/r", ["triage", "other"], per=5)
    assert [r.slot for r in found["triage"]] == ["d-9", "d-7", "d-6", "d-5", "d-4"]
    assert found["triage"][0].kind == "refused" and found["triage"][0].outcome == "over its cap"
    assert found["other"] == []


def test_a_runs_thread_is_its_jobs_else_the_automations_issue(backend):
    db = bot_db.connect(settings=current())
    db.execute("INSERT INTO automation_issues (repo, automation, number, updated_at) VALUES ('o/r', 'deps', 9, 0)")
    runs.insert_row(db, "o/r", "deps", "2026-12-07T06:00Z", None, runs.RUN, None, None)
    assert runs.last_runs(db, "o/r", ["deps"])["deps"][0].number == 9


def test_the_list_shows_each_automation_with_its_runs_escaped():
    declared = Declared(parse("automations:\n  - {name: triage, on: {issues: {}}, agent: codex, prompt: p}\n"
                              "  - {name: nightly, on: {fire: {}}, agent: codex, prompt: p}\n").automations,
                        ".github/bot.yml@abc1234")
    last = {"triage": [LastRun(0.0, "d-1", "refused", "<b>over</b> its cap", None, 7),
                       LastRun(0.0, "d-0", "run", None, "done", 7)]}
    page = section(declared, {}, last, WHERE)
    assert "<strong>triage</strong>" in page and "on issues: opened" in page and "50 runs a day" in page
    assert "refused: &lt;b&gt;over&lt;/b&gt; its cap" in page and "answered" in page
    assert 'href="https://github.com/o/r/issues/7"' in page and "none yet" in page and "Create token" in page


def _priced(db, run_id: str, job: int | None, usd: float | None, automation: str | None = "triage") -> None:
    db.execute("INSERT INTO runs (id, job_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
               [run_id, None if job is None else str(job)])
    key = automation_key("o/r", automation) if automation else None
    Ledger(db).add(run_id, Scope(conversation="o/r#7", automation=key), 100, usd)


def test_a_runs_cost_is_what_its_job_spent_on_that_automation(backend):
    db = bot_db.connect(settings=current())
    runs.insert_row(db, "o/r", "triage", "d-1", 11, runs.RUN, "alice", None, at=time.time() - 60)
    runs.insert_row(db, "o/r", "triage", "d-2", 12, runs.RUN, "alice", None, at=time.time() - 30)
    runs.insert_row(db, "o/r", "triage", "d-3", 13, runs.REFUSED, "alice", "over its cap")
    _priced(db, "run-a", 11, 0.25)
    _priced(db, "run-b", 11, 0.5)  # a second turn of the same job (a fallback agent, a retry)
    _priced(db, "run-c", 11, 9.0, automation="other")  # the same event's job ran another automation too
    _priced(db, "run-d", 13, 1.0)
    found = {r.slot: r.cost_usd for r in runs.last_runs(db, "o/r", ["triage"])["triage"]}
    assert found == {"d-1": 0.75, "d-2": None, "d-3": None}


def test_each_runs_cost_shows_beside_its_outcome():
    declared = Declared(parse("automations:\n  - {name: triage, on: {issues: {}}, agent: codex, prompt: p, "
                              "max_usd_per_day: 2.5}\n").automations, "")
    last = {"triage": [LastRun(0.0, "d-1", "run", None, "done", 7, 0.1234), LastRun(0.0, "d-0", "run", None,
                                                                                   "done", 7)]}
    page = section(declared, {}, last, WHERE)
    assert 'answered</span> · <span class="cost">$0.1234</span> · <a href' in page
    assert page.count('class="cost"') == 1 and "$2.5 of model cost a day" in page
