"""The next scheduled run the settings page shows: the first slot of any of the automation's cron
lines strictly after now, in UTC, as stepping minute by minute finds it, and the slot the tick then
claims."""
from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from bot import db as bot_db
from bot.automations.schedule import next_run, remember
from bot.cron import parse as parse_cron
from bot.service.schedules import tick
from bot.workspace.repo_config import parse
from tests.automations.test_cron import DENSE, MOMENTS
from tests.entry_settings import current

TUESDAY = dt.datetime(2026, 12, 8, 10, 17, 30, tzinfo=dt.UTC)


def scheduled(*crons: str) -> str:
    lines = ", ".join(f'{{cron: "{text}"}}' for text in crons)
    return f"automations:\n  - name: deps\n    on:\n      schedule: [{lines}]\n    agent: codex\n    prompt: p\n"


def automation(*crons: str):
    return parse(scheduled(*crons), source="t").automations[0]


def test_a_weekly_schedule_runs_next_on_the_coming_monday_at_six():
    assert next_run(automation("0 6 * * 1"), TUESDAY) == dt.datetime(2026, 12, 14, 6, 0, tzinfo=dt.UTC)


def test_of_several_cron_lines_the_earliest_slot_is_next():
    both = automation("0 6 * * 1", "30 18 1-7 * 5")  # Mondays at six, and the month's first Friday at 18:30
    assert next_run(both, dt.datetime(2026, 12, 29, tzinfo=dt.UTC)) == dt.datetime(2027, 1, 1, 18, 30, tzinfo=dt.UTC)


def test_the_current_minute_is_not_next_even_when_it_is_a_slot():
    assert next_run(automation("17 * * * *"), TUESDAY) == dt.datetime(2026, 12, 8, 11, 17, tzinfo=dt.UTC)


def test_an_automation_without_a_schedule_has_no_next_run():
    fired = parse("automations:\n  - {name: n, on: {fire: {}}, agent: codex, prompt: p}\n", source="t")
    assert next_run(fired.automations[0], TUESDAY) is None


def _stepped(crons: list[str], moment: dt.datetime, limit: int) -> dt.datetime | None:
    parsed = [parse_cron(text) for text in crons]
    probe = moment.replace(second=0, microsecond=0)
    for _ in range(limit):
        probe += dt.timedelta(minutes=1)
        if any(cron.matches(probe) for cron in parsed):
            return probe
    return None


@settings(max_examples=40, deadline=None)
@given(st.lists(DENSE, min_size=1, max_size=3), MOMENTS)
def test_the_next_run_agrees_with_stepping_minute_by_minute(crons, moment):
    expected = _stepped(crons, moment, 60 * 24 * 40)
    if expected is not None:
        assert next_run(automation(*crons), moment) == expected


def test_the_tick_claims_the_slot_the_page_showed_and_none_before_it(backend):
    db = bot_db.connect(settings=current())
    remember(db, "o/r", 1, 1, scheduled("*/20 9-11 * * 2"), "t")
    assert tick(db, TUESDAY) == []  # first seen now
    shown = next_run(automation("*/20 9-11 * * 2"), TUESDAY)
    assert tick(db, shown - dt.timedelta(minutes=1)) == []
    assert tick(db, shown) == [("o/r", "deps", shown.strftime("%Y-%m-%dT%H:%MZ"))]
