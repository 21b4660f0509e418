"""bot/web/review_push.py: a push to a reviewed pull request queues one review, coalesced while it
waits unclaimed."""
from __future__ import annotations

import json
import uuid

from bot.review import memory
from bot.service import queue, store

CONVERSATION = "octo/repo#2"


def push_spec(n: int) -> dict:
    return {"repo": "octo/repo", "number": 2, "author": "Codertocat", "command": {"kind": "run", "review": True},
            "automatic": {"kind": "synchronize", "detail": f"push {n}", "draft": False}}


def push(db, n: int) -> int | None:
    from bot.web.review_push import coalesced
    return store.write(db, lambda conn: coalesced(
        conn, delivery_id=uuid.uuid4().hex, event="pull_request", action="synchronize", kind="episode",
        conversation=CONVERSATION, spec=push_spec(n)))


def reviewed(db) -> None:
    memory.remember(db, "octo/repo", 2, ["codex"], "a" * 40, 1, [])


def test_pushes_while_a_review_waits_unclaimed_give_one_job_for_the_last_push(tmp_path):
    db = store.connect(tmp_path / "bot.db")
    reviewed(db)
    assert push(db, 1) == push(db, 2) == push(db, 3)
    [job] = store.jobs(db)
    spec = json.loads(job["spec"])
    assert spec["automatic"]["detail"] == "push 3" and spec["coalesced"] == 3


def test_a_push_after_the_review_was_claimed_queues_another(tmp_path):
    db = store.connect(tmp_path / "bot.db")
    reviewed(db)
    first = push(db, 1)
    assert queue.claim(db, "worker-1").id == first
    assert push(db, 2) not in (None, first)


def test_a_push_to_a_pull_request_never_reviewed_queues_nothing(tmp_path):
    db = store.connect(tmp_path / "bot.db")
    assert push(db, 1) is None and store.jobs(db) == []
