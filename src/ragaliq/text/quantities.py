"""Figures as a reader checks them: a number, its unit, and what the unit measures.

"24V", "24-volt" and "24 volts" are one figure; "sixty days", "60 days" and "two months" are one
duration; "$1.2 million" is 1,200,000 dollars; "within a year" is a year. A figure is read from
digits (with a currency sign, a scale word, an attached or following unit, an ordinal ending),
from number words ("forty-five", "two hundred") or from "a"/"an" before a unit of time after a
word such as "within" ("within a year", "after an hour").

Two figures are the same when their values are equal and their units agree, where a missing unit
agrees with any ("15" in "Jan 15" is the 15 of "January 15"), and units that measure the same thing
are converted ("2 hours" is "120 minutes"; "two months" is "60 days" within the looseness a month
has). Nothing here knows a language model: it is a small, documented table of units.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from dataclasses import dataclass

__all__ = [
    "DURATION_PHRASES",
    "NUMBER_WORDS",
    "UNITS",
    "Quantity",
    "format_value",
    "quantities",
]

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12,
}  # fmt: skip
"""Number words, and the value of each."""
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_SCALE_SUFFIXES = {"k": 1000, "m": 1_000_000, "mn": 1_000_000, "bn": 1_000_000_000}
"""Scales written onto an amount of money (``$5k``, ``$2bn``)."""

DURATION_PHRASES = (
    (r"\b(?:an?\s+)?hour and a half\b|\b(?:one|1|an?)\s+and\s+a\s+half\s+hours?\b", "90 minutes"),
    (r"\bthree[\s-]quarters\s+of\s+an\s+hour\b", "45 minutes"),
    (r"\b(?:a\s+)?quarter(?:\s+of)?(?:\s+an|-an)?[\s-]hour\b", "15 minutes"),
    (r"\b(?:a\s+)?half(?:\s+an|-an|\s+a)?[\s-]hour\b", "30 minutes"),
)
"""Durations said in words, read as a context would more likely write them."""
_DURATION = re.compile(
    "|".join(f"(?P<d{i}>{pattern})" for i, (pattern, _) in enumerate(DURATION_PHRASES)), re.I
)


@dataclass(frozen=True, slots=True)
class _Unit:
    name: str
    """How a reason writes it (``volts``)."""
    dimension: str
    factor: float
    """Its size in the dimension's base unit."""
    tolerance: float = 0.01
    """Relative difference within which a converted figure is the same (a month is loose)."""


def _units() -> dict[str, _Unit]:
    table: dict[str, _Unit] = {}

    def add(spellings: str, unit: _Unit) -> None:
        for spelling in spellings.split():
            table[spelling] = unit

    add("sec secs second seconds", _Unit("seconds", "time", 1 / 60))
    add("min mins minute minutes", _Unit("minutes", "time", 1))
    add("h hr hrs hour hours", _Unit("hours", "time", 60))
    add("day days", _Unit("days", "time", 1440))
    add("wk wks week weeks", _Unit("weeks", "time", 10080))
    add("mo mos month months", _Unit("months", "time", 43200, 0.1))
    add("yr yrs year years", _Unit("years", "time", 525600, 0.1))
    add("decade decades", _Unit("decades", "time", 5256000, 0.1))
    add("v volt volts", _Unit("volts", "voltage", 1))
    add("kv kilovolt kilovolts", _Unit("kilovolts", "voltage", 1000))
    add("hz hertz", _Unit("Hz", "frequency", 1))
    add("khz", _Unit("kHz", "frequency", 1e3))
    add("mhz", _Unit("MHz", "frequency", 1e6))
    add("ghz", _Unit("GHz", "frequency", 1e9))
    add("kb kilobyte kilobytes", _Unit("KB", "data", 1e3))
    add("mb megabyte megabytes", _Unit("MB", "data", 1e6))
    add("gb gig gigs gigabyte gigabytes", _Unit("GB", "data", 1e9))
    add("tb terabyte terabytes", _Unit("TB", "data", 1e12))
    add("pb petabyte petabytes", _Unit("PB", "data", 1e15))
    add("mm millimetre millimetres millimeter millimeters", _Unit("mm", "length", 0.001))
    add("cm centimetre centimetres centimeter centimeters", _Unit("cm", "length", 0.01))
    add("metre metres meter meters", _Unit("metres", "length", 1))
    add("km kilometre kilometres kilometer kilometers", _Unit("km", "length", 1000))
    add("inch inches", _Unit("inches", "length", 0.0254, 0.05))
    add("ft foot feet", _Unit("feet", "length", 0.3048, 0.05))
    add("yd yds yard yards", _Unit("yards", "length", 0.9144, 0.05))
    add("mi mile miles", _Unit("miles", "length", 1609.344, 0.05))
    add("mg milligram milligrams", _Unit("mg", "mass", 0.001))
    add("g gram grams", _Unit("grams", "mass", 1))
    add("kg kgs kilo kilos kilogram kilograms", _Unit("kg", "mass", 1000))
    add("lb lbs", _Unit("lb", "mass", 453.592, 0.05))
    add("oz ounce ounces", _Unit("ounces", "mass", 28.3495, 0.05))
    add("ml millilitre millilitres milliliter milliliters", _Unit("ml", "volume", 0.001))
    add("cl centilitre centilitres centiliter centiliters", _Unit("cl", "volume", 0.01))
    add("l litre litres liter liters", _Unit("litres", "volume", 1))
    add("gal gallon gallons", _Unit("gallons", "volume", 3.785, 0.05))
    add("w watt watts", _Unit("watts", "power", 1))
    add("kw kilowatt kilowatts", _Unit("kW", "power", 1000))
    add("kwh", _Unit("kWh", "energy", 1))
    add("mah", _Unit("mAh", "charge", 1))
    add("mph", _Unit("mph", "speed", 1.609344, 0.05))
    add("kph km/h kmh", _Unit("km/h", "speed", 1, 0.05))
    add("% percent pct", _Unit("%", "percent", 1))
    add("°c celsius", _Unit("°C", "temperature", 1))
    add("°f fahrenheit", _Unit("°F", "temperature", 1))
    add("° degree degrees", _Unit("degrees", "temperature", 1))
    # "pound" and "pounds" are left out: money as often as weight.
    add("am a.m", _Unit("a.m.", "clock", 60))
    add("pm p.m", _Unit("p.m.", "clock", 60))
    add("$ usd dollar dollars", _Unit("dollars", "usd", 1))
    add("cent cents", _Unit("cents", "usd", 0.01))
    add("€ eur euro euros", _Unit("euros", "eur", 1))
    add("£ gbp", _Unit("pounds sterling", "gbp", 1))
    return table


UNITS = _units()
"""Every unit spelling (lower case) and what it measures."""
_BY_NAME = {unit.name: unit for unit in UNITS.values()}
_ATTACHED_ONLY = frozenset({"h", "v", "w", "g", "l", "mo", "mi", "yd"})
"""Unit spellings read only when written onto the number (``24V``), never as a word after it."""
_TIME_WORDS = frozenset(
    k for k, u in UNITS.items() if u.dimension == "time" and len(k) > 3 and k != "secs"
)
_ADJECTIVES = frozenset(
    "business working calendar full whole more extra additional consecutive straight".split()
)
"""Words that may stand between a number and its unit (``2 business days``)."""
_ORDINAL = re.compile(r"(?:st|nd|rd|th)$", re.I)

_DIGITS = re.compile(
    r"(?=[$\u20ac\u00a3\d])"  # where a figure can start: a quick test at every position
    r"(?:(?P<cur>[$\u20ac\u00a3]\s?)|(?<![\w.$\u20ac\u00a3])(?<![A-Za-z]-))"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?"
    r"|\d{1,2}:[0-5]\d(?!\d)|\d+(?:\.\d+)?)(?P<suf>(?:[A-Za-z\u00b0%]+(?:/[A-Za-z]+)?|%))?(?![\w])"
)
_NUMBER_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_WORDS = re.compile(
    rf"(?<![\w-])(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*(?![\w])", re.I
)
_A_UNIT = re.compile(
    r"\b(?:within|in|after|for|over|about|around|than|under|nearly|almost|only|just|least|"
    r"most|to)\s+(?P<a>an?)\s+(?P<unit>[a-z]+)\b",
    re.I,
)
_DIGIT = re.compile(r"\d")
_HINTS = (*NUMBER_WORDS, "hour", "min", "second", "day", "week", "month", "year", "decade")
_HINTS += ("centur", "half", "quarter")


def _shortest(words: tuple[str, ...] | frozenset[str]) -> tuple[str, ...]:
    """The words that hold no other of them ("sixteen" holds "six").

    A text holds one of ``words`` (as a part of a word) exactly when it holds one of these.
    """
    return tuple(sorted(w for w in set(words) if not any(o != w and o in w for o in words)))


_FIGURE_HINTS = _shortest(_HINTS)
"""A text with a figure in words holds one of these (in any case): number words, units of time."""
_NUMBER_HINTS = _shortest(tuple(NUMBER_WORDS))
"""A text that :data:`_WORDS` can match holds one of these (in any case)."""
_TIME_HINTS = _shortest(_TIME_WORDS)
"""A text where :data:`_A_UNIT` can find a unit of time ("in a week") holds one of these."""
_DURATION_HINTS = ("half", "quarter")
"""A text that :data:`_DURATION` can match holds one of these (in any case)."""


def _holds(folded: str, hints: tuple[str, ...]) -> bool:
    """Whether the case-folded text holds one of ``hints``: a quick test before a long pattern."""
    return any(hint in folded for hint in hints)


_LONG = re.compile(r"\b(hour|day|week|month|year)[\s-]?long\b", re.I)
"""A length of time said as one word ("a weeklong trip" lasts a week)."""
_CLOCK = re.compile(r"\s?([ap])\.?\s?m\b\.?", re.I)
_TEMPERATURE = re.compile(r" ([FC])(?![\w'\u2019-])")
"""A capital F or C one space after a number: degrees Fahrenheit or Celsius ("350 F")."""
_AGE = re.compile(r"[\s-]++old\b", re.I)
_NEXT_WORD = re.compile(r"(?P<gap>\s*+-\s*+|\s++)(?P<word>[A-Za-z\u00b0%][A-Za-z/]*|%)")


@dataclass(frozen=True, slots=True)
class Quantity:
    """One figure of a text: its value, its unit, and how the text writes it."""

    value: float
    unit: str | None
    """The unit's name (``volts``), None for a bare number."""
    dimension: str | None
    """What the unit measures (``time``, ``voltage``, ``usd``); None for a bare number."""
    written: str
    """The figure as the text writes it (``24-volt``, ``sixty days``)."""
    in_words: bool
    """Written with number words ("forty-five") or "a"/"an", not digits."""
    start: int
    """Where it starts in the text."""
    base: float | None = None
    """The value in the dimension's base unit (minutes, bytes, metres, ...)."""
    tolerance: float = 0.0
    counts: bool = False
    """A bare number followed by what it counts ("12 engineers"), which states no amount of a
    unit."""

    @property
    def key(self) -> str:
        """The value normalised as text (``1200``, ``3.5``), as :func:`format_value` writes it."""
        return format_value(self.value)

    def stated_by(self, other: Quantity) -> bool:
        """Whether ``other`` (a context's figure) states this one (a claim's).

        A bare number is stated by the same number with any unit ("15" by "15 days"), and a figure
        with a unit by the same bare number (a table's "129" states "$129", but "12 engineers"
        does not state "$12") or by the same amount in any unit of what it measures ("2 hours"
        by "120 minutes", "5 °C" by "41 °F").
        """
        if self.dimension is None:
            return _close(self.value, other.value, 1e-9)
        if other.dimension is None:
            return not other.counts and _close(self.value, other.value, 1e-9)
        if self.dimension != other.dimension:
            return False
        if self.unit == other.unit:
            return _close(self.value, other.value, 1e-9)
        if self.dimension == "temperature":
            return any(
                abs(a - b) <= max(1.0, TEMPERATURE_ROUNDING * abs(b))
                for a in _celsius(self)
                for b in _celsius(other)
            )
        assert self.base is not None and other.base is not None  # set with every dimension
        return _close(self.base, other.base, max(self.tolerance, other.tolerance))

    def shown(self) -> str:
        """How a reason names it: as written, which the reader finds in the text."""
        return self.written


TEMPERATURE_ROUNDING = 0.02
"""How far a temperature converted to another scale may be rounded: 350 °F is 176.7 °C, which
recipes write 175 °C or 180 °C (one degree Celsius, at least)."""


def _celsius(quantity: Quantity) -> tuple[float, ...]:
    """A temperature in degrees Celsius; "degrees" alone may be either scale."""
    fahrenheit = (quantity.value - 32) * 5 / 9
    if quantity.unit == "°F":
        return (fahrenheit,)
    return (quantity.value,) if quantity.unit == "°C" else (quantity.value, fahrenheit)


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b), 1e-12)


def format_value(value: float) -> str:
    """A value as text: ``1200``, ``3.5``, ``0.25``."""
    if value == int(value) and abs(value) < 1e18:
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


@functools.lru_cache(maxsize=16384)
def quantities(text: str) -> tuple[Quantity, ...]:
    """The figures of a text, in order, each as the text writes it.

    Cached: a context's sentences are read again for every claim and every response.
    """
    folded = text.casefold()
    if not (_DIGIT.search(text) or _holds(folded, _FIGURE_HINTS)):
        return ()
    found: list[Quantity] = []
    starts: list[int] = []
    ends: list[int] = []  # the spans taken, in order, none overlapping

    def keep(quantity: Quantity | None, end: int) -> None:
        if quantity is None:
            return
        k = bisect.bisect_left(starts, quantity.start)
        if (k and ends[k - 1] > quantity.start) or (k < len(starts) and starts[k] < end):
            return  # part of a figure read already ("million" in "$1.2 million")
        starts.insert(k, quantity.start)
        ends.insert(k, end)
        found.append(quantity)

    for match in _DURATION.finditer(text) if _holds(folded, _DURATION_HINTS) else ():
        index = int(next(k for k, v in match.groupdict().items() if v)[1:])
        minutes = float(DURATION_PHRASES[index][1].split()[0])
        keep(
            _quantity(
                minutes, UNITS["minutes"], match.group(0), in_words=True, start=match.start()
            ),
            match.end(),
        )
    for match in _DIGITS.finditer(text):
        keep(*_from_digits(text, match))
    for match in _WORDS.finditer(text) if _holds(folded, _NUMBER_HINTS) else ():
        keep(*_from_words(text, match))
    for match in _LONG.finditer(text) if "long" in folded else ():
        keep(
            _quantity(
                1.0, UNITS[match[1].lower()], match.group(0), in_words=True, start=match.start()
            ),
            match.end(),
        )
    for match in _A_UNIT.finditer(text) if _holds(folded, _TIME_HINTS) else ():
        word = match["unit"].lower()
        if word in _TIME_WORDS:
            quantity = _quantity(
                1.0,
                UNITS[word],
                text[match.start("a") : match.end()],
                in_words=True,
                start=match.start("a"),
            )
            keep(quantity, match.end())
    found.sort(key=lambda q: q.start)
    return tuple(_counting(text, q) for q in _ranges(text, found))


_COUNTED = re.compile(r"\s++([a-z][a-z'-]*)")
_NOT_COUNTED = frozenset(
    "a an the and or to of in on at for per by with from is are was were be than as and so if "
    "but percent".split()
)


def _counting(text: str, quantity: Quantity) -> Quantity:
    """The quantity, marked when it is a bare number followed by what it counts."""
    if quantity.unit is not None:
        return quantity
    word = _COUNTED.match(text, quantity.start + len(quantity.written))
    if word is None or word[1] in _NOT_COUNTED:
        return quantity
    return dataclasses.replace(quantity, counts=True)


_RANGE = re.compile(r"\s*+(?:-\s*+)?(?:-|\u2013|to|or|and|through|until)\s*+", re.I)


def _ranges(text: str, found: list[Quantity]) -> list[Quantity]:
    """Figures with the unit of the range they open ("1 to 2 days": 1 day, 2 days)."""
    out = list(found)
    for k in range(len(out) - 2, -1, -1):
        first, second = out[k], out[k + 1]
        if first.unit is not None or second.unit is None or first.in_words != second.in_words:
            continue
        end = first.start + len(first.written)
        if _RANGE.fullmatch(text, end, second.start):
            out[k] = _quantity(
                first.value,
                _BY_NAME[second.unit],
                first.written,
                in_words=first.in_words,
                start=first.start,
            )
    return out


def _quantity(
    value: float, unit: _Unit | None, written: str, *, in_words: bool, start: int
) -> Quantity:
    if unit is None:
        return Quantity(value, None, None, written, in_words, start)
    base = value * unit.factor
    if unit.dimension == "clock":  # minutes after midnight: 12 a.m. is 0, 4 p.m. is 960
        base = (value % 12) * 60 + (720 if unit.name == "p.m." else 0)
    return Quantity(
        value, unit.name, unit.dimension, written, in_words, start, base, unit.tolerance
    )


def _from_digits(text: str, match: re.Match[str]) -> tuple[Quantity | None, int]:
    hours, colon, minutes = match["num"].partition(":")
    value = int(hours) + int(minutes) / 60 if colon else float(match["num"].replace(",", ""))
    unit: _Unit | None = UNITS[match["cur"].strip()] if match["cur"] else None
    suffix = (match["suf"] or "").lower()
    end = match.end()
    if suffix:
        if _ORDINAL.fullmatch(suffix) and not unit:
            suffix = ""
        elif unit is not None and suffix in _SCALE_SUFFIXES:
            value *= _SCALE_SUFFIXES[suffix]
            suffix = ""
        elif suffix in UNITS and unit is None:
            unit = UNITS[suffix]
            suffix = ""
        elif match["suf"] in ("F", "C") and unit is None:
            unit = UNITS[f"\u00b0{suffix}"]  # "160F": a temperature written short
        else:
            return None, end  # a code or a model name ("4K", "T3", "1990s"), not a figure
    elif unit is None and (short := _TEMPERATURE.match(text, end)) is not None:
        unit = UNITS[f"\u00b0{short[1].lower()}"]  # "350 F"
        end = short.end(1)
    value, unit, end = _after(text, end, value, unit)
    whole, dot, minutes = match["num"].partition(".")
    if unit is not None and unit.dimension == "clock" and dot and len(minutes) == 2:
        value = int(whole) + int(minutes) / 60  # "7.30 a.m." is half past seven
    written = text[match.start() : end]
    return _quantity(value, unit, written, in_words=False, start=match.start()), end


def _from_words(text: str, match: re.Match[str]) -> tuple[Quantity | None, int]:
    words = re.split(r"[\s-]+", match.group(0).lower())
    value = _word_value([w for w in words if w != "and"])
    if value is None:
        return None, match.end()
    start = match.start()
    value, unit, end = _after(text, match.end(), value, None)
    return _quantity(value, unit, text[start:end], in_words=True, start=start), end


def _word_value(words: list[str]) -> float | None:
    """The value of a run of number words ("twenty four", "two hundred", "a dozen")."""
    total = current = 0.0
    seen = False
    for word in words:
        value = NUMBER_WORDS.get(word)
        if value is None:
            return None
        seen = True
        if word == "hundred":
            current = (current or 1) * 100
        elif word in _SCALES:
            total += (current or 1) * value
            current = 0
        elif word == "dozen":
            current = (current or 1) * 12
        else:
            current += value
    return total + current if seen else None


def _after(
    text: str, end: int, value: float, unit: _Unit | None
) -> tuple[float, _Unit | None, int]:
    """The scale word and the unit that follow a number, if any: its value, unit and end."""
    following = _NEXT_WORD.match(text, end)
    if following is not None and following["word"].lower() in _SCALES:
        value *= _SCALES[following["word"].lower()]
        end = following.end()
        following = _NEXT_WORD.match(text, end)
    if unit is not None:
        return value, unit, end
    clock = _CLOCK.match(text, end)
    if clock is not None:
        return value, UNITS[clock[1].lower() + "m"], clock.end()
    if following is None:
        return value, unit, end
    word = following["word"].lower()
    if word == "per":
        cent = _NEXT_WORD.match(text, following.end())
        if cent is not None and cent["word"].lower() == "cent":
            return value, UNITS["percent"], cent.end()
    if word in _ADJECTIVES:
        second = _NEXT_WORD.match(text, following.end())
        if second is not None and second["word"].lower() in _TIME_WORDS:
            following, word = second, second["word"].lower()
    spelled = UNITS.get(word)
    if spelled is None and word.endswith(".") and word[:-1] in UNITS:
        spelled = UNITS[word[:-1]]
    if spelled is None:
        return value, None, end
    if word in _ATTACHED_ONLY and "-" not in following["gap"] and following["word"] not in "VW":
        return value, None, end  # "5 s", "24 h", "5 mi": too often not a unit at all
    written = following["word"]
    if len(written) > 3 and written.istitle():
        return value, None, end  # a name ("the 1965 Watts riots"), not a unit
    if _AGE.match(text, following.end()):
        return value, None, end  # an age ("a 3-year-old") is a bare number, as "aged 3" is
    return value, spelled, following.end()
