"""bot/review/memory.py: what the bot remembers of its reviews of a pull request, on SQLite and
PostgreSQL (migration 6)."""
from __future__ import annotations

import pytest

from bot import db as bot_db
from bot.review import memory
from bot.review.memory import Posted
from tests.entry_settings import current
from tests.store.conftest import backend, pg_url  # noqa: F401 - the two-backend fixtures

pytestmark = pytest.mark.usefixtures("backend")
SHA1, SHA2 = "a" * 40, "b" * 40


def posted(agent: str = "codex", comment_id: int = 11, path: str = "app.py") -> Posted:
    return Posted(agent, comment_id, path, 3, None, "RIGHT", "important", "f" * 16, "add subtracts")


def test_the_commit_last_reviewed_is_remembered_per_agent():
    db = bot_db.connect(settings=current())
    memory.remember(db, "o/r", 2, ["codex"], SHA1, 501, [posted()])
    memory.remember(db, "o/r", 2, ["codex", "claude"], SHA2, 502, [])
    assert memory.last_reviewed(db, "o/r", 2, ["codex", "claude", "gemini"]) == {"codex": SHA2, "claude": SHA2}
    assert memory.reviewed(db, "o/r", 2) and not memory.reviewed(db, "o/r", 3)


def test_each_posted_finding_is_kept_with_its_comment_and_review():
    db = bot_db.connect(settings=current())
    memory.remember(db, "o/r", 2, ["codex"], SHA1, 501, [posted()])
    [earlier] = memory.findings(db, "o/r", 2)
    assert (earlier.agent, earlier.comment_id, earlier.commit_sha, earlier.path, earlier.line, earlier.severity,
            earlier.state) == ("codex", 11, SHA1, "app.py", 3, "important", "open")
    assert db.query("SELECT review_id FROM review_findings")[0]["review_id"] == 501


def test_a_fixed_finding_is_no_longer_listed_and_a_declined_one_is():
    db = bot_db.connect(settings=current())
    memory.remember(db, "o/r", 2, ["codex"], SHA1, 501, [posted(comment_id=11), posted(comment_id=12, path="b.py")])
    first, second = memory.findings(db, "o/r", 2)
    memory.mark(db, [first.id], memory.FIXED, "in bbbbbbb")
    memory.mark(db, [second.id], memory.DECLINED, "won't fix")
    assert [(e.comment_id, e.state) for e in memory.findings(db, "o/r", 2)] == [(12, "declined")]
