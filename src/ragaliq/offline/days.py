"""The weekdays and months a text names without writing each.

By a span ("Monday to Friday") or by a word for several ("weekdays", "daily"). The context's
index keeps them beside the days a sentence writes, so that a claim naming Wednesday is
grounded on "open Monday to Friday".
"""

from __future__ import annotations

import re

from ragaliq.text.words import (
    CALENDAR,
    CALENDAR_HINTS,
)

_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday".split())


_IMPLIED_DAYS = (
    (re.compile(r"\bweekdays?\b", re.I), _WEEKDAYS),
    (re.compile(r"\bweekends?\b", re.I), frozenset(("saturday", "sunday"))),
    (
        re.compile(
            r"\b(?:daily|every ?day|(?:seven|7) days a week|all week|24/7|round the clock)\b",
            re.I,
        ),
        _WEEKDAYS | {"saturday", "sunday"},
    ),
)


_DAYS_HINTS = (*CALENDAR_HINTS, "day", "week", "dai", "24/7", "clock")
"""Words a text names or implies a day or a month with, lower case (a quick test)."""


_DAY_ORDER = (
    "monday tuesday wednesday thursday friday saturday sunday".split(),
    "january february march april may june july august september october november december".split(),
)


_SPAN = re.compile(
    rf"\b({'|'.join(sorted(CALENDAR, key=len, reverse=True))})\.?"
    rf"\s*(?:-|\u2013|to|through|thru|until|till)\s*"
    rf"({'|'.join(sorted(CALENDAR, key=len, reverse=True))})\b",
    re.I,
)


def implied_day_set(text: str) -> frozenset[str]:
    """The weekdays and months a text names by a span or a word for several.

    "Monday to Friday" names Tuesday too, "weekdays" names Monday, "daily" every day.
    """
    return frozenset(day for day, _ in implied_days(text))


def implied_days(text: str) -> list[tuple[str, str]]:
    """The weekdays and months a text names by a span or a word for several, in order.

    Each comes with the words that name it ("daily", "Monday to Friday").
    """
    lower = text.lower()
    if not any(hint in lower for hint in _DAYS_HINTS):
        return []
    days: dict[str, str] = {}
    for pattern, named in _IMPLIED_DAYS:
        for match in pattern.finditer(text):
            for day in sorted(named):
                days.setdefault(day, match.group(0))
    for match in _SPAN.finditer(text):
        first, last = CALENDAR[match[1].lower()], CALENDAR[match[2].lower()]
        for order in _DAY_ORDER:
            if first in order and last in order:
                k = order.index(first)
                while order[k] != last:
                    days.setdefault(order[k], match.group(0))
                    k = (k + 1) % len(order)
    return list(days.items())
