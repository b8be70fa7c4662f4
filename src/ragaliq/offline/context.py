"""A case's context, indexed once: what every claim of the case is compared with.

The context is split into sentences (a chunk that is one JSON object is read as a record, its
short fields as sentences and its free text as prose; a sentence longer than
:data:`MAX_SENTENCE_WORDS` words is read in windows of that length), and indexed by content word,
with the figures it states (by value and by what they measure), the weekdays and months it names
or implies ("Monday to Friday", "daily"), the things it counts ("two children"), and the names it
knows under another name ("U.S." is "America"). Each distinct sentence is read once, however
often the context repeats it.

A claim is never compared with every sentence: :meth:`ContextIndex.candidates` looks its words
up, rarest first, and takes at most :data:`MAX_CANDIDATES` sentences. With every step so capped,
judging a case takes time linear in its size; the case's :class:`~.work.Work` counts it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ragaliq.offline.days import implied_day_set
from ragaliq.offline.records import Record, parse_record
from ragaliq.offline.work import Work
from ragaliq.text.quantities import Quantity, quantities
from ragaliq.text.words import (
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

__all__ = [
    "GENERIC",
    "MAX_CANDIDATES",
    "MAX_SENTENCE_WORDS",
    "NEAR_PREFIX",
    "ContextIndex",
    "Count",
    "Sentence",
    "counts_of",
    "shortens",
]

PAIR_WINDOW = 3
"""Two context words at most this far apart form a pair a claim's adjacent words can match."""
MAX_CANDIDATES = 64
"""The most context sentences one claim is compared with, found by its rarest words first. On
RAGTruth no claim's words occur in more than 55 sentences, so this cap changes nothing there; it
keeps a context built so that every sentence shares a claim's words from costing time in
proportion to claims times sentences."""
MAX_SENTENCE_WORDS = 200
"""A context sentence longer than this many words (RAGTruth's longest has 167) is read as
windows of this many words, so that comparing a claim with one sentence is bounded."""
MAX_INITIALS = 64
"""The most short capitalised words (``CA``, ``Rd``) a name is compared with."""


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
_PRONOUN_START = re.compile(r"\W*+(?:it|they|this|these|he|she)\b", re.IGNORECASE)
_CAPITALS = re.compile(r"\b[A-Z](?:[A-Z]{1,4}|[a-z]{1,3})\b")
_DOTTED = re.compile(r"\b[A-Za-z]+(?:\.[A-Za-z]+)+\b")
"""A word written with inner full stops (``Ph.D``), to be known without them (``phd``)."""
_LETTER_DOT_LETTER = re.compile(r"[A-Za-z]\.[A-Za-z]")
"""What an acronym (``U.S.``) and a dotted word (``Ph.D``) both hold: a quick test for them."""
_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+){1,3}\b")
"""A name of two to four capitalised words, whose initials a claim may write (``LA``)."""
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


_NOUN_AFTER = re.compile(r"\s++([A-Za-z][A-Za-z'-]*)")


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
    sequence: tuple[str, ...] = ()
    """Its content words, in order."""
    raw: tuple[str, ...] = ()
    """Its tokens as :func:`~ragaliq.text.words.tokens` reads them, stopwords kept."""
    days: frozenset[str] = frozenset()
    """The weekdays and months it names or implies ("Tuesday to Sunday" names Friday too)."""
    follow: frozenset[str] = frozenset()
    """The words of the next sentence when that one starts with a pronoun: the same subject
    goes on there ("The X2 has a 500 W motor. It reaches 25 km/h.")."""
    opening: int = 0
    """The position of the first sentence of its chunk (or of its record's prose)."""
    record: int | None = None
    """The record whose field or prose it is, as a position in ``ContextIndex.records``."""


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
    postings: dict[str, tuple[int, ...]]
    """Content word to the sentences holding it, in order; a sentence the context repeats
    word for word is listed where it first occurs."""
    records: tuple[Record, ...]
    asked: frozenset[str]
    """Words of the query: a name the question uses is not an invention of the answer."""
    initials: frozenset[str] = frozenset()
    """Words the context writes in capitals (``CA``, ``NYC``) or short and capitalised (``Ave``,
    ``Rd``), as written: a name the claim writes out (``California``, ``New York City``,
    ``Avenue``, ``Road``)."""
    acronyms: frozenset[str] = frozenset()
    """The initials of the names of several words the context writes (``LA`` for Los Angeles)."""
    record_facts: tuple[tuple[int, ...], ...] = ()
    """For each record, the positions of the sentences that read its short fields."""
    stated_in: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)
    """Each sentence's text, and the chunks that state it (by number, from 1, in order)."""
    work: Work = dataclasses.field(default_factory=lambda: Work(0), compare=False)
    """What judging the case has spent so far, against its bound."""
    _by_letter: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls, chunks: Sequence[str], query: str = "", *, work: Work | None = None
    ) -> ContextIndex:
        """Index the chunks; a chunk that is one JSON object is read as a record.

        ``work`` counts the words indexed (a new counter sized to the chunks when None).

        Raises:
            JudgeWorkError: indexing passed the case's work bound.
        """
        if work is None:
            work = Work(sum(len(chunk) for chunk in chunks) + len(query))
        texts, records, openings, owners, holders = _read_chunks(chunks)
        texts, openings, owners, holders = _windows(texts, openings, owners, holders)
        readings = [_read_sentence(text) for text in texts]
        sentences: list[Sentence] = []
        postings: dict[str, list[int]] = {}
        surface: set[str] = set()
        figures: dict[str, list[Quantity]] = {}
        counted: dict[str, set[str]] = {}
        measures: dict[str, list[Quantity]] = {}
        calendar: set[str] = set()
        initials: set[str] = set()
        acronyms: set[str] = set()
        record_facts: list[list[int]] = [[] for _ in records]
        fact_texts = [frozenset(record.facts) for record in records]
        first_seen: dict[str, int] = {}
        stated_in: dict[str, list[int]] = {}
        opening = 0
        for position, (text, read) in enumerate(zip(texts, readings, strict=True)):
            owner = owners[position]
            if owner is not None and text in fact_texts[owner]:
                record_facts[owner].append(position)
            work.spend(len(read.raw) + 1)
            surface |= read.surface
            initials.update(read.initials)
            acronyms.update(read.acronyms)
            for quantity in read.quantities:
                figures.setdefault(quantity.key, []).append(quantity)
                if quantity.dimension is not None:
                    measures.setdefault(quantity.dimension, []).append(quantity)
            calendar |= read.days
            chunks_of = stated_in.setdefault(text, [])
            if holders[position] not in chunks_of:
                chunks_of.append(holders[position])
            if text not in first_seen:  # a sentence said again is no new evidence to look up
                first_seen[text] = position
                for word in read.words:
                    postings.setdefault(word, []).append(position)
            if position in openings:
                opening = position
            following = readings[position + 1] if position + 1 < len(readings) else None
            sentences.append(
                Sentence(
                    text,
                    read.words,
                    read.quantities,
                    read.negated,
                    read.calendar,
                    counts=read.counts,
                    antecedent=(
                        sentences[-1].words
                        if position not in openings and read.pronoun_start
                        else frozenset()
                    ),
                    sequence=read.sequence,
                    raw=read.raw,
                    days=read.days,
                    follow=(
                        following.words
                        if following is not None
                        and following.pronoun_start
                        and position + 1 not in openings
                        else frozenset()
                    ),
                    opening=opening,
                    record=owners[position],
                )
            )
            for count in read.counts:
                counted.setdefault(count.noun, set()).add(count.quantity.key)
        for keys, group in zip(_ALIAS_KEYS, _ALIAS_GROUPS, strict=True):
            if not surface.isdisjoint(keys):
                surface |= group
        prefixes = {w[:NEAR_PREFIX] for w in postings if len(w) >= NEAR_PREFIX}
        prefixes |= {w[:NEAR_PREFIX] for w in surface if len(w) >= NEAR_PREFIX}
        by_letter: dict[str, list[str]] = {}
        for short in sorted(initials):
            by_letter.setdefault(short[0].lower(), []).append(short)
        return cls(
            sentences=tuple(sentences),
            words=frozenset(postings),
            prefixes=frozenset(prefixes),
            surface=frozenset(surface),
            figures={key: tuple(found) for key, found in figures.items()},
            measures={key: tuple(found) for key, found in measures.items()},
            calendar=frozenset(calendar),
            counts={noun: frozenset(values) for noun, values in counted.items()},
            postings={word: tuple(ids) for word, ids in postings.items()},
            records=tuple(records),
            asked=frozenset(tokens(query)),
            initials=frozenset(initials),
            record_facts=tuple(tuple(found) for found in record_facts),
            acronyms=frozenset(acronyms),
            stated_in={text: tuple(found) for text, found in stated_in.items()},
            work=work,
            _by_letter={letter: tuple(found) for letter, found in by_letter.items()},
        )

    def candidates(self, words: Iterable[str]) -> list[int]:
        """The sentences a claim with these words is compared with, in order.

        Every sentence holding one of the words, found through the rarest words first, and at
        most :data:`MAX_CANDIDATES` of them: the sentence that holds most of a claim's words
        holds its rarest ones.
        """
        ranked = sorted((len(self.postings[w]), w) for w in set(words) if w in self.postings)
        chosen: dict[int, None] = {}
        visited = len(ranked)
        for _, word in ranked:
            for i in self.postings[word]:
                visited += 1
                chosen[i] = None
                if len(chosen) >= MAX_CANDIDATES:
                    break
            if len(chosen) >= MAX_CANDIDATES:
                break
        self.work.spend(visited)
        return sorted(chosen)

    def knows(self, word: str) -> bool:
        """Whether a content word (stemmed) or a word as written occurs in the context."""
        return word in self.words or word in self.surface or word in GENERIC

    def knows_name(self, name: str, spelt: str = "") -> bool:
        """Whether the context has a name: as written, stemmed, nearly, or shortened.

        ``name`` is one word of the claim's name (``california``), ``spelt`` the whole name it is
        part of (``new york``). A word is known when the context writes the name's initials
        (``NY``), or a short capitalised word that the name starts with (``Ave``), or that holds
        letters of the name in order from its first (``CA``, ``Rd``, ``Blvd``) with no vowel
        after the first letter; a short word is known when the context writes a name it is the
        initials of (``LA`` for "Los Angeles"). A record knows the words of its keys too
        (``wifi`` for ``WiFi``, ``tv`` for ``HasTV``).
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
        if 2 <= len(name) <= 4 and name.upper() in self.acronyms:
            return True
        shorts = self._by_letter.get(name[:1], ())[:MAX_INITIALS]
        self.work.spend(len(shorts))
        return any(shortens(short, name) for short in shorts)

    def shorts_of(self, names: Iterable[str]) -> tuple[str, ...]:
        """The context's short capitalised words that may write one of these names short.

        At most :data:`MAX_INITIALS` for each first letter (counted as work).
        """
        found: list[str] = []
        for letter in {name[:1] for name in names}:
            shorts = self._by_letter.get(letter, ())[:MAX_INITIALS]
            self.work.spend(len(shorts))
            found += shorts
        return tuple(found)

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


def shortens(short: str, name: str) -> bool:
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


@dataclass(frozen=True, slots=True)
class _Reading:
    """What one sentence's text says, read once however often the context repeats it."""

    words: frozenset[str]
    sequence: tuple[str, ...]
    raw: tuple[str, ...]
    surface: frozenset[str]
    initials: tuple[str, ...]
    acronyms: tuple[str, ...]
    quantities: tuple[Quantity, ...]
    negated: frozenset[str]
    calendar: frozenset[str]
    days: frozenset[str]
    counts: tuple[Count, ...]
    pronoun_start: bool


@lru_cache(maxsize=16384)
def _read_sentence(text: str) -> _Reading:
    sequence = tuple(content_words(text))
    raw = tuple(tokens(text))
    found = tuple(quantities(text))
    calendar = frozenset(full for full, _ in calendar_words(text))
    return _Reading(
        words=frozenset(sequence),
        sequence=sequence,
        raw=raw,
        surface=frozenset(_surface_words(text, raw)),
        initials=tuple(m for m in _CAPITALS.findall(text) if m.lower() not in STOPWORDS),
        acronyms=tuple(
            "".join(word[0] for word in run.split()).upper() for run in _RUN.findall(text)
        ),
        quantities=found,
        negated=negated_words(text),
        calendar=calendar,
        days=calendar | implied_day_set(text),
        counts=tuple(counts_of(text, found)),
        pronoun_start=bool(_PRONOUN_START.match(text)),
    )


def _windows(
    texts: list[str], openings: set[int], owners: list[int | None], holders: list[int]
) -> tuple[list[str], set[int], list[int | None], list[int]]:
    """The sentences with each longer than MAX_SENTENCE_WORDS words cut into windows of that many.

    Returned with where each chunk (or record's prose) now starts, and each one's record and
    chunk.
    """
    out: list[str] = []
    opened: set[int] = set()
    owned: list[int | None] = []
    held: list[int] = []
    for position, (text, owner) in enumerate(zip(texts, owners, strict=True)):
        if position in openings:
            opened.add(len(out))
        pieces = text.split()
        if len(pieces) <= MAX_SENTENCE_WORDS:
            out.append(text)
        else:
            out.extend(
                " ".join(pieces[start : start + MAX_SENTENCE_WORDS])
                for start in range(0, len(pieces), MAX_SENTENCE_WORDS)
            )
        owned.extend([owner] * (len(out) - len(owned)))
        held.extend([holders[position]] * (len(out) - len(held)))
    return out, opened, owned, held


def _read_chunks(
    chunks: Sequence[str],
) -> tuple[list[str], list[Record], set[int], list[int | None], list[int]]:
    """The context's sentences, its records, where each chunk or record's prose starts.

    Returned with each sentence's record (None for prose outside a record) and chunk (from 1).
    """
    texts: list[str] = []
    records: list[Record] = []
    openings: set[int] = set()
    owners: list[int | None] = []
    holders: list[int] = []
    for number, chunk in enumerate(chunks, start=1):
        record = parse_record(chunk)
        openings.add(len(texts))
        if record is None:
            texts.extend(split_context(chunk))
            owners.extend([None] * (len(texts) - len(owners)))
            holders.extend([number] * (len(texts) - len(holders)))
            continue
        records.append(record)
        texts.extend(record.facts)
        for prose in record.prose:
            openings.add(len(texts))
            texts.extend(split_context(prose))
        owners.extend([len(records) - 1] * (len(texts) - len(owners)))
        holders.extend([number] * (len(texts) - len(holders)))
    return texts, records, openings, owners, holders


def _surface_words(text: str, raw: Sequence[str]) -> set[str]:
    """A sentence's words as written: its tokens, the parts of hyphenated ones, its acronyms."""
    found = set(raw)
    found.update(piece for token in raw if "-" in token for piece in token.split("-"))
    if _LETTER_DOT_LETTER.search(text):  # what both need: most sentences have neither
        found.update(m.replace(".", "").lower() for m in _ACRONYM.findall(text))
        found.update(m.replace(".", "").lower() for m in _DOTTED.findall(text))
    return found
