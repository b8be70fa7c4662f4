"""Weekly opening times in a record, and the days and times a claim states.

A record value is a week when it maps day names to time ranges (``{"Monday": "9:0-17:30",
"Tuesday": "9:00-17:30"}``), whatever its key is called. A claim is read clause by clause for day
mentions (``Monday to Friday``, ``weekends``, ``daily``) and time ranges (``9 am to 5 pm``,
``17:00-21:00``, ``noon-midnight``); each range is checked on the days it is said of.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["DAYS", "Week", "check_week", "parse_week"]

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_ALIASES = {
    **{day: i for i, day in enumerate(DAYS)},
    **{day + "s": i for i, day in enumerate(DAYS)},
    "mon": 0,
    "tue": 1,
    "tues": 1,
    "wed": 2,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "fri": 4,
    "sat": 5,
    "sun": 6,
}
MIN_DAYS = 3
"""A mapping with at least this many day names for keys, and nothing else, is a week."""
_VALUE = re.compile(r"\s*+(\d{1,2})[:.](\d{1,2})\s*+[-\u2013]\s*+(\d{1,2})[:.](\d{1,2})\s*+")
_HOURS_TALK = re.compile(r"\b(?:open|opens|hours|operat\w*|closed?|closes)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|except)\b|n't\b", re.IGNORECASE)
_TIME = re.compile(
    r"(?<![\d.$])(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?\s*(?P<ap>[ap]\.?\s?m\b\.?)?"
    r"|(?P<word>\bnoon\b|\bmidnight\b)",
    re.IGNORECASE,
)
_RANGE_SEP = re.compile(r"^\s*(?:-|\u2013|\u2014|to|until|till|through)\s*$", re.IGNORECASE)
_DAY = re.compile(
    r"\b(?:" + "|".join(sorted(_DAY_ALIASES, key=len, reverse=True)) + r")\b\.?", re.IGNORECASE
)
_DAY_RANGE_SEP = re.compile(r"^\s*(?:-|\u2013|to|through|thru)\s*$", re.IGNORECASE)
_DAY_LIST_SEP = re.compile(r"^\s*(?:,|and|&|,\s*and)\s*$", re.IGNORECASE)
_ALL_WEEK = re.compile(
    r"\b(?:daily|every ?day(?: of the week)?|(?:seven|7) days(?: a| per) week|all week)\b",
    re.IGNORECASE,
)
_WEEKDAYS = re.compile(r"\bweekdays\b", re.IGNORECASE)
_WEEKENDS = re.compile(r"\bweekends?\b", re.IGNORECASE)
_CLOSED = re.compile(r"\bclosed\b", re.IGNORECASE)

Span = tuple[int, int]
"""Opening and closing minute of a day (closing may pass 1440, midnight)."""
Note = Callable[..., None]
"""Reports one check: the days that disagree (empty when it agrees), how the record disagrees,
what the claim said, a quote from the record, and (when true) that the claim simplifies the
week rather than contradicts it: "weekends" said of hours that hold on one of the two days."""


@dataclass(frozen=True)
class Week:
    """A record's opening times: day (0 = Monday) to its span, None for a day it is closed."""

    key: str
    """The key the week is under, for quotes."""
    raw: dict[str, str]
    """The value as the record writes it."""
    days: dict[int, Span | None]

    def quote(self, days: Iterable[int]) -> str:
        """The record's entry for the first of ``days`` it lists, or the whole value."""
        for day in days:
            for name, value in self.raw.items():
                if _DAY_ALIASES.get(name.lower()) == day:
                    return f'"{name}": "{value}"'
        return f'"{self.key}": {self.raw}'[:200]


def parse_week(key: str, value: Any) -> Week | None:
    """The week a record value holds, when it maps day names to ``H:MM-H:MM`` ranges."""
    if not isinstance(value, dict) or len(value) < MIN_DAYS:
        return None
    days: dict[int, Span | None] = dict.fromkeys(range(7))
    for name, span in value.items():
        index = _DAY_ALIASES.get(str(name).lower())
        match = _VALUE.fullmatch(str(span))
        if index is None or match is None:
            return None
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        start, end = h1 * 60 + m1, h2 * 60 + m2
        days[index] = None if start == end == 0 else (start, end or 1440)
    return Week(key=key, raw={str(k): str(v) for k, v in value.items()}, days=days)


@dataclass(frozen=True, slots=True)
class _Mention:
    start: int
    end: int
    days: tuple[int, ...] = ()
    minutes: Span = (0, 0)


def check_week(week: Week, clauses: Sequence[str], note: Note) -> None:
    """Check the days and times each clause of a claim states against the week."""
    hours = week.days
    parsed = [(c, _day_specs(c), _time_ranges(c)) for c in clauses]
    specific = _specific_days(parsed)
    weekend = _weekend_hours(parsed)
    carried: list[_Mention] = []
    for clause, specs, ranges in parsed:
        if not specs and not ranges:
            carried = []
            continue
        if _CLOSED.search(clause) and specs and not ranges:
            days = sorted({d for spec in specs for d in spec.days})
            wrong = [DAYS[d] for d in days if hours.get(d) is not None]
            note(wrong, "open", "closed", week.quote(days))
            carried = []
            continue
        for said, (start, end) in _pair(carried + specs, ranges):
            shown = f"{_clock(start)}-{_clock(end)}"
            if said:
                # Days a narrower mention in the claim gives their own hours are its to check
                # ("11 am to 8 pm daily, until 9 pm on Fridays").
                said = tuple(d for d in said if specific.get(d, 8) >= len(said))
                if said == _WORKWEEK and any(_same(hours.get(FRIDAY), *w) for w in weekend):
                    said = said[:FRIDAY]  # Friday evening kept with the weekend's hours
                wrong = [DAYS[d] for d in said if not _same(hours.get(d), start, end)]
                if set(said) == _WEEKEND and len(wrong) == 1:
                    # "weekends" said of hours that hold on one of the two days: a claim that
                    # simplifies, which the offline judge cannot check, not one it faults
                    note(wrong, f"not {shown}", shown, week.quote(said), True)
                    continue
                note(wrong, f"not {shown}", shown, week.quote(said))
            else:
                anywhere = any(_same(span, start, end) for span in hours.values())
                first_open = [d for d, span in sorted(hours.items()) if span][:1]
                note([] if anywhere else [""], f"{shown} on no day", shown, week.quote(first_open))
        # Days named without hours lend them to the next clause ("Monday to Friday, with hours
        # from 9 am to 7 pm").
        carried = [_Mention(-1, -1, spec.days) for spec in specs] if not ranges else []
        if (
            not ranges
            and _ALL_WEEK.search(clause)
            and _HOURS_TALK.search(clause)
            and not _NEGATION.search(clause)
        ):
            wrong = [DAYS[d] for d in range(7) if hours.get(d) is None]
            note(wrong, "closed", "open every day", week.quote(range(7)))


FRIDAY = 4
_WORKWEEK = tuple(range(5))
_WEEKEND = frozenset((5, 6))


def _weekend_hours(parsed: list[tuple[str, list[_Mention], list[_Mention]]]) -> list[Span]:
    """The hours a claim gives "weekends" (Saturday and Sunday together).

    A claim that gives weekdays one set of hours and weekends another is right about a record
    whose Friday has the weekend's hours: many count Friday evening with the weekend.
    """
    spans = []
    for _, specs, ranges in parsed:
        if ranges:
            spans += [span for days, span in _pair(specs, ranges) if days == (5, 6)]
    return spans


def _same(span: Span | None, start: int, end: int) -> bool:
    if span is None:
        return False
    return span[0] % 1440 == start % 1440 and span[1] % 1440 == end % 1440


def _clock(minutes: int) -> str:
    minutes %= 1440
    return f"{minutes // 60}:{minutes % 60:02d}"


def _day_specs(clause: str) -> list[_Mention]:
    """Day mentions (``Monday to Friday``, ``Tuesdays, Wednesdays and Thursdays``, ``daily``)."""
    specs: list[_Mention] = []
    for pattern, span in ((_ALL_WEEK, range(7)), (_WEEKDAYS, range(5)), (_WEEKENDS, (5, 6))):
        specs += [_Mention(m.start(), m.end(), tuple(span)) for m in pattern.finditer(clause)]
    matches = list(_DAY.finditer(clause))
    i = 0
    while i < len(matches):
        match = matches[i]
        first = _DAY_ALIASES[match.group(0).lower().rstrip(".")]
        end = match.end()
        gap = clause[end : matches[i + 1].start()] if i + 1 < len(matches) else ""
        if i + 1 < len(matches) and _DAY_RANGE_SEP.match(gap):
            last = _DAY_ALIASES[matches[i + 1].group(0).lower().rstrip(".")]
            days = [first]
            while days[-1] != last:
                days.append((days[-1] + 1) % 7)
            end = matches[i + 1].end()
            i += 2
        else:
            days = [first]
            i += 1
        if specs and _DAY_LIST_SEP.match(clause[specs[-1].end : match.start()]):
            previous = specs.pop()
            specs.append(_Mention(previous.start, end, (*previous.days, *days)))
        else:
            specs.append(_Mention(match.start(), end, tuple(days)))
    return sorted(specs, key=lambda spec: spec.start)


def _specific_days(parsed: list[tuple[str, list[_Mention], list[_Mention]]]) -> dict[int, int]:
    """For each day named beside a time in the claim, the fewest days any such mention covers."""
    sizes: dict[int, int] = {}
    for clause, specs, _ in parsed:
        if not _TIME.search(clause):
            continue
        for spec in specs:
            for day in spec.days:
                sizes[day] = min(sizes.get(day, 8), len(spec.days))
    return sizes


def _time_ranges(clause: str) -> list[_Mention]:
    """Opening times stated as a range (``9 am to 5 pm``, ``17:00-21:00``, ``noon-midnight``)."""
    times = [m for m in _TIME.finditer(clause) if m.group("word") or m.group("m") or m.group("ap")]
    found: list[_Mention] = []
    for first, second in itertools.pairwise(times):
        if not _RANGE_SEP.match(clause[first.end() : second.start()]):
            continue
        end = _minutes(second, None)
        start = _minutes(first, _meridiem(second))
        if start is not None and end is not None:
            if first.group("ap") is None and second.group("ap") and start > end:
                start = _minutes(first, "a")  # "9 to 5 pm" reads as 9 am
            if start is not None:
                found.append(_Mention(first.start(), second.end(), minutes=(start, end)))
    return found


def _pair(specs: list[_Mention], ranges: list[_Mention]) -> list[tuple[tuple[int, ...], Span]]:
    """Each time range with the days it is said of: the days before it, or else after it."""
    if not specs:
        return [((), r.minutes) for r in ranges]
    days_first = specs[0].start < ranges[0].start if ranges else True
    pairs = []
    for r in ranges:
        if days_first:
            before = [s for s in specs if s.end <= r.start]
            chosen = before[-1] if before else specs[0]
        else:
            after = [s for s in specs if s.start >= r.end]
            chosen = after[0] if after else specs[-1]
        pairs.append((chosen.days, r.minutes))
    return pairs


def _meridiem(match: re.Match[str]) -> str | None:
    ap = match.group("ap")
    return ap[0].lower() if ap else None


def _minutes(match: re.Match[str], default_meridiem: str | None) -> int | None:
    word = match.group("word")
    if word:
        return 720 if word.lower() == "noon" else 1440
    hour = int(match.group("h"))
    minute = int(match.group("m") or 0)
    meridiem = _meridiem(match) or (default_meridiem if hour <= 12 else None)
    if hour > 24 or minute > 59:
        return None
    if meridiem == "p" and hour < 12:
        hour += 12
    elif meridiem == "a" and hour == 12:
        hour = 0
    return hour * 60 + minute
