"""What a pause tells and ends: `@bot status` says a thread is paused, by whom and since when; a
writer's `@bot pause` ends the automation's run and the push-triggered review already under way in
the thread (each stopped in its own comment, naming who paused), never a run a person asked for,
and its one line says so."""
from __future__ import annotations

import datetime as dt

from bot.automations import pauses
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.service import store
from bot.service.reply_texts import reply_text
from tests.automations.test_pause_worker import ask, bot_comments
from tests.entry_settings import current
from tests.spine.helpers import enqueue
from tests.spine.service import REPO
from tests.spine.test_worker import drain, gh, spec  # noqa: F401  (gh: the fixture)

TEN_AM = dt.datetime(2026, 12, 7, 10, 0, tzinfo=dt.UTC).timestamp()


def _status(db, number: int = 1) -> str:
    asked = JobSpec(repo=REPO, number=number, author="bob", command=Command(kind="status"))
    return reply_text(db, asked, "status", f"{REPO}#{number}", current())


def test_status_says_who_paused_the_thread_and_since_when():
    db = store.connect(settings=current())
    pauses.pause(db, REPO, 1, "alice", at=TEN_AM)
    assert "- paused by @alice since 2026-12-07 10:00 UTC: no automation and no push-triggered review " \
           "runs here until `@bot resume`" in _status(db)


def test_status_of_a_thread_that_is_not_paused_says_nothing_of_a_pause():
    db = store.connect(settings=current())
    pauses.pause(db, REPO, 2, "alice", at=TEN_AM)
    assert "paused" not in _status(db, 1)


def _running(db, automatic: dict | None, number: int = 1) -> int:
    """A job of the thread that a worker elsewhere is running now."""
    extra = {"automatic": automatic} if automatic else {}
    job_id = enqueue(db, "episode", f"{REPO}#{number}", {**spec(), "number": number, **extra})
    store.update_job(db, job_id, status="running", lease_owner="elsewhere", lease_expires=4_000_000_000.0)
    return job_id


def _flag(db, job_id: int) -> tuple[int, str | None]:
    row = store.get_job(db, job_id)
    return row["cancel_requested"], row["stopped_by"]


async def test_a_pause_ends_the_automation_run_under_way_in_the_thread(gh):  # noqa: F811
    db = store.connect(settings=current())
    automation = _running(db, {"kind": "automation", "detail": "issues.opened"})
    ask(gh, db, "pause")
    await drain(db, 1)
    assert _flag(db, automation) == (1, "Codertocat")
    assert bot_comments(gh)[-1].startswith("⏸️ Paused by @Codertocat") and "stopped" in bot_comments(gh)[-1]


async def test_a_pause_ends_the_push_triggered_review_under_way(gh):  # noqa: F811
    db = store.connect(settings=current())
    review = _running(db, {"kind": "synchronize", "detail": "f" * 40})
    ask(gh, db, "pause")
    await drain(db, 1)
    assert _flag(db, review) == (1, "Codertocat")


async def test_a_pause_leaves_a_run_a_person_asked_for(gh):  # noqa: F811
    db = store.connect(settings=current())
    mention = _running(db, None)
    ask(gh, db, "pause")
    await drain(db, 1)
    assert _flag(db, mention) == (0, None)
    assert "stopped" not in bot_comments(gh)[-1]


async def test_a_pause_leaves_the_automation_runs_of_other_threads(gh):  # noqa: F811
    db = store.connect(settings=current())
    elsewhere = _running(db, {"kind": "automation", "detail": "issues.opened"}, number=2)
    ask(gh, db, "pause")
    await drain(db, 1)
    assert _flag(db, elsewhere) == (0, None)


async def test_a_readers_pause_ends_nothing(gh):  # noqa: F811
    db = store.connect(settings=current())
    gh.set_permission(REPO, "reader", "read")
    automation = _running(db, {"kind": "automation", "detail": "issues.opened"})
    ask(gh, db, "pause", author="reader")
    await drain(db, 1)
    assert _flag(db, automation) == (0, None)


async def test_a_pause_of_a_paused_thread_still_ends_what_it_holds_back_under_way(gh):  # noqa: F811
    db = store.connect(settings=current())
    pauses.pause(db, REPO, 1, "alice")  # as when the pause's first attempt died before it ended anything
    automation = _running(db, {"kind": "automation", "detail": "issues.opened"})
    ask(gh, db, "pause")
    await drain(db, 1)
    assert _flag(db, automation) == (1, "Codertocat")
    assert bot_comments(gh)[-1].startswith("Already paused by @alice")
