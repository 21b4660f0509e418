"""Each agent's review signal over time: per week, the inline findings it posted that week and
what has become of them since (fixed, declined by a writer, still open), so a team sees whether
the share it acts on rises (the "52% to 78%" the learning is meant to bring).

    series = weekly(db, "o/r", now=time.time())      # {agent: [Week, …]}, oldest week first
    week.start, week.posted, week.fixed, week.declined, week.open, week.acted_on
    weekly(db, None, now)                             # every repository: the Prometheus gauges

A week is a cohort: the findings posted in it (Monday 00:00 to Monday 00:00 UTC), counted by their
state now, so the weeks add up to the totals of bot/review/signal.py for the same span. One
aggregate query reads the last `MAX_WEEKS` weeks (a bounded read: one row per agent and state);
only agents the adapters' registry names are kept.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from adapters import base as adapters
from bot.review.memory import DECLINED, FIXED, OPEN
from bot.review.signal import in_repo

WEEK_S = 7 * 86_400
MONDAY_S = 4 * 86_400  # 1970-01-05 00:00 UTC, the first Monday after the epoch
MAX_WEEKS = 12


@dataclass(frozen=True)
class Week:
    start: float  # epoch seconds: Monday 00:00 UTC
    posted: int = 0
    fixed: int = 0
    declined: int = 0
    open: int = 0

    @property
    def acted_on(self) -> float | None:
        return self.fixed / self.posted if self.posted else None

    @property
    def label(self) -> str:
        return time.strftime("%Y-%m-%d", time.gmtime(self.start))


def week_start(at: float) -> float:
    return MONDAY_S + ((at - MONDAY_S) // WEEK_S) * WEEK_S


def starts(now: float, weeks: int = MAX_WEEKS) -> list[float]:
    """The Mondays of the last `weeks` weeks, this one last."""
    this = week_start(now)
    return [this - (weeks - 1 - i) * WEEK_S for i in range(weeks)]


def weekly(db: Any, repo: str | None, now: float, weeks: int = MAX_WEEKS) -> dict[str, list[Week]]:
    """Per registered agent that posted in the window, its weeks, oldest first (empty ones included)."""
    mondays = starts(now, weeks)
    counts: dict[str, list[dict[str, int]]] = {}
    for row in _rows(db, repo, mondays):
        if row["agent"] not in adapters.names() or row["state"] not in (FIXED, DECLINED, OPEN):
            continue
        per_week = counts.setdefault(row["agent"], [{} for _ in mondays])
        for i in range(len(mondays)):
            per_week[i][row["state"]] = per_week[i].get(row["state"], 0) + int(row[f"w{i}"] or 0)
    return {agent: [_week(monday, parts) for monday, parts in zip(mondays, counts[agent], strict=True)]
            for agent in adapters.names() if agent in counts
            and any(sum(parts.values()) for parts in counts[agent])}


def _week(monday: float, parts: dict[str, int]) -> Week:
    return Week(monday, sum(parts.values()), parts.get(FIXED, 0), parts.get(DECLINED, 0), parts.get(OPEN, 0))


def _rows(db: Any, repo: str | None, mondays: list[float]) -> list[dict]:
    """One row per (agent, state): how many inline findings were posted in each week (w0 the oldest)."""
    where, args = in_repo("repo", repo)
    columns, bounds = [], []
    for i, monday in enumerate(mondays):
        columns.append(f"SUM(CASE WHEN created_at >= ? AND created_at < ? THEN 1 ELSE 0 END) AS w{i}")
        bounds += [monday, monday + WEEK_S]
    return db.query(f"SELECT agent, state, {', '.join(columns)} FROM review_findings WHERE {where} "
                    "AND comment_id IS NOT NULL AND created_at >= ? AND created_at < ? GROUP BY agent, state",
                    [*bounds, *args, mondays[0], mondays[-1] + WEEK_S])
