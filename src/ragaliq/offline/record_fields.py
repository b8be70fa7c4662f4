"""How a structured record reads: a JSON object flattened into fields, lists, weeks and prose.

A record is read from its own keys and values, with no knowledge of one dataset's names. Keys read
as words: ``OutdoorSeating`` as "outdoor seating", ``wifi_available`` as "wifi" (words such as
"has", "good for" or "available" are dropped, and so is a first word that several sibling keys
share, such as ``Restaurants`` in ``RestaurantsTakeOut`` and ``RestaurantsReservations``). A value
reads as a flag (``false``, ``"no"``, ``"none"``, a one-word string that is on), as a ``null`` (the
record does not say), as a figure, as a list (its length), as a week (day names to time ranges,
:mod:`.schedule`) or, when long, as prose to be read as sentences.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Self

from ragaliq.offline.opposites import alternative
from ragaliq.offline.schedule import Week, parse_week
from ragaliq.text.words import STOPWORDS, word_key

__all__ = [
    "MAX_FIELDS",
    "NEAR_PREFIX",
    "NULL_VALUES",
    "TOKEN",
    "Field",
    "Key",
    "KeyLookup",
    "RecordFields",
    "name_value",
    "truth",
]

_MIN_PROSE_WORDS = 8
"""A string field at least this long is free text (a review, a description), read as prose."""
NEAR_PREFIX = 5
"""Two words sharing this many first letters name the same thing (``accessible``, ``access``)."""
KEY_FILLERS = frozenset(
    """
    has have is are accepts accept allows allowed allow good for offers offer available level
    info information type kind by with the a an of can does do
    """.split()
)
"""Words a key uses to phrase a flag (``HasTV``, ``GoodForKids``, ``DogsAllowed``)."""
PARTICLES = frozenset("out up in on off thru through".split())
"""A key word that only means something joined to its neighbour (``TakeOut``, ``DriveThru``)."""
_NEGATIVE_VALUES = frozenset({"no", "false", "0", "n", "off", "unavailable"})
_FLAG_WORD = re.compile(r"[a-z][a-z_]{0,19}")
"""A one-word string value reads as a flag that is on (``"free"``, ``"full_bar"``); a longer
value (an address, a list of categories) is not a flag at all."""
NULL_VALUES = frozenset({"", "null", "none", "unknown", "n/a", "na"})
MAX_FIELDS = 256
"""The most fields (or lists) one clause is checked against: those whose keys it uses, in the
record's order. RAGTruth's records have fewer than 100 fields in all."""

TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:\.\d+)?")
_KEY_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True, slots=True)
class Key:
    """How a key reads: the words a claim must use, and the key written as one word."""

    words: frozenset[str]
    """Word keys (``ragaliq.text.words.word_key``) the claim must all use; empty when only the
    joined form can match."""
    joined: str
    """The key's distinctive words run together, lower case: ``takeout``, ``wifi``."""
    name: str
    """How a reason names it: ``outdoor seating``."""


@dataclass(frozen=True, slots=True)
class Field:
    key: Key
    parent: Key | None
    """For a field inside an object of flags, that object's key: the claim must use it too."""
    value: Any
    quote: str
    """How the field reads in the JSON: ``"street": false``."""


@dataclass(frozen=True)
class RecordFields:
    """A JSON object from the context, read as fields."""

    fields: tuple[Field, ...]
    """Every scalar field (flags, nulls, strings, numbers) and every object of flags."""
    lists: tuple[tuple[Key, int, str], ...]
    """Each list value: its key, its length and a quote."""
    weeks: tuple[Week, ...]
    prose: tuple[str, ...]
    """Free-text values (reviews, descriptions), to be read as sentences."""
    facts: tuple[str, ...]
    """One line per short field, ``key: value``, for word overlap with the claim."""
    said: frozenset[str]
    """Word keys of the string values alone: what the record's text talks about."""
    vocabulary: frozenset[str]
    """Word keys of every key and every string value: what the record names at all."""
    prefixes: frozenset[str]

    @cached_property
    def lookup(self) -> KeyLookup:
        """The record's fields by the words of their keys, built at its first use."""
        return KeyLookup.of(f.key for f in self.fields)

    @cached_property
    def list_lookup(self) -> KeyLookup:
        """The record's lists by the words of their keys."""
        return KeyLookup.of(key for key, _, _ in self.lists)

    @classmethod
    def read(cls, data: dict[str, Any]) -> Self:
        """The fields of a JSON object."""
        walker = _Walker()
        walker.walk(data, None, _shared_prefixes(list(_all_keys(data))))
        vocabulary = frozenset(walker.vocabulary)
        return cls(
            fields=tuple(walker.fields),
            lists=tuple(walker.lists),
            weeks=tuple(walker.weeks),
            prose=tuple(walker.prose),
            facts=tuple(walker.facts),
            said=frozenset(walker.said),
            vocabulary=vocabulary,
            prefixes=frozenset(w[:NEAR_PREFIX] for w in vocabulary if len(w) >= NEAR_PREFIX),
        )


@dataclass(frozen=True)
class KeyLookup:
    """Keys by their words, by those words' first letters and run together: where each is."""

    words: dict[str, tuple[int, ...]]
    prefixes: dict[str, tuple[int, ...]]
    joined: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, keys: Iterable[Key]) -> KeyLookup:
        words: dict[str, list[int]] = {}
        prefixes: dict[str, list[int]] = {}
        joined: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            joined.setdefault(key.joined, []).append(i)
            for word in key.words:
                words.setdefault(word, []).append(i)
                if len(word) >= NEAR_PREFIX:
                    prefixes.setdefault(word[:NEAR_PREFIX], []).append(i)
        return cls(
            words={k: tuple(v) for k, v in words.items()},
            prefixes={k: tuple(v) for k, v in prefixes.items()},
            joined={k: tuple(v) for k, v in joined.items()},
        )

    def find(self, words: Iterable[str], runs: Iterable[str] = ()) -> tuple[list[int], int]:
        """Where the keys are that use one of ``words`` or are written as one of ``runs``.

        A word matches a key's word as it is or by its first letters. Returned: at most
        :data:`MAX_FIELDS` positions, in order, and how many entries were visited.
        """
        found: set[int] = set()
        visited = 0
        for word in words:
            for table, key in ((self.words, word), (self.prefixes, word[:NEAR_PREFIX])):
                if table is self.prefixes and len(word) < NEAR_PREFIX:
                    continue
                hits = table.get(key, ())[:MAX_FIELDS]
                visited += len(hits) + 1
                found.update(hits)
        for run in runs:
            hits = self.joined.get(run, ())[:MAX_FIELDS]
            visited += len(hits) + 1
            found.update(hits)
        return sorted(found)[:MAX_FIELDS], visited


def truth(value: Any, clause: str) -> bool | None:
    """Whether a field's value says the thing exists; None when it does not say."""
    if isinstance(value, bool):
        return value
    if value is None:
        return None
    if isinstance(value, dict):
        states = [truth(v, clause) for v in value.values()]
        if any(s is True for s in states):
            return True
        return False if states and all(s is False for s in states) else None
    if isinstance(value, int | float):
        return None  # a figure: checked as a figure, not as a flag
    if name_value(value) is not None:
        return None  # a name ("Cork") says what the thing is called, not whether it exists
    text = str(value).strip().strip("'\"").lower()
    if text.startswith("u'"):
        text = text[2:]
    if text in NULL_VALUES:
        return None
    if text in _NEGATIVE_VALUES:
        return False
    if text == "paid" and re.search(r"\bfree\b", clause, re.IGNORECASE):
        return False
    if text.startswith("{"):
        if "true" in text:
            return True
        return False if "false" in text else None
    return True if _FLAG_WORD.fullmatch(text) else None


_FLAG_NAMES = frozenset({"yes", "true", "on", "y"}) | _NEGATIVE_VALUES | NULL_VALUES
_NAME_VALUE = re.compile(r"[A-Z][\w'\u2019&.-]*(?:\s+[A-Za-z][\w'\u2019&.-]*){0,4}")


def name_value(value: Any) -> str | None:
    """The value when it is a short name (``"Cork"``, ``"Santa Barbara"``), else None.

    A name starts with a capital letter and is not a flag (``"Yes"``, ``"None"``) or a word
    that has an opposite (``"Free"``, see :func:`.opposites.alternative`).
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not _NAME_VALUE.fullmatch(text) or text.lower() in _FLAG_NAMES:
        return None
    if " " not in text and alternative(word_key(text.lower())) is not None:
        return None
    return text


def _key_parts(key: str) -> list[str]:
    return [part.lower() for part in _KEY_PART.findall(key)]


def _read_key(parts: list[str], prefixes: frozenset[str]) -> Key:
    distinctive = [p for p in parts if p not in KEY_FILLERS]
    if len(distinctive) > 1 and distinctive[0] in prefixes:
        distinctive = distinctive[1:]
    distinctive = distinctive or parts
    joined = "".join(distinctive)
    if any(p in PARTICLES for p in distinctive):
        words: frozenset[str] = frozenset()
    else:
        words = frozenset(word_key(p) for p in distinctive if p not in STOPWORDS)
    name = joined if all(len(p) <= 2 for p in distinctive) else " ".join(distinctive)
    return Key(words=words, joined=joined, name=name)


def _all_keys(node: Any) -> Iterator[str]:
    if isinstance(node, str) and (flags := _flag_object(node.strip())) is not None:
        node = flags
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from _all_keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from _all_keys(item)


def _shared_prefixes(keys: list[str]) -> frozenset[str]:
    """First words that several keys of the record share.

    Such a word is a namespace, not a word to look for in a claim (``Restaurants`` in
    ``RestaurantsTakeOut``, ``business`` in ``business_stars``).
    """
    firsts = Counter(parts[0] for key in keys if len(parts := _key_parts(key)) > 1)
    return frozenset(word for word, count in firsts.items() if count > 1)


def _is_flags(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and any(isinstance(v, bool) for v in value.values())
        and all(isinstance(v, bool | type(None)) for v in value.values())
    )


def _flag_object(text: str) -> dict[str, Any] | None:
    """A value written as a Python-style dict of flags (``"{'garage': False, ...}"``)."""
    if not text.startswith("{") or ":" not in text:
        return None
    try:
        data = json.loads(
            text.replace("'", '"')
            .replace("True", "true")
            .replace("False", "false")
            .replace("None", "null")
        )
    except ValueError:
        return None
    return data if _is_flags(data) else None


class _Walker:
    """Flattens a JSON object into fields, lists, weeks, free text, short facts and words."""

    def __init__(self) -> None:
        self.fields: list[Field] = []
        self.lists: list[tuple[Key, int, str]] = []
        self.weeks: list[Week] = []
        self.prose: list[str] = []
        self.facts: list[str] = []
        self.vocabulary: set[str] = set()
        self.said: set[str] = set()

    def walk(self, node: dict[str, Any], parent: Key | None, prefixes: frozenset[str]) -> None:
        for raw_key, raw_value in node.items():
            name = str(raw_key)
            parts = _key_parts(name)
            key = _read_key(parts, prefixes)
            self.vocabulary.update(word_key(p) for p in parts)
            self.vocabulary.add(key.joined)
            value = raw_value
            if isinstance(value, str) and (flags := _flag_object(value.strip())) is not None:
                value = flags
            week = parse_week(name, value)
            if week is not None:
                self.weeks.append(week)
                self.facts.append(f"{' '.join(parts)}: {json.dumps(value)[:300]}")
                continue
            quote = f'"{name}": {json.dumps(value, ensure_ascii=False)}'
            if isinstance(value, dict):
                if _is_flags(value):
                    self.fields.append(Field(key, parent, value, quote[:200]))
                    self.walk(value, key, prefixes)
                else:
                    self.walk(value, None, prefixes)
            elif isinstance(value, list):
                self.lists.append((key, len(value), quote[:200]))
                for item in value:
                    if isinstance(item, dict):
                        self.walk(item, None, prefixes)
                    else:
                        self.leaf(name, item)
            else:
                self.fields.append(Field(key, parent, value, quote))
                self.leaf(name, value)

    def leaf(self, name: str, value: Any) -> None:
        if isinstance(value, str):
            said = {word_key(t.lower()) for t in TOKEN.findall(value) if not t[0].isdigit()}
            self.said |= said
            self.vocabulary |= said
            self.vocabulary.update(t.lower().replace("-", "") for t in TOKEN.findall(value))
            if len(value.split()) >= _MIN_PROSE_WORDS:
                self.prose.append(value)
                return
        words = " ".join(_key_parts(name))
        if isinstance(value, bool) or value is None:
            self.facts.append(words)
        else:
            self.facts.append(f"{words}: {value}")
