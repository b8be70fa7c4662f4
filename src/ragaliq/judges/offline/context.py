"""A case's context, indexed once: what every claim of the case is compared with.

The context is split into sentences (a chunk that is one JSON object is read as a record, its
short fields as sentences and its free text as prose), and indexed by content word, by word pair
and by verbatim word triple; with the figures it states (by value and by what they measure), the
weekdays and months it names or implies ("Monday to Friday", "daily"), the things it counts
("two children"), and the names it knows under another name ("U.S." is "America").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragaliq.judges.offline.records import Record, parse_record
from ragaliq.text.quantities import Quantity, quantities
from ragaliq.text.words import (
    CALENDAR,
    NEGATIONS,
    STOPWORDS,
    calendar_words,
    content_words,
    negated_words,
    split_context,
    stem,
    tokens,
    word_key,
)

__all__ = ["GENERIC", "NEAR_PREFIX", "ContextIndex", "Count", "Sentence", "counts_of"]

PAIR_WINDOW = 3
"""Two context words at most this far apart form a pair a claim's adjacent words can match."""


GENERIC = frozenset(
    """
    however despite although though whereas meanwhile moreover furthermore additionally addition
    additional overall thus therefore hence instead also still yet even well already including
    various several numerous particular particularly specific specifically certain currently
    recently recent latest new way ways thing things lot lots kind type roughly rough approximately
    approximate around nearly almost circa
    """.split()
)
"""Discourse and filler words: a paraphrase adds them freely, so they are never "novel"."""
ALIASES = (
    "us usa america american americans united states",
    "uk britain british england united kingdom",
    "un united nations",
    "eu europe european union",
    "isis isil islamic state daesh levant",
)
"""Names that stand for one another: a context that has one of a group knows them all."""
_ALIAS_GROUPS = tuple(frozenset(group.split()) for group in ALIASES)
_ALIAS_KEYS = (
    ("us", "u.s", "usa", "america", "american"),
    ("uk", "u.k", "britain", "british"),
    ("un", "u.n"),
    ("eu", "european"),
    ("isis", "isil", "daesh"),
)
_ACRONYM = re.compile(r"\b(?:[A-Za-z]\.){2,}")
_PRONOUN_START = re.compile(r"\W*(?:it|they|this|these|he|she)\b", re.IGNORECASE)
_CAPITALS = re.compile(r"\b[A-Z](?:[A-Z]{1,4}|[a-z]{1,3})\b")
_DOTTED = re.compile(r"\b[A-Za-z]+(?:\.[A-Za-z]+)+\b")
"""A word written with inner full stops (``Ph.D``), to be known without them (``phd``)."""
NEAR_PREFIX = 5
"""A novel word sharing this many first letters with a context word is a near match."""


@dataclass(frozen=True, slots=True)
class Count:
    """A number of things: "three children" is 3 of ``child``."""

    quantity: Quantity
    noun: str
    """The word key of what is counted."""
    written: str
    """The number and the noun as the text writes them."""


_NOUN_AFTER = re.compile(r"\s+([A-Za-z][A-Za-z'-]*)")


def counts_of(text: str, found: Sequence[Quantity]) -> list[Count]:
    """The things a text counts: a bare number (at least 2) followed at once by a word."""
    out = []
    for quantity in found:
        if quantity.unit is not None or quantity.value < 2 or quantity.value != int(quantity.value):
            continue
        end = quantity.start + len(quantity.written)
        noun = _NOUN_AFTER.match(text, end)
        if noun is None or noun[1].lower() in STOPWORDS or noun[1].lower() in NEGATIONS:
            continue
        key = word_key(noun[1].lower())
        out.append(Count(quantity, key, text[quantity.start : noun.end()]))
    return out


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of the context (or one field of a record), indexed."""

    text: str
    words: frozenset[str]
    quantities: tuple[Quantity, ...]
    """The figures it states (``24V``, ``sixty days``)."""
    negated: frozenset[str]
    """The content words a negation in the sentence governs."""
    calendar: frozenset[str]
    """The weekdays and months it names, in full (``Jan`` is ``january``)."""
    counts: tuple[Count, ...] = ()
    """The things it counts ("two children", "14 routes")."""
    antecedent: frozenset[str] = frozenset()
    """For a sentence that starts with a pronoun ("It does not work on gravel"), the words of
    the sentence before it, which say what the pronoun stands for."""


@dataclass(frozen=True)
class ContextIndex:
    """Everything about a case's context that claims are compared with; built once per case."""

    sentences: tuple[Sentence, ...]
    words: frozenset[str]
    prefixes: frozenset[str]
    surface: frozenset[str]
    """Every token of the context, lower case, unstemmed (for names)."""
    figures: dict[str, tuple[Quantity, ...]]
    """The context's figures by value (``24``)."""
    measures: dict[str, tuple[Quantity, ...]]
    """The context's figures with a unit, by what they measure (``time``, ``usd``)."""
    calendar: frozenset[str]
    """The weekdays and months the context names or implies ("weekdays" names Monday)."""
    counts: dict[str, frozenset[str]]
    """What the context counts, and by which numbers (``child``: ``2``, ``3``)."""
    postings: dict[str, frozenset[int]]
    """Content word to the sentences holding it."""
    pairs: frozenset[tuple[str, str]]
    trigrams: frozenset[tuple[str, str, str]]
    records: tuple[Record, ...]
    asked: frozenset[str]
    """Words of the query: a name the question uses is not an invention of the answer."""
    initials: frozenset[str] = frozenset()
    """Words the context writes in capitals (``CA``, ``NYC``) or short and capitalised (``Ave``,
    ``Rd``), as written: a name the claim writes out (``California``, ``New York City``,
    ``Avenue``, ``Road``)."""

    @classmethod
    def build(cls, chunks: Sequence[str], query: str = "") -> ContextIndex:
        """Index the chunks; a chunk that is one JSON object is read as a record."""
        texts, records, openings = _read_chunks(chunks)
        sentences: list[Sentence] = []
        postings: dict[str, list[int]] = {}
        pairs: set[tuple[str, str]] = set()
        trigrams: set[tuple[str, str, str]] = set()
        surface: set[str] = set()
        figures: dict[str, list[Quantity]] = {}
        counted: dict[str, set[str]] = {}
        measures: dict[str, list[Quantity]] = {}
        calendar: set[str] = set()
        initials: set[str] = set()
        for position, text in enumerate(texts):
            words = content_words(text)
            for i, word in enumerate(words):
                for other in words[i + 1 : i + 1 + PAIR_WINDOW]:
                    pairs.add((word, other))
                    pairs.add((other, word))
            raw = tokens(text)
            surface |= _surface_words(text, raw)
            initials.update(m for m in _CAPITALS.findall(text) if m.lower() not in STOPWORDS)
            trigrams.update(zip(raw, raw[1:], raw[2:], strict=False))
            found = tuple(quantities(text))
            for quantity in found:
                figures.setdefault(quantity.key, []).append(quantity)
                if quantity.dimension is not None:
                    measures.setdefault(quantity.dimension, []).append(quantity)
            days = frozenset(full for full, _ in calendar_words(text))
            calendar |= days | _implied_days(text)
            index = len(sentences)
            for word in set(words):
                postings.setdefault(word, []).append(index)
            sentences.append(
                Sentence(
                    text,
                    frozenset(words),
                    found,
                    negated_words(text),
                    days,
                    counts=tuple(counts_of(text, found)),
                    antecedent=(
                        sentences[-1].words
                        if position not in openings and _PRONOUN_START.match(text)
                        else frozenset()
                    ),
                )
            )
            for count in sentences[-1].counts:
                counted.setdefault(count.noun, set()).add(count.quantity.key)
        for keys, group in zip(_ALIAS_KEYS, _ALIAS_GROUPS, strict=True):
            if not surface.isdisjoint(keys):
                surface |= group
        prefixes = {w[:NEAR_PREFIX] for w in postings if len(w) >= NEAR_PREFIX}
        prefixes |= {w[:NEAR_PREFIX] for w in surface if len(w) >= NEAR_PREFIX}
        return cls(
            sentences=tuple(sentences),
            words=frozenset(postings),
            prefixes=frozenset(prefixes),
            surface=frozenset(surface),
            figures={key: tuple(found) for key, found in figures.items()},
            measures={key: tuple(found) for key, found in measures.items()},
            calendar=frozenset(calendar),
            counts={noun: frozenset(values) for noun, values in counted.items()},
            postings={word: frozenset(ids) for word, ids in postings.items()},
            pairs=frozenset(pairs),
            trigrams=frozenset(trigrams),
            records=tuple(records),
            asked=frozenset(tokens(query)),
            initials=frozenset(initials),
        )

    def knows(self, word: str) -> bool:
        """Whether a content word (stemmed) or a word as written occurs in the context."""
        return word in self.words or word in self.surface or word in GENERIC

    def knows_name(self, name: str, spelt: str = "") -> bool:
        """Whether the context has a name: as written, stemmed, nearly, or shortened.

        ``name`` is one word of the claim's name (``california``), ``spelt`` the whole name it is
        part of (``new york``). A word is known when the context writes the name's initials
        (``NY``), or a short capitalised word that the name starts with (``Ave``), or that holds
        letters of the name in order from its first (``CA``, ``Rd``, ``Blvd``) with no vowel
        after the first letter. A record knows the words of its keys too (``wifi`` for
        ``WiFi``, ``tv`` for ``HasTV``).
        """
        if (
            self.knows(name)
            or self.knows(stem(name))
            or self.nearly_knows(name)
            or name in self.asked
            or any(
                name in record.vocabulary or word_key(name) in record.vocabulary
                for record in self.records
            )
        ):
            return True
        words = spelt.split()
        if len(words) > 1 and "".join(w[0] for w in words).upper() in self.initials:
            return True
        return any(_shortens(short, name) for short in self.initials)

    def nearly_knows(self, word: str) -> bool:
        """Whether a context word starts like this one (``criticism`` and ``criticised``)."""
        return len(word) >= NEAR_PREFIX and word[:NEAR_PREFIX] in self.prefixes

    def states(self, figure: Quantity) -> bool:
        """Whether the context states this figure, in any unit or spelling that says the same."""
        same_value = self.figures.get(figure.key, ())
        if any(figure.stated_by(other) for other in same_value):
            return True
        if figure.dimension is None:
            return False
        return any(figure.stated_by(other) for other in self.measures.get(figure.dimension, ()))


_VOWELS = frozenset("aeiou")
MIN_PREFIX = 3
"""A short word the name starts with must be this long (``Ave`` for ``Avenue``)."""


def _shortens(short: str, name: str) -> bool:
    """Whether a short word writes a longer name (lower case) short: ``Ave``, ``Rd``, ``CA``.

    The name starts with it, or holds its letters in order from the first, when it is written
    in capitals or has no vowel after its first letter (``Rd``, ``Blvd``; not ``Ann``).
    """
    lower = short.lower()
    if len(name) < len(lower) + MIN_PREFIX - 1 or lower[0] != name[0]:
        return False  # "IP" does not write "IPv" short
    if len(lower) >= MIN_PREFIX and name.startswith(lower):
        return True
    if not short.isupper() and _VOWELS & set(lower[1:]):
        return False
    rest = iter(name[1:])
    return all(letter in rest for letter in lower[1:])


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


def _implied_days(text: str) -> frozenset[str]:
    """The weekdays and months a text names by a span or a word for several.

    "Monday to Friday" names Tuesday too, "weekdays" names Monday, "daily" every day.
    """
    days: set[str] = set()
    for pattern, named in _IMPLIED_DAYS:
        if pattern.search(text):
            days |= named
    for match in _SPAN.finditer(text):
        first, last = CALENDAR[match[1].lower()], CALENDAR[match[2].lower()]
        for order in _DAY_ORDER:
            if first in order and last in order:
                k = order.index(first)
                while order[k] != last:
                    days.add(order[k])
                    k = (k + 1) % len(order)
    return frozenset(days)


def _read_chunks(chunks: Sequence[str]) -> tuple[list[str], list[Record], set[int]]:
    """The context's sentences, its JSON records, and where each chunk or record's prose starts."""
    texts: list[str] = []
    records: list[Record] = []
    openings: set[int] = set()
    for chunk in chunks:
        record = parse_record(chunk)
        openings.add(len(texts))
        if record is None:
            texts.extend(split_context(chunk))
            continue
        records.append(record)
        texts.extend(record.facts)
        for prose in record.prose:
            openings.add(len(texts))
            texts.extend(split_context(prose))
    return texts, records, openings


def _surface_words(text: str, raw: Sequence[str]) -> set[str]:
    """A sentence's words as written: its tokens, the parts of hyphenated ones, its acronyms."""
    found = set(raw)
    found.update(piece for token in raw if "-" in token for piece in token.split("-"))
    found.update(m.replace(".", "").lower() for m in _ACRONYM.findall(text))
    found.update(m.replace(".", "").lower() for m in _DOTTED.findall(text))
    return found
