"""The cron grammar: parsed fields, refusals naming the field, and next/previous slots that agree
with stepping minute by minute through `matches`."""
from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.cron import CronError, parse

MOMENTS = st.datetimes(min_value=dt.datetime(2020, 1, 1), max_value=dt.datetime(2035, 1, 1)).map(
    lambda moment: moment.replace(tzinfo=dt.UTC))


def _field(low: int, high: int) -> st.SearchStrategy[str]:
    number = st.integers(low, high)
    ranges = st.tuples(number, number).map(lambda ab: f"{min(ab)}-{max(ab)}")
    item = st.one_of(number.map(str), ranges, st.just("*"),
                     st.tuples(st.sampled_from(["*"]) | ranges, st.integers(1, 7)).map(lambda s: f"{s[0]}/{s[1]}"))
    return st.lists(item, min_size=1, max_size=3).map(",".join)


# dense fields, so brute force stepping finds a slot within a few days
DENSE = st.tuples(_field(0, 59), st.sampled_from(["*", "*/3", "1-20", "5,17"]), _field(1, 31),
                  st.just("*"), _field(0, 7)).map(" ".join)


def _brute_next(cron, moment: dt.datetime, limit: int) -> dt.datetime | None:
    probe = moment.replace(second=0, microsecond=0)
    for _ in range(limit):
        probe += dt.timedelta(minutes=1)
        if cron.matches(probe):
            return probe
    return None


def _brute_previous(cron, moment: dt.datetime, limit: int) -> dt.datetime | None:
    probe = moment.replace(second=0, microsecond=0)
    for _ in range(limit):
        if cron.matches(probe):
            return probe
        probe -= dt.timedelta(minutes=1)
    return None


LIMIT = 60 * 24 * 40  # forty days of minutes


@settings(max_examples=60, deadline=None)
@given(DENSE, MOMENTS)
def test_next_slot_agrees_with_stepping_minute_by_minute(text, moment):
    cron = parse(text)
    expected = _brute_next(cron, moment, LIMIT)
    if expected is not None:
        assert cron.next_after(moment) == expected


@settings(max_examples=60, deadline=None)
@given(DENSE, MOMENTS)
def test_previous_slot_agrees_with_stepping_minute_by_minute(text, moment):
    cron = parse(text)
    expected = _brute_previous(cron, moment, LIMIT)
    if expected is not None:
        assert cron.previous(moment) == expected


def test_a_monday_schedule_falls_on_mondays_at_six():
    cron = parse("0 6 * * 1")
    slot = cron.next_after(dt.datetime(2026, 12, 8, tzinfo=dt.UTC))
    assert slot == dt.datetime(2026, 12, 14, 6, 0, tzinfo=dt.UTC) and slot.weekday() == 0


def test_both_day_fields_restricted_match_either_as_in_cron():
    cron = parse("0 0 1 * 1")  # the first of the month, and every Monday
    assert cron.matches(dt.datetime(2026, 12, 1, tzinfo=dt.UTC))  # a Tuesday
    assert cron.matches(dt.datetime(2026, 12, 7, tzinfo=dt.UTC))  # a Monday


def test_seven_is_sunday_like_zero():
    assert parse("0 0 * * 7").weekdays == parse("0 0 * * 0").weekdays == frozenset({0})


@pytest.mark.parametrize(("text", "named"), [
    ("0 6 * *", "five fields"), ("60 * * * *", "minute"), ("* 24 * * *", "hour"), ("* * 0 * *", "day of month"),
    ("* * * 13 *", "month"), ("* * * * 8", "day of week"), ("5-1 * * * *", "runs backwards"),
    ("5/2 * * * *", "step"), ("* * * * MON", "day of week"), ("@daily", "five fields"), ("*/0 * * * *", "minute"),
    ("１ * * * *", "minute")])
def test_an_expression_outside_the_grammar_is_refused_naming_the_field(text, named):
    with pytest.raises(CronError, match=named):
        parse(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_any_text_parses_or_is_refused_with_a_cron_error(text):
    try:
        cron = parse(text)
    except CronError:
        return
    assert all(0 <= m <= 59 for m in cron.minutes) and cron.weekdays <= set(range(7))
