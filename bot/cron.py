"""Five-field cron expressions (minute hour day-of-month month day-of-week), in UTC.

    cron = parse("0 6 * * 1")           # CronError naming the field, for anything else
    cron.matches(moment)                # the minute `moment` falls in is a slot
    cron.previous(moment)               # the latest slot at or before `moment`, or None
    cron.next_after(moment)             # the first slot after `moment`

Each field is `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a comma list of these.
Day of week: 0-7, both 0 and 7 are Sunday. As in every cron, when both day fields are
restricted a day matches either of them. No names (`MON`, `JAN`) and no `@daily`: what is not
declared here is refused.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from bot.errors import BotError

MAX_CHARS = 200
MAX_YEARS = 8  # Feb 29 on a Monday is the rarest slot: 28 years apart at worst; 8 covers leap days
_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7))


class CronError(BotError, ValueError):
    """A cron expression outside the grammar; the message names the field."""


@dataclass(frozen=True)
class Cron:
    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day of month is `*`
    any_weekday: bool  # day of week is `*`

    def day_matches(self, day: dt.date) -> bool:
        if day.month not in self.months:
            return False
        in_month, in_week = day.day in self.days, (day.weekday() + 1) % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week

    def matches(self, moment: dt.datetime) -> bool:
        moment = utc(moment)
        return self.day_matches(moment.date()) and moment.hour in self.hours and moment.minute in self.minutes

    def previous(self, moment: dt.datetime) -> dt.datetime | None:
        """The latest slot at or before `moment` (whole minutes), within MAX_YEARS."""
        moment = utc(moment).replace(second=0, microsecond=0)
        day = moment.date()
        for _ in range(366 * MAX_YEARS):
            if self.day_matches(day):
                last = moment.time() if day == moment.date() else dt.time(23, 59)
                found = self._last_time_until(last)
                if found is not None:
                    return dt.datetime.combine(day, found, dt.UTC)
            day -= dt.timedelta(days=1)
        return None

    def next_after(self, moment: dt.datetime) -> dt.datetime | None:
        """The first slot strictly after `moment`, within MAX_YEARS."""
        start = utc(moment).replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
        day = start.date()
        for _ in range(366 * MAX_YEARS):
            if self.day_matches(day):
                first = start.time() if day == start.date() else dt.time(0, 0)
                found = self._first_time_from(first)
                if found is not None:
                    return dt.datetime.combine(day, found, dt.UTC)
            day += dt.timedelta(days=1)
        return None

    def _first_time_from(self, earliest: dt.time) -> dt.time | None:
        return min((dt.time(h, m) for h in self.hours for m in self.minutes if dt.time(h, m) >= earliest),
                   default=None)

    def _last_time_until(self, latest: dt.time) -> dt.time | None:
        return max((dt.time(h, m) for h in self.hours for m in self.minutes if dt.time(h, m) <= latest),
                   default=None)


def utc(moment: dt.datetime) -> dt.datetime:
    """A naive time is taken as UTC."""
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def parse(text: object) -> Cron:
    if not isinstance(text, str):
        raise CronError("a cron expression is a text of five fields, e.g. \"0 6 * * 1\"")
    if len(text) > MAX_CHARS:
        raise CronError(f"a cron expression is at most {MAX_CHARS} characters")
    parts = text.split()
    if len(parts) != 5:
        raise CronError(f"a cron expression has five fields (minute hour day month weekday), not {len(parts)}")
    values = [_field(part, name, low, high) for part, (name, low, high) in zip(parts, _FIELDS, strict=True)]
    weekdays = frozenset(day % 7 for day in values[4])
    return Cron(" ".join(parts), values[0], values[1], values[2], values[3], weekdays,
                any_day=parts[2] == "*", any_weekday=parts[4] == "*")


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    found: set[int] = set()
    for item in text.split(","):
        found |= _item(item, name, low, high)
    return frozenset(found)


def _item(item: str, name: str, low: int, high: int) -> set[int]:
    span, _, step_text = item.partition("/")
    step = _number(step_text, name, 1, high - low + 1) if step_text else 1
    if span == "*":
        first, last = low, high
    elif "-" in span:
        start, _, end = span.partition("-")
        first, last = _number(start, name, low, high), _number(end, name, low, high)
        if first > last:
            raise CronError(f"{name}: the range {item!r} runs backwards")
    elif step_text:
        raise CronError(f"{name}: a step follows `*` or a range, not {item!r}")
    else:
        first = last = _number(span, name, low, high)
    return set(range(first, last + 1, step))


def _number(text: str, name: str, low: int, high: int) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 2:
        raise CronError(f"{name}: {text!r} is not a number from {low} to {high}")
    value = int(text)
    if not low <= value <= high:
        raise CronError(f"{name}: {value} is outside {low}-{high}")
    return value
