"""Five-field cron expressions (minute hour day-of-month month day-of-week) and their next time.

Supports `*`, lists, ranges, steps (`*/15`, `1-5/2`), 7 as Sunday, and @hourly, @daily,
@weekly, @monthly, @yearly. As in cron, when both day fields are restricted either may match.
Times are the machine's local time.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

ALIASES = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
           "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *"}
BOUNDS = [("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7)]


class CronError(ValueError):
    """The expression is not valid; the message says which field and why."""


@dataclass(frozen=True)
class Cron:
    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool
    any_weekday: bool

    def matches_day(self, day: dt.datetime) -> bool:
        weekday = (day.weekday() + 1) % 7
        if self.any_day or self.any_weekday:
            return day.day in self.days and weekday in self.weekdays
        return day.day in self.days or weekday in self.weekdays

    def next_after(self, after: dt.datetime) -> dt.datetime:
        """The first matching minute strictly after `after` (an aware datetime)."""
        when = after.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
        limit = when + dt.timedelta(days=366 * 5)
        while when < limit:
            if when.month not in self.months:
                month_start = when.replace(day=1, hour=0, minute=0)
                when = (month_start + dt.timedelta(days=32)).replace(day=1)
            elif not self.matches_day(when):
                when = when.replace(hour=0, minute=0) + dt.timedelta(days=1)
            elif when.hour not in self.hours:
                when = when.replace(minute=0) + dt.timedelta(hours=1)
            elif when.minute not in self.minutes:
                when += dt.timedelta(minutes=1)
            else:
                return when
        raise CronError(f"{self.text!r} never matches a real date")


def parse_cron(text: str) -> Cron:
    expression = ALIASES.get(text.strip().lower(), text.strip())
    fields = expression.split()
    if len(fields) != 5:
        raise CronError(f"cron {text!r} needs 5 fields (minute hour day-of-month month day-of-week), "
                        f"got {len(fields)}")
    sets = [_field(value, name, low, high) for value, (name, low, high) in zip(fields, BOUNDS)]
    weekdays = frozenset(d % 7 for d in sets[4])
    return Cron(text.strip(), frozenset(sets[0]), frozenset(sets[1]), frozenset(sets[2]), frozenset(sets[3]),
                weekdays, fields[2] == "*", fields[4] == "*")


def _field(value: str, name: str, low: int, high: int) -> set[int]:
    result: set[int] = set()
    for part in value.split(","):
        base, _, step_text = part.partition("/")
        step = _number(step_text, name) if step_text else 1
        if step < 1:
            raise CronError(f"cron {name}: step must be at least 1 in {part!r}")
        if base == "*":
            start, end = low, high
        elif "-" in base:
            first, _, last = base.partition("-")
            start, end = _number(first, name), _number(last, name)
        else:
            start = _number(base, name)
            end = high if step_text else start
        if not (low <= start <= end <= high):
            raise CronError(f"cron {name}: {part!r} is outside {low}-{high}")
        result.update(range(start, end + 1, step))
    return result


def _number(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CronError(f"cron {name}: {text!r} is not a number") from None
