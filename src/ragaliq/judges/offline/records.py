"""Structured records as context: a JSON object read as fields, not as a bag of words.

A RAG system that describes a product, a place or an account from a record (a JSON object in the
context) hallucinates in ways word overlap cannot see: it says "offers outdoor seating" when the
record says ``"OutdoorSeating": false``, states opening hours the record does not have, or talks
about a feature (delivery, Wi-Fi) for which the record has no field at all. This module parses
such a record and checks one claim against its fields:

- **attributes**: a claim that mentions a known topic (outdoor seating, reservations, Wi-Fi,
  take-out, parking, ambience, ...) is checked against the field's value, with the claim's
  negation read from its clause; a topic the record has no field for (or a ``null`` one) is
  unknown, unless the record's free text talks about it;
- **opening hours** (``hours`` as ``{"Monday": "9:0-17:30"}``): times and days the claim states
  must match the record's;
- **ratings**: "a 4.5-star rating" must be the record's rating or one of its reviews'.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Record", "RecordFindings", "parse_record"]

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
_MIN_PROSE_WORDS = 8
"""A string field at least this long is free text (a review, a description), read as prose."""
_NEGATION = re.compile(
    r"\b(?:not|no|never|without|lacks?|lacking|lack of|neither|nor|none|unavailable|cannot)\b"
    r"|n't\b",
    re.IGNORECASE,
)
_NOT_NEGATION = re.compile(
    r"\b(?:no wonder|no doubt|not only|no matter|not just|no shortage)\b", re.IGNORECASE
)
_POSITIVE = re.compile(
    r"\b(?:has|have|offers?|provides?|accepts?|allows?|features?|includes?|serves?|takes?|"
    r"boasts?|welcomes?|(?:is|are) (?:also )?(?:available|offered|provided|allowed|accepted))\b",
    re.IGNORECASE,
)
_RESET = re.compile(
    r"\b(?:is|are|was|were|with|given|its|their|but|while|however)\b", re.IGNORECASE
)
"""Words that end a negated list when they start a later comma segment."""
_UNSPECIFIED = re.compile(
    r"\b(?:not (?:specified|mentioned|listed|provided|stated|indicated|known)|unspecified|"
    r"unknown|no (?:information|mention|data|details?))\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(
    r"[;!?]|[.:](?!\d)|,\s+with\b|,?\s+\b(?:but|however|although|though|while|whereas|yet)\b"
    r"|\band\s+(?=(?:it|its|they|their|the|there|this|all|also|is|are|has|have|offers?|provides?|"
    r"accepts?|allows?|features?|serves?|does|do|customers|guests|visitors)\b)",
    re.IGNORECASE,
)
_HOURS_TALK = re.compile(r"\b(?:open|opens|hours|operat\w*|closed?|closes)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Topic:
    name: str
    """How the reason names the topic."""
    keys: tuple[str, ...]
    """Normalised field names (lower case, letters only, dotted for nested) that hold it."""
    pattern: re.Pattern[str]


def _topic(name: str, keys: str, pattern: str) -> _Topic:
    return _Topic(name, tuple(keys.split()), re.compile(pattern, re.IGNORECASE))


TOPICS: tuple[_Topic, ...] = (
    _topic(
        "outdoor seating",
        "outdoorseating",
        r"\boutdoor (?:seating|dining|patio|area|tables?|space|terrace|deck|eating)s?\b|\bpatio\b"
        r"|outside (?:seating|dining|tables?)|al fresco|\bdine outside\b",
    ),
    _topic("reservations", "restaurantsreservations reservations", r"\breserv(?:ation|e)s?\b"),
    _topic("Wi-Fi", "wifi", r"\bwi-?fi\b|\bwireless\b|\binternet\b"),
    _topic(
        "take-out",
        "restaurantstakeout takeout",
        r"\btake[- ]?outs?\b|\btake[- ]?away\b|\bto-go\b|\bto go (?:orders?|boxes)\b"
        r"|\bcarry[- ]?out\b",
    ),
    _topic(
        "delivery",
        "restaurantsdelivery delivery",
        r"\bdelivery (?:service|option)s?\b|\b(?:offers?|provides?|for|and|or|no|free) delivery\b"
        r"|\bdelivers\b|\bdelivery is\b",
    ),
    _topic(
        "groups",
        "restaurantsgoodforgroups goodforgroups",
        r"\bgroups?\b|\blarge parties\b",
    ),
    _topic("children", "goodforkids", r"\bkids?\b|\bchildren\b|\bfamily[- ]friendly\b"),
    _topic("music", "music", r"\bmusic\b|\bdj\b|\blive band\b|\bjukebox\b|\bkaraoke\b"),
    _topic("alcohol", "alcohol", r"\balcohol(?:ic)?\b|\bfull bar\b|\bbeer and wine\b"),
    _topic("noise level", "noiselevel", r"\bnois(?:e|y)\b|\bquiet\b"),
    _topic("television", "hastv", r"\btvs?\b|\btelevisions?\b"),
    _topic(
        "credit cards",
        "businessacceptscreditcards",
        r"\bcredit cards?\b",
    ),
    _topic("wheelchair access", "wheelchairaccessible", r"\bwheelchair\b"),
    _topic("dogs", "dogsallowed", r"\bdogs?\b|\bpet[- ]friendly\b"),
    _topic("happy hour", "happyhour", r"\bhappy hours?\b"),
    _topic("catering", "caters", r"\bcatering\b(?! to\b)"),
    _topic("drive-through", "drivethru", r"\bdrive[- ]?thr(?:u|ough)\b"),
    _topic("table service", "restaurantstableservice", r"\btable service\b"),
    _topic("bike parking", "bikeparking", r"\bbike (?:parking|racks?)\b"),
    _topic("garage parking", "businessparking.garage", r"\bgarage\b"),
    _topic("validated parking", "businessparking.validated", r"\bvalidat(?:e|es|ed|ing|ion)\b"),
    _topic("valet parking", "businessparking.valet", r"\bvalet\b"),
    _topic("a parking lot", "businessparking.lot", r"\b(?:parking )?lots?\b(?! of)"),
    _topic(
        "street parking",
        "businessparking.street",
        r"\bstreet(?= parking| or | and |,)|\bon[- ]street\b|\bparking on the street\b",
    ),
    *(
        _topic(f"a '{word}' ambience", f"ambience.{word}", rf"\b{word}\b")
        for word in ("romantic", "intimate", "classy", "hipster", "touristy", "trendy", "upscale")
    ),
    _topic("a 'divey' ambience", "ambience.divey", r"\bdive(?:y| bar)\b"),
    _topic(
        "a 'casual' ambience",
        "ambience.casual",
        r"\bcasual (?:atmosphere|ambiance|ambience|setting|vibe|feel|environment|decor)\b"
        r"|\b(?:atmosphere|ambiance|ambience|setting|vibe|decor) (?:is|was) (?:\w+ )?casual\b",
    ),
)

_PARKING = re.compile(r"\bpark(?:ing|ed)?\b", re.IGNORECASE)
_PARKING_KIND = re.compile(
    r"\b(?:street|valet|garage|lot|validat\w*)\b(?! of)|\blimited parking\b", re.IGNORECASE
)
"""A claim naming a kind of parking (or limited parking) is checked by kind, not as parking at all:
``no on-site parking, but street parking is available`` does not deny parking."""
_GENERIC_PARKING = _topic("parking", "businessparking parking", r"\bparking\b")
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
_ALL_WEEK = re.compile(
    r"\b(?:daily|every ?day(?: of the week)?|(?:seven|7) days(?: a| per) week|all week)\b",
    re.IGNORECASE,
)
_WEEKDAYS = re.compile(r"\bweekdays\b", re.IGNORECASE)
_WEEKENDS = re.compile(r"\bweekends?\b", re.IGNORECASE)
_CLOSED = re.compile(r"\bclosed\b", re.IGNORECASE)
_STARS = re.compile(
    r"(?<![\d.])(?P<a>\d(?:\.\d)?)[- ]?(?:out of (?:5|five)(?:\.0)?[- ])?stars?\b"
    r"|\brat(?:ing|ed)(?: of| at)? (?P<b>\d(?:\.\d)?)(?: out of (?:5|five)(?:\.0)?)?"
    r"(?:[- ]stars?)?",
    re.IGNORECASE,
)
_REVIEW_COUNT = re.compile(
    r"\b(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten) (?:\w+ )?reviews\b",
    re.IGNORECASE,
)
_COUNT_WORDS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten".split())
}


@dataclass
class RecordFindings:
    """What a record says about one claim; each entry is a sentence a person can read."""

    confirmed: list[str] = field(default_factory=list)
    contradicted: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    """Quotes from the record (``"OutdoorSeating": false``) behind the findings."""

    @property
    def empty(self) -> bool:
        return not (self.confirmed or self.contradicted or self.unknown)


@dataclass(frozen=True, slots=True)
class _Field:
    path: str
    """Normalised dotted name: ``businessparking.street``."""
    value: Any
    quote: str
    """How the field reads in the JSON: ``"street": false``."""


@dataclass(frozen=True)
class Record:
    """A JSON object from the context, with its fields flattened."""

    fields: dict[str, _Field]
    by_suffix: dict[str, _Field]
    """Every field under each tail of its dotted path: ``street``, ``businessparking.street``."""
    prose: tuple[str, ...]
    """Free-text values (reviews, descriptions), to be read as sentences."""
    facts: tuple[str, ...]
    """One line per short field, ``key: value``, for word overlap with the claim."""
    hours: dict[int, tuple[int, int] | None] | None
    """Day (0 = Monday) to opening and closing minute; None for a closed day; None without hours."""
    ratings: frozenset[float]
    reviews: int | None
    """How many reviews the record lists, when it has a list of reviews."""
    text: str
    """Every string value (not the keys), lower case: a topic the reviews or the categories
    mention is grounded there, not unknown."""

    def check(self, claim: str) -> RecordFindings:
        """The record's fields that the claim talks about, and whether they agree."""
        findings = RecordFindings()
        for clause in _clauses(claim):
            parking_kinds = 0
            for topic in TOPICS:
                match = topic.pattern.search(clause)
                if match is None:
                    continue
                negated = _negated_at(clause, match.start(), match.end())
                if self._check_topic(topic, clause, negated, findings):
                    parking_kinds += topic.keys[0].startswith("businessparking.")
            parking = _PARKING.search(clause)
            if not parking_kinds and parking and not _PARKING_KIND.search(claim):
                negated = _negated_at(clause, parking.start(), parking.end())
                self._check_topic(_GENERIC_PARKING, clause, negated, findings)
        self._check_hours(claim, findings)
        self._check_ratings(claim, findings)
        self._check_review_count(claim, findings)
        return findings

    def _lookup(self, keys: tuple[str, ...]) -> _Field | None:
        for key in keys:
            if key in self.by_suffix:
                return self.by_suffix[key]
        for key in keys:
            parent = key.rpartition(".")[0]
            if parent and parent in self.by_suffix and self.by_suffix[parent].value is None:
                return self.by_suffix[parent]
        return None

    def _check_topic(
        self, topic: _Topic, clause: str, negated: bool, findings: RecordFindings
    ) -> bool:
        """Check one topic the clause mentions; False when the mention does not count."""
        if (
            topic.keys[0].startswith("businessparking.")
            and topic.name != "garage parking"
            and not _PARKING.search(clause)
        ):
            return False
        found = self._lookup(topic.keys)
        state = _truth(found.value, clause) if found is not None else None
        if state is None:
            if topic.pattern.search(self.text):
                return True  # the reviews talk about it: leave it to word overlap
            if _UNSPECIFIED.search(clause):
                findings.confirmed.append(f"the record does not say anything about {topic.name}")
                return True
            where = "a null field" if found is not None else "no field"
            findings.unknown.append(f"the record has {where} about {topic.name}")
            if found is not None:
                findings.evidence.append(found.quote)
            return True
        assert found is not None
        findings.evidence.append(found.quote)
        says = "has no" if negated else "has"
        if state != negated:
            findings.confirmed.append(f"the record agrees that it {says} {topic.name}")
        else:
            findings.contradicted.append(
                f"the claim says it {says} {topic.name}, but the record has {found.quote}"
            )
        return True

    def _check_hours(self, claim: str, findings: RecordFindings) -> None:
        if self.hours is None:
            return
        hours = self.hours
        parsed = [(c, _day_specs(c), _time_ranges(c)) for c in _clauses(claim)]
        specific = _specific_days(parsed)
        carried: list[_Span] = []
        for clause, specs, ranges in parsed:
            if not specs and not ranges:
                carried = []
                continue
            if _CLOSED.search(clause) and specs and not ranges:
                days = sorted({d for spec in specs for d in spec.days})
                wrong = [DAYS[d] for d in days if hours.get(d) is not None]
                _note(findings, wrong, "open", "closed", self._hours_quote(days))
                carried = []
                continue
            for said, (start, end) in _pair(carried + specs, ranges):
                shown = f"{_clock(start)}-{_clock(end)}"
                if said:
                    # Days a narrower mention in the claim gives their own hours are its to check
                    # ("11 am to 8 pm daily, until 9 pm on Fridays").
                    said = tuple(d for d in said if specific.get(d, 8) >= len(said))
                    wrong = [DAYS[d] for d in said if not _same(hours.get(d), start, end)]
                    _note(findings, wrong, f"not {shown}", shown, self._hours_quote(said))
                else:
                    anywhere = any(_same(span, start, end) for span in hours.values())
                    first_open = [d for d, span in sorted(hours.items()) if span][:1]
                    _note(
                        findings,
                        [] if anywhere else [""],
                        f"{shown} on no day",
                        shown,
                        self._hours_quote(first_open),
                    )
            # Days named without hours lend them to the next clause ("Monday to Friday, with
            # hours from 9 am to 7 pm").
            carried = [_Span(-1, -1, spec.days) for spec in specs] if not ranges else []
            if (
                not ranges
                and _ALL_WEEK.search(clause)
                and _HOURS_TALK.search(clause)
                and not _NEGATION.search(clause)
            ):
                wrong = [DAYS[d] for d in range(7) if hours.get(d) is None]
                _note(findings, wrong, "closed", "open every day", self._hours_quote(range(7)))

    def _hours_quote(self, days: Any) -> str:
        assert self.hours is not None
        for day in days:
            name = DAYS[day].capitalize()
            if name in self.fields.get("hours", _Field("", {}, "")).value:
                return f'"{name}": "{self.fields["hours"].value[name]}"'
        return self.fields["hours"].quote[:200] if "hours" in self.fields else ""

    def _check_ratings(self, claim: str, findings: RecordFindings) -> None:
        if not self.ratings:
            return
        for match in _STARS.finditer(claim):
            value = float(match.group("a") or match.group("b"))
            if value in self.ratings:
                findings.confirmed.append(f"the record has a rating of {value:g}")
            elif value <= 5:
                findings.contradicted.append(
                    f"the record has no rating of {value:g} (it has "
                    f"{', '.join(f'{r:g}' for r in sorted(self.ratings))})"
                )

    def _check_review_count(self, claim: str, findings: RecordFindings) -> None:
        if self.reviews is None:
            return
        for match in _REVIEW_COUNT.finditer(claim):
            raw = match.group("n").lower()
            count = int(raw) if raw.isdigit() else _COUNT_WORDS[raw]
            if claim[max(0, match.start() - 12) : match.start()].lower().endswith("based on "):
                findings.unknown.append(
                    "the record does not say how many reviews its rating is based on"
                )
            elif count == self.reviews:
                findings.confirmed.append(f"the record lists {count} reviews")
            else:
                findings.contradicted.append(
                    f"the claim counts {count} reviews, but the record lists {self.reviews}"
                )


_NEGATED_AFTER = re.compile(
    r"[\s\w-]{0,24}?\b(?:is|are|was|were|does|do|did)(?:\s+(?:also|still|currently|usually))?"
    r"(?:\s+not\b|n't\b|\s+unavailable\b)|\s+(?:not available|unavailable)\b",
    re.IGNORECASE,
)
"""A negation right after the mention denies it through its verb (``Wi-Fi is not available``);
one after a conjunction is about the next item (``casual and not trendy``)."""


def _negated_at(clause: str, start: int, end: int) -> bool:
    """Whether the clause denies the thing mentioned at ``clause[start:end]``.

    A negation before it in its comma segment denies it (``does not offer Wi-Fi``), unless a
    positive verb comes between (``no Wi-Fi but has a patio``), and so does one right after it
    through its verb (``Wi-Fi is not available``, not ``casual and not trendy``); a list
    continues a negation from earlier segments (``no garage, street, or valet parking``) until a
    segment brings its own verb.
    """
    segments = [(m.start(), m.end()) for m in re.finditer(r"[^,]+", clause)]
    here = next((i for i, (s, e) in enumerate(segments) if s <= start < e), 0)
    seg_start, seg_end = segments[here] if segments else (0, len(clause))
    before = clause[seg_start:start]
    after = clause[end:seg_end]
    cues = [m for m in _NEGATION.finditer(before) if not _NOT_NEGATION.match(before, m.start())]
    if cues:
        tail = before[cues[-1].end() :]
        return not _POSITIVE.search(tail.split(maxsplit=2)[-1] if len(tail.split()) > 2 else "")
    if _NEGATED_AFTER.match(after):
        return True
    if _POSITIVE.search(before) or _POSITIVE.search(after):
        return False
    if _RESET.search(clause[seg_start:seg_end]):
        return False
    for i in range(here - 1, -1, -1):
        text = clause[segments[i][0] : segments[i][1]]
        found = [m for m in _NEGATION.finditer(text) if not _NOT_NEGATION.match(text, m.start())]
        if found:
            return True
        if _POSITIVE.search(text) or _RESET.search(text):
            return False
    return False


def _note(findings: RecordFindings, wrong: list[str], bad: str, good: str, quote: str) -> None:
    if quote:
        findings.evidence.append(quote)
    if wrong:
        days = ", ".join(d.capitalize() for d in wrong if d)
        findings.contradicted.append(
            f"the record's hours say {bad}" + (f" on {days}" if days else "")
        )
    else:
        findings.confirmed.append(f"the record's hours agree ({good})")


def _same(span: tuple[int, int] | None, start: int, end: int) -> bool:
    if span is None:
        return False
    return span[0] % 1440 == start % 1440 and span[1] % 1440 == end % 1440


def _clock(minutes: int) -> str:
    minutes %= 1440
    return f"{minutes // 60}:{minutes % 60:02d}"


def _clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE.split(text) if c and c.strip()]


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    days: tuple[int, ...] = ()
    minutes: tuple[int, int] = (0, 0)


_DAY_LIST_SEP = re.compile(r"^\s*(?:,|and|&|,\s*and)\s*$", re.IGNORECASE)


def _day_specs(clause: str) -> list[_Span]:
    """Day mentions (``Monday to Friday``, ``Tuesdays, Wednesdays and Thursdays``, ``daily``)."""
    specs: list[_Span] = []
    for pattern, span in ((_ALL_WEEK, range(7)), (_WEEKDAYS, range(5)), (_WEEKENDS, (5, 6))):
        specs += [_Span(m.start(), m.end(), tuple(span)) for m in pattern.finditer(clause)]
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
            specs.append(_Span(previous.start, end, (*previous.days, *days)))
        else:
            specs.append(_Span(match.start(), end, tuple(days)))
    return sorted(specs, key=lambda spec: spec.start)


def _specific_days(parsed: list[tuple[str, list[_Span], list[_Span]]]) -> dict[int, int]:
    """For each day named beside a time in the claim, the fewest days any such mention covers.

    ``parsed`` holds each clause with its day mentions and time ranges.
    """
    sizes: dict[int, int] = {}
    for clause, specs, _ in parsed:
        if not _TIME.search(clause):
            continue
        for spec in specs:
            for day in spec.days:
                sizes[day] = min(sizes.get(day, 8), len(spec.days))
    return sizes


def _time_ranges(clause: str) -> list[_Span]:
    """Opening times stated as a range (``9 am to 5 pm``, ``17:00-21:00``, ``noon-midnight``)."""
    times = [m for m in _TIME.finditer(clause) if m.group("word") or m.group("m") or m.group("ap")]
    found: list[_Span] = []
    for first, second in itertools.pairwise(times):
        if not _RANGE_SEP.match(clause[first.end() : second.start()]):
            continue
        end = _minutes(second, None)
        start = _minutes(first, _meridiem(second))
        if start is not None and end is not None:
            if first.group("ap") is None and second.group("ap") and start > end:
                start = _minutes(first, "a")  # "9 to 5 pm" reads as 9 am
            if start is not None:
                found.append(_Span(first.start(), second.end(), minutes=(start, end)))
    return found


def _pair(specs: list[_Span], ranges: list[_Span]) -> list[tuple[tuple[int, ...], tuple[int, int]]]:
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


def _truth(value: Any, clause: str) -> bool | None:
    """Whether a field's value says the thing exists; None when it does not say."""
    if isinstance(value, bool):
        return value
    if value is None:
        return None
    if isinstance(value, dict):
        states = [_truth(v, clause) for v in value.values()]
        if any(s is True for s in states):
            return True
        return False if states and all(s is False for s in states) else None
    if isinstance(value, int | float):
        return value > 0
    text = str(value).strip().strip("'\"").lower()
    if text.startswith("u'"):
        text = text[2:]
    if text in {"", "none", "null"}:
        return None
    if text in {"no", "false", "0"}:
        return False
    if text == "paid" and "free" in clause.lower():
        return False
    if text.startswith("{"):
        if "true" in text:
            return True
        return False if "false" in text else None
    return True


def _normalise_key(key: str) -> str:
    return re.sub(r"[^a-z]", "", key.lower())


def _words_of_key(key: str) -> str:
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])|_", " ", key)
    return spaced.lower()


def _parse_hours(value: Any) -> dict[int, tuple[int, int] | None] | None:
    if not isinstance(value, dict):
        return None
    hours: dict[int, tuple[int, int] | None] = dict.fromkeys(range(7))
    for day, span in value.items():
        index = _DAY_ALIASES.get(str(day).lower())
        match = re.fullmatch(r"\s*(\d{1,2}):(\d{1,2})\s*-\s*(\d{1,2}):(\d{1,2})\s*", str(span))
        if index is None or match is None:
            continue
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        start, end = h1 * 60 + m1, h2 * 60 + m2
        hours[index] = None if start == end == 0 else (start, end or 1440)
    return hours


class _Walker:
    """Flattens a JSON object into fields, free text, short facts, hours, ratings and reviews."""

    def __init__(self) -> None:
        self.fields: dict[str, _Field] = {}
        self.prose: list[str] = []
        self.facts: list[str] = []
        self.ratings: set[float] = set()
        self.strings: list[str] = []
        self.reviews: int | None = None
        self.hours: dict[int, tuple[int, int] | None] | None = None

    def walk(self, node: Any, path: str, key: str) -> None:
        if isinstance(node, dict):
            if key and _normalise_key(key) == "hours":
                self.hours = _parse_hours(node)
            if path:
                self.fields[path] = _Field(path, node, f'"{key}": {json.dumps(node)[:200]}')
            for k, v in node.items():
                self.walk(v, f"{path}.{_normalise_key(k)}" if path else _normalise_key(k), str(k))
        elif isinstance(node, list):
            if "review" in key.lower() and self.reviews is None:
                self.reviews = len(node)
            for item in node:
                self.walk(item, path, key)
        else:
            self.leaf(node, path, key)

    def leaf(self, node: Any, path: str, key: str) -> None:
        if path and path not in self.fields:
            quote = f'"{key}": {json.dumps(node, ensure_ascii=False)}'
            self.fields[path] = _Field(path, node, quote)
        if isinstance(node, str):
            self.strings.append(node)
            if len(node.split()) >= _MIN_PROSE_WORDS:
                self.prose.append(node)
                return
        if isinstance(node, bool | type(None)):
            self.facts.append(_words_of_key(key))
            return
        self.facts.append(f"{_words_of_key(key)}: {node}")
        if "star" in key.lower() and isinstance(node, int | float):
            self.ratings.add(float(node))


def parse_record(chunk: str) -> Record | None:
    """The record a context chunk holds, when the chunk is one JSON object."""
    text = chunk.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    walker = _Walker()
    walker.walk(data, "", "")
    by_suffix: dict[str, _Field] = {}
    for path, found in walker.fields.items():
        parts = path.split(".")
        for i in range(len(parts)):
            by_suffix.setdefault(".".join(parts[i:]), found)
    return Record(
        fields=walker.fields,
        by_suffix=by_suffix,
        prose=tuple(walker.prose),
        facts=tuple(walker.facts),
        hours=walker.hours,
        ratings=frozenset(walker.ratings),
        reviews=walker.reviews,
        text=" ".join(walker.strings).lower(),
    )
