"""The signal of each agent's reviews, read from what the bot stored: how many reviews it ran, how many
findings it posted as inline comments, and what became of them (fixed, declined, still open), the
writers' 👍 and 👎 on them, the share acted on (fixed ÷ posted) and the model cost per review.

    for row in per_agent(db, "o/r"):       # one repository, for its settings page
        row.agent, row.posted, row.acted_on, row.cost_per_review
    per_agent(db)                           # every repository: the Prometheus metrics (no repository label)

A review is an agent's run that recorded the bot's `review` act (bot/job/review_job.py `_record`:
posted or quiet); its cost is the relay's ledger for that run (model_spend). Only agents the
adapters' registry names are listed: an agent's name never comes from stored text alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from adapters import base as adapters
from bot.review.memory import DECLINED, FIXED, OPEN

UP, DOWN = "+1", "-1"  # the reactions counted, GitHub's names for 👍 and 👎


@dataclass
class AgentSignal:
    agent: str
    reviews: int = 0
    posted: int = 0
    fixed: int = 0
    declined: int = 0
    open: int = 0
    thumbs_up: int = 0
    thumbs_down: int = 0
    cost_usd: float = 0.0

    @property
    def acted_on(self) -> float | None:
        return self.fixed / self.posted if self.posted else None

    @property
    def cost_per_review(self) -> float | None:
        return self.cost_usd / self.reviews if self.reviews else None


def per_agent(db: Any, repo: str | None = None) -> list[AgentSignal]:
    """One row per registered agent that reviewed (in `repo`, or anywhere), in the registry's order."""
    known = adapters.names()
    rows = {name: AgentSignal(name) for name in known}
    for row in _reviews(db, repo):
        if row["agent"] in rows:
            rows[row["agent"]].reviews, rows[row["agent"]].cost_usd = int(row["n"]), float(row["usd"] or 0.0)
    for row in _findings(db, repo):
        if row["agent"] in rows:
            _count_finding(rows[row["agent"]], row["state"], int(row["n"]))
    for row in _reactions(db, repo):
        if row["agent"] in rows:
            signal = rows[row["agent"]]
            if row["content"] == UP:
                signal.thumbs_up = int(row["n"])
            elif row["content"] == DOWN:
                signal.thumbs_down = int(row["n"])
    return [rows[name] for name in known if rows[name].reviews or rows[name].posted]


def _count_finding(signal: AgentSignal, state: str, n: int) -> None:
    signal.posted += n
    if state == FIXED:
        signal.fixed += n
    elif state == DECLINED:
        signal.declined += n
    elif state == OPEN:
        signal.open += n


def in_repo(column: str, repo: str | None, suffix: str = "") -> tuple[str, list[Any]]:
    """A condition on `column` naming `repo` (exactly: no LIKE, whose `_` is a wildcard)."""
    if repo is None:
        return "1 = 1", []
    if suffix:
        return f"substr({column}, 1, length(?)) = ?", [repo + suffix, repo + suffix]
    return f"{column} = ?", [repo]


def _reviews(db: Any, repo: str | None) -> list[dict]:
    where, args = in_repo("r.conversation", repo, "#")
    return db.query(
        "SELECT r.agent AS agent, COUNT(*) AS n, SUM(COALESCE(spend.usd, 0)) AS usd FROM runs r "
        "LEFT JOIN (SELECT run_id, SUM(COALESCE(usd, 0)) AS usd FROM model_spend GROUP BY run_id) spend "
        "ON spend.run_id = r.id "
        f"WHERE {where} AND EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = r.id AND e.kind = 'review') "
        "GROUP BY r.agent", args)


def _findings(db: Any, repo: str | None) -> list[dict]:
    where, args = in_repo("repo", repo)
    return db.query(f"SELECT agent, state, COUNT(*) AS n FROM review_findings WHERE {where} "
                    "AND comment_id IS NOT NULL GROUP BY agent, state", args)


def _reactions(db: Any, repo: str | None) -> list[dict]:
    where, args = in_repo("repo", repo)
    return db.query(f"SELECT agent, content, COUNT(*) AS n FROM review_reactions WHERE {where} "
                    "GROUP BY agent, content", args)
