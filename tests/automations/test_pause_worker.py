"""`@bot pause` and `@bot resume` run by the worker in process against the fake GitHub: a writer's
pause is answered with a reaction and one line and holds back the thread's automations and
push-triggered reviews (claiming no slot); a reader's changes nothing."""
from __future__ import annotations

from bot.automations import pauses
from bot.service import store
from tests.entry_settings import current
from tests.spine.helpers import enqueue
from tests.spine.service import REPO
from tests.spine.test_worker import drain, gh, spec  # noqa: F401  (gh: the fixture)

TRIAGE = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened]}\n    agent: codex\n"
          b"    prompt: Say whether the issue is a bug, a feature or a question.\n")


def bot_comments(fake, number: int = 1) -> list[str]:
    return [c["body"] for c in fake.comments(REPO, number) if c["user"]["login"] == "bot[bot]"]


def ask(fake, db, word: str, author: str = "Codertocat", comment_id: int = 77) -> None:
    fake.add_comment(REPO, 1, f"@bot {word}", user=author, comment_id=comment_id)
    enqueue(db, word, f"{REPO}#1", {**spec(author=author, kind=word), "target": {"type": "issue_comment",
                                                                               "id": comment_id}})


async def test_a_writers_pause_holds_the_thread_and_resume_clears_it(gh):  # noqa: F811
    db = store.connect(settings=current())
    ask(gh, db, "pause")
    await drain(db, 1)
    assert pauses.paused_by(db, REPO, 1) == "Codertocat"
    assert {"subject": "issue_comment", "comment_id": 77, "content": "+1"} in gh.reactions
    assert bot_comments(gh)[-1].startswith("⏸️ Paused by @Codertocat")
    ask(gh, db, "resume", comment_id=78)
    await drain(db, 2)
    assert pauses.paused_by(db, REPO, 1) is None
    assert {"subject": "issue_comment", "comment_id": 78, "content": "+1"} in gh.reactions
    assert bot_comments(gh)[-1].startswith("▶️ Resumed by @Codertocat")


async def test_pausing_a_paused_thread_says_it_already_is(gh):  # noqa: F811
    db = store.connect(settings=current())
    pauses.pause(db, REPO, 1, "alice")
    ask(gh, db, "pause")
    await drain(db, 1)
    assert pauses.paused_by(db, REPO, 1) == "alice"
    assert bot_comments(gh)[-1].startswith("Already paused by @alice")


async def test_a_readers_pause_is_refused_and_changes_nothing(gh):  # noqa: F811
    db = store.connect(settings=current())
    gh.set_permission(REPO, "reader", "read")
    ask(gh, db, "pause", author="reader")
    await drain(db, 1)
    assert pauses.paused_by(db, REPO, 1) is None
    [refusal] = bot_comments(gh)
    assert refusal.startswith("Sorry @reader, only people with write or maintain or admin permission on this "
                              "repository can use `pause` here, so nothing was done.")


async def test_a_paused_issues_automation_event_runs_nothing_and_claims_no_slot(gh):  # noqa: F811
    db = store.connect(settings=current())
    gh.add_content(REPO, ".github/bot.yml", TRIAGE)
    pauses.pause(db, REPO, 1, "Codertocat")
    enqueue(db, "episode", f"{REPO}#1", {**spec(), "target": {"type": "issue", "id": 1},
                                          "automatic": {"kind": "automation", "detail": "issues.opened"}})
    rows = await drain(db, 1)
    assert rows[0]["status"] == "done" and bot_comments(gh) == []
    assert db.query("SELECT slot FROM automation_runs") == [] and db.query("SELECT id FROM runs") == []


async def test_a_paused_pull_requests_push_review_does_not_run(gh):  # noqa: F811
    db = store.connect(settings=current())
    gh.add_content(REPO, ".github/bot.yml", b"reviews:\n  on_push: true\n")
    pauses.pause(db, REPO, 2, "Codertocat")
    enqueue(db, "episode", f"{REPO}#2", {**spec(review=True, request=""), "number": 2, "is_pr": True,
                                          "target": {"type": "issue", "id": 2},
                                          "automatic": {"kind": "synchronize", "detail": "f" * 40}})
    rows = await drain(db, 1)
    assert rows[0]["status"] == "done" and bot_comments(gh, 2) == []
    assert db.query("SELECT id FROM runs") == []
