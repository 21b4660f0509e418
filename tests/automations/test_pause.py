"""`@bot pause` and `@bot resume`: the grammar knows both (no agent), help lists them, the intake
queues a member's as a job the worker checks and answers an outsider's with the notice, the Action
says it has no pause; a thread's pause is one row on SQLite and PostgreSQL; a paused automation
issue's schedule claims no slot, and a slot that passed during the pause does not run after it."""
from __future__ import annotations

import datetime as dt

from bot import db as bot_db
from bot.automations import pauses, runs
from bot.automations.schedule import remember
from bot.config import Settings
from bot.intake import grammar
from bot.intake.decide import Episode, Event, Reply, decide
from bot.intake.grammar import Command
from bot.intake.spec import Automatic, JobSpec
from bot.job import replies
from bot.service import store
from bot.service.reply_texts import reply_text
from bot.service.schedules import tick
from tests.entry_settings import current
from tests.spine.helpers import payload

WEEKLY = ("automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n"
          "    agent: codex\n    prompt: Update the dependencies.\n")
MONDAY_6 = dt.datetime(2026, 12, 7, 6, 0, tzinfo=dt.UTC)
ISSUE = 5  # the automation's issue


def test_pause_and_resume_are_commands_without_an_agent():
    assert grammar.parse("@bot pause", "bot", ("codex",)) == Command(kind="pause")
    assert grammar.parse("@bot resume", "bot", ("codex",)) == Command(kind="resume")


def _decided(body: str, association: str):
    data = payload("issue_comment.created", body, author_association=association)
    data["installation"] = {"id": 1}
    return decide(Event("issue_comment", data, delivery="d-1"), "bot")


def test_a_members_pause_is_a_pause_job_checked_by_the_worker():
    decision = _decided("@bot pause", "MEMBER")
    assert isinstance(decision, Episode) and decision.kind == "pause"


def test_an_outsiders_pause_gets_the_notice_and_no_pause_job():
    decision = _decided("@bot pause", "NONE")
    assert isinstance(decision, Reply) and decision.spec.reply == "not_allowed"


def test_help_lists_pause_and_resume():
    spec = JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="help"))
    text = reply_text(None, spec, "help", "o/r#1", Settings({"BOT_HANDLE": "bot", "BOT_DEFAULT_AGENT": "codex"}))
    assert "`@bot pause`" in text and "`@bot resume`" in text


def test_a_thread_is_paused_once_and_resume_clears_it(backend):
    db = bot_db.connect(settings=current())
    assert pauses.pause(db, "o/r", 7, "alice") is True
    assert pauses.pause(db, "o/r", 7, "bob") is False
    assert pauses.paused_by(db, "o/r", 7) == "alice" and pauses.paused_by(db, "o/r", 8) is None
    assert pauses.resume(db, "o/r", 7) is True and pauses.resume(db, "o/r", 7) is False
    assert pauses.paused_by(db, "o/r", 7) is None


def test_a_pause_holds_back_only_what_runs_without_a_mention(backend):
    db = bot_db.connect(settings=current())
    pauses.pause(db, "o/r", 7, "alice")

    def held(automatic: Automatic | None) -> bool:
        spec = JobSpec(repo="o/r", number=7, author="alice", command=Command(kind="run"), automatic=automatic)
        return pauses.holds(db, spec) is not None
    assert held(Automatic(kind="automation", detail="issues.opened"))
    assert held(Automatic(kind="synchronize", detail="f" * 40))
    assert not held(None)  # a mention
    assert not held(Automatic(kind="label", detail="bot:review"))  # a person asked by labelling


def _automation_issue_paused():
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 11, 22, WEEKLY, ".github/bot.yml@abc1234")
    tick(db, MONDAY_6 - dt.timedelta(hours=1))
    db.execute("INSERT INTO automation_issues (repo, automation, number, updated_at) VALUES (?, ?, ?, 0)",
               ["o/r", "deps", ISSUE])
    pauses.pause(db, "o/r", ISSUE, "alice")
    return db


def test_a_paused_automation_issue_claims_no_slot_of_its_schedule(backend):
    db = _automation_issue_paused()
    assert tick(db, MONDAY_6) == []
    assert store.jobs(db) == [] and runs.runs(db, "o/r", "deps") == []


def test_a_slot_that_passed_during_the_pause_does_not_run_after_resume(backend):
    db = _automation_issue_paused()
    tick(db, MONDAY_6)
    pauses.resume(db, "o/r", ISSUE, at=(MONDAY_6 + dt.timedelta(minutes=30)).timestamp())
    assert tick(db, MONDAY_6 + dt.timedelta(minutes=31)) == []
    assert tick(db, MONDAY_6 + dt.timedelta(days=7)) == [("o/r", "deps", "2026-12-14T06:00Z")]


def test_a_pause_in_the_action_says_there_is_none_and_does_nothing():
    spec = JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="pause"))
    for kind in ("pause", "resume"):
        text = reply_text(None, spec, kind, "o/r#1", Settings({}), in_actions=True)
        assert text == replies.pause_in_actions() and "Nothing was done." in text
