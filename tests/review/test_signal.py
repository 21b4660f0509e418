"""bot/review/signal.py: each agent's reviews, findings and what became of them, reactions and cost,
read from the database, on SQLite and PostgreSQL."""
from __future__ import annotations

import pytest

from bot import db as bot_db
from bot.review import memory, signal
from bot.review.memory import Posted
from tests.entry_settings import current
from tests.store.conftest import backend, pg_url  # noqa: F401 - the two-backend fixtures

pytestmark = pytest.mark.usefixtures("backend")


def a_review(db, run_id: str, agent: str, conversation: str, usd: float) -> None:
    db.execute("INSERT INTO runs (id, conversation, agent, status) VALUES (?, ?, ?, 'ok')",
               [run_id, conversation, agent])
    db.execute("INSERT INTO run_events (run_id, seq, kind, outcome) VALUES (?, 1, 'review', 'ok')", [run_id])
    db.execute("INSERT INTO model_spend (run_id, tokens, usd) VALUES (?, 100, ?)", [run_id, usd])


def findings(db, repo: str, number: int, agent: str, states: list[str]) -> None:
    memory.remember(db, repo, number, [agent], "a" * 40, 9,
                    [Posted(agent, 1000 + i, f"f{i}.py", 1, None, "RIGHT", "nit", "f" * 16, f"finding {i}")
                     for i in range(len(states))]
                    + [Posted(agent, None, "listed.py", 1, None, "RIGHT", "nit", "f", "x")])  # listed, not inline
    inline = sorted((f for f in memory.findings(db, repo, number) if f.comment_id), key=lambda f: f.path)
    for finding, state in zip(inline, states, strict=True):
        if state != memory.OPEN:
            memory.mark(db, [finding.id], state, "", via="reply")


def test_each_agents_signal_counts_its_reviews_findings_reactions_and_cost_in_one_repository():
    db = bot_db.connect(settings=current())
    a_review(db, "r1", "codex", "o/r#1", 0.02)
    a_review(db, "r2", "codex", "o/r#2", 0.04)
    a_review(db, "r3", "codex", "o/r_x#1", 9.0)  # another repository whose name `LIKE 'o/r%'` would take
    db.execute("INSERT INTO runs (id, conversation, agent, status) VALUES ('r4', 'o/r#3', 'codex', 'ok')")  # no review
    findings(db, "o/r", 1, "codex", [memory.FIXED, memory.DECLINED, memory.OPEN, memory.FIXED])
    db.execute("INSERT INTO review_reactions (repo, comment_id, login, content, agent, created_at) "
               "VALUES ('o/r', 1000, 'alice', '+1', 'codex', 0), ('o/r', 1001, 'alice', '-1', 'codex', 0)")
    [row] = signal.per_agent(db, "o/r")
    assert (row.agent, row.reviews, row.posted, row.fixed, row.declined, row.open) == ("codex", 2, 4, 2, 1, 1)
    assert (row.thumbs_up, row.thumbs_down, row.acted_on) == (1, 1, 0.5)
    assert row.cost_per_review == pytest.approx(0.03)


def test_an_agent_the_registry_does_not_name_is_not_listed():
    db = bot_db.connect(settings=current())
    a_review(db, "r1", "evil\nname", "o/r#1", 0.02)
    findings(db, "o/r", 1, "evil\nname", [memory.OPEN])
    assert signal.per_agent(db, "o/r") == [] and signal.per_agent(db) == []


def test_every_repository_together_without_naming_them():
    db = bot_db.connect(settings=current())
    a_review(db, "r1", "claude", "o/a#1", 0.01)
    a_review(db, "r2", "claude", "o/b#1", 0.03)
    [row] = signal.per_agent(db)
    assert (row.agent, row.reviews, row.acted_on) == ("claude", 2, None)
    assert row.cost_per_review == pytest.approx(0.02)
