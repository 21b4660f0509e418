"""bot/review/signal_series.py: each agent's findings per week they were posted, and what became of
them, read in one bounded query, on SQLite and PostgreSQL; every finding in the window lands in the
week that holds it (hypothesis)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import db as bot_db
from bot.review import memory, signal, signal_series
from bot.review.memory import Posted
from bot.review.signal_series import MAX_WEEKS, WEEK_S, week_start
from tests.entry_settings import current
from tests.store.conftest import backend, pg_url  # noqa: F401 - the two-backend fixtures

pytestmark = pytest.mark.usefixtures("backend")
NOW = 1_767_225_600.0 + 3 * 86_400 + 5_000  # Thursday 2026-01-01 + 3 days, mid-morning UTC
_numbers = iter(range(1, 10**6))


def posted(db, repo: str, agent: str, at: float, state: str = memory.OPEN, inline: bool = True) -> None:
    """One finding `agent` posted at `at` (epoch seconds), now in `state`."""
    number = next(_numbers)
    memory.remember(db, repo, number, [agent], "a" * 40, 9,
                    [Posted(agent, number if inline else None, "f.py", 1, None, "RIGHT", "nit", "f", f"finding {number}")])
    [finding] = memory.findings(db, repo, number)
    db.execute("UPDATE review_findings SET created_at = ? WHERE id = ?", [at, finding.id])
    if state != memory.OPEN:
        memory.mark(db, [finding.id], state, "", via="reply")


def test_each_week_counts_the_findings_posted_in_it_by_what_became_of_them():
    db = bot_db.connect(settings=current())
    this = week_start(NOW)
    for state in (memory.FIXED, memory.DECLINED, memory.OPEN):
        posted(db, "o/r", "codex", this - WEEK_S + 60, state)
    posted(db, "o/r", "codex", this + 1, memory.FIXED)
    posted(db, "o/r", "codex", this + 2, memory.FIXED)
    [(agent, weeks)] = signal_series.weekly(db, "o/r", NOW).items()
    assert agent == "codex" and len(weeks) == MAX_WEEKS and weeks[-1].start == this
    assert (weeks[-2].posted, weeks[-2].fixed, weeks[-2].declined, weeks[-2].open) == (3, 1, 1, 1)
    assert (weeks[-1].posted, weeks[-1].acted_on) == (2, 1.0)
    assert all(w.posted == 0 and w.acted_on is None for w in weeks[:-2])
    assert weeks[-1].label == "2025-12-29"  # the Monday of NOW's week


def test_the_weeks_add_up_to_the_totals_over_the_same_span():
    db = bot_db.connect(settings=current())
    for i, state in enumerate([memory.FIXED, memory.OPEN, memory.DECLINED, memory.FIXED, memory.FIXED]):
        posted(db, "o/r", "claude", NOW - i * 3 * 86_400, state)
    [weeks] = signal_series.weekly(db, "o/r", NOW).values()
    [total] = signal.per_agent(db, "o/r")
    assert (sum(w.posted for w in weeks), sum(w.fixed for w in weeks), sum(w.declined for w in weeks)) == (
        total.posted, total.fixed, total.declined)


def test_findings_before_the_window_of_other_repositories_or_not_inline_are_not_counted():
    db = bot_db.connect(settings=current())
    posted(db, "o/r", "codex", week_start(NOW) - MAX_WEEKS * WEEK_S)  # the week before the window
    posted(db, "o/r_x", "codex", NOW)  # a repository whose name `LIKE 'o/r_'` would take
    posted(db, "o/r", "codex", NOW, inline=False)
    assert signal_series.weekly(db, "o/r", NOW) == {}
    assert sum(w.posted for w in signal_series.weekly(db, None, NOW)["codex"]) == 1


def test_an_agent_the_registry_does_not_name_has_no_series():
    db = bot_db.connect(settings=current())
    posted(db, "o/r", "evil</text><script>", NOW)
    assert signal_series.weekly(db, "o/r", NOW) == {}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(min_value=0, max_value=MAX_WEEKS * WEEK_S - 1), min_size=1, max_size=6))
def test_every_finding_in_the_window_lands_in_the_week_that_holds_it(ages):
    db = bot_db.connect(settings=current())
    db.execute("DELETE FROM review_findings")
    end = week_start(NOW) + WEEK_S
    for age in ages:
        posted(db, "o/p", "codex", end - 1 - age)
    [weeks] = signal_series.weekly(db, "o/p", NOW).values()
    expected = [sum(1 for age in ages if w.start <= end - 1 - age < w.start + WEEK_S) for w in weeks]
    assert [w.posted for w in weeks] == expected and sum(expected) == len(ages)
