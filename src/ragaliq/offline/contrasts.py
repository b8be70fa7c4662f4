"""Where a claim says otherwise than the context sentence closest to it, word for word.

Each check compares a claim with one context sentence (the one holding most of its words) and
returns what it found as both texts write it, or None. None of them reads a paraphrase: each looks
for one documented kind of change in a sentence that otherwise says the same thing.

- :func:`opposite`: a word replaced by its opposite (:mod:`ragaliq.offline.opposites`: "a partial
  refund" against "a full refund"), both next to a word the two share;
- :func:`widened`: a scope widened ("free worldwide" against "free in the US", "all customers"
  against "most customers", "unlimited" against "up to 5");
- :func:`swapped`: two names in swapped roles ("Acme acquired Globex" against "Globex acquired
  Acme"), not a passive ("Globex was acquired by Acme").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache

from ragaliq.offline.opposites import ALTERNATIVES
from ragaliq.text.words import CALENDAR, STOPWORDS, content_tokens, is_negated, tokens, word_key

__all__ = [
    "NARROW_WORDS",
    "ROLE_WORDS",
    "WIDE_PLACE_WORDS",
    "WIDE_WORDS",
    "Change",
    "comparable",
    "opposite",
    "swapped",
    "widened",
]


WIDE_PLACE_WORDS = frozenset(
    "worldwide globally global internationally everywhere anywhere abroad overseas nationwide "
    "international".split()
)
"""Words that widen a claim to every place."""
WIDE_WORDS = frozenset(
    "all every everyone everybody everything always any entire unlimited whole".split()
)
"""Words that widen a claim to every case."""
NARROW_WORDS = frozenset(
    """
    some most many several certain select selected few limited only usually often sometimes
    typically generally mostly occasionally partly partially
    """.split()
)
"""Words that restrict a context sentence to some cases."""
_PLACE = re.compile(
    r"\b(?:in|within|inside|across|throughout|to)\s+(?:the\s+)?"
    r"(?P<place>[A-Z][\w.]*(?:\s+[A-Z][\w.]*)*)"
)
_UP_TO = re.compile(r"\b(?:up to|at most|no more than|a maximum of|maximum of)\s+\w+", re.I)
MIN_SHARED = 2
"""Content words a claim and the sentence must share, besides the change, to be compared."""
SHARED_SHARE = 0.5
"""Share of the claim's other content words the sentence must hold to be compared."""


@dataclass(frozen=True, slots=True)
class Change:
    """What the claim says, and what the context sentence says in its place, as each writes it."""

    claim: str
    context: str


def comparable(
    claim_keys: AbstractSet[str], sentence_keys: AbstractSet[str], changed: AbstractSet[str]
) -> bool:
    """Whether the claim otherwise says what the sentence says (most of its other words)."""
    rest = claim_keys - changed
    shared = rest & sentence_keys
    return len(shared) >= min(MIN_SHARED, len(rest)) and len(shared) >= SHARED_SHARE * len(rest)


def opposite(claim: str, sentence: str) -> Change | None:
    """A word of the claim whose opposite the sentence puts where the claim puts it, or None.

    The two words stand next to the same word, on the same side, within one part of a sentence
    split at commas and conjunctions ("partial refund" against "full refund"; "closed on public
    holidays" against "open on public holidays and closed on Mondays"). The claim must not hold
    the sentence's word, nor the sentence the claim's word next to one of the claim's words
    ("On Mondays the museum is closed" is said there); and neither text may hold a negation
    (which may turn either round: "not free" is "paid").
    """
    said = _parts(claim)
    if not any(key in ALTERNATIVES for key, _, _ in said):
        return None
    if _negative(claim) or _negative(sentence):
        return None
    ctx = _parts(sentence)
    claim_keys = {key for key, _, _ in said}
    sentence_keys = {key for key, _, _ in ctx}
    for i, (key, written, part) in enumerate(said):
        entry = ALTERNATIVES.get(key)
        if entry is None or _said_of(key, ctx, claim_keys):
            continue
        for side in (-1, 1):
            neighbour = _beside(said, i, side, part)
            if neighbour is None:
                continue
            for j, (word, _, ctx_part) in enumerate(ctx):
                other = _beside(ctx, j, -side, ctx_part) if word == neighbour else None
                if other is None:
                    continue
                found = ALTERNATIVES.get(other)
                if found is None or found[0] != entry[0] or found[1] == entry[1]:
                    continue
                context_written = ctx[j - side][1]
                if (
                    other not in claim_keys
                    and comparable(claim_keys, sentence_keys, {key})
                    and not _turns_at(claim, written, sentence, context_written)
                ):
                    return Change(written, context_written)
    return None


_BOUND = re.compile(
    r"\b(?P<prep>until|till|til|through|before|at|from|after|on|by)\s+"
    r"(?:about\s+|around\s+|roughly\s+)?(?P<when>\d{1,2}(?:[:.]\d{2})?|noon|midnight|[A-Za-z]+)",
    re.I,
)
_UNTIL = frozenset(("until", "till", "til", "through", "before"))
BOUND_WINDOW = 60
"""How far after the word, in characters, a time it holds until or changes at may be said."""


def _turns_at(claim: str, said: str, sentence: str, context: str) -> bool:
    """Whether the two words say one change of state, from either side.

    "open daily until 8 p.m." and "closes at 8 p.m." (or "closed until 9" and "opens at 9") say
    the same thing: a state that holds until a time is its opposite from that time. Where the
    claim's time is one the sentence does not give ("closes at 9 p.m."), the time is what
    differs, and the figure finding says so.
    """
    claimed, stated = _bounds(claim, said), _bounds(sentence, context)
    times = {when for _, when in stated}
    return any(
        until != other_until and (when == other_when or when not in times)
        for until, when in claimed
        for other_until, other_when in stated
    )


def _bounds(text: str, word: str) -> set[tuple[bool, str]]:
    """The times said shortly after a word: whether each is an end ("until"), and the time."""
    found = re.search(rf"\b{re.escape(word)}\b", text)
    if found is None:
        return set()
    window = re.split(r"[;,]", text[found.end() : found.end() + BOUND_WINDOW], maxsplit=1)[0]
    return {
        (match["prep"].lower() in _UNTIL, re.sub(r"[:.]00$", "", match["when"].lower()))
        for match in _BOUND.finditer(window)
    }


_PART_BREAK = re.compile(r"[,;:()]|\b(?:and|but|or|while|whereas)\b", re.I)


@lru_cache(maxsize=16384)
def _parts(text: str) -> tuple[tuple[str, str, int], ...]:
    """The text's content words (key, as written), each with the part of the text it is in.

    Cached: a context sentence is compared with every claim it is close to.
    """
    out: list[tuple[str, str, int]] = []
    for part, piece in enumerate(_PART_BREAK.split(text)):
        out.extend((key, written, part) for key, written in content_tokens(piece))
    return tuple(out)


def _beside(words: Sequence[tuple[str, str, int]], i: int, side: int, part: int) -> str | None:
    """The key of the word beside ``words[i]`` on one side, when it is in the same part."""
    k = i + side
    if not 0 <= k < len(words) or words[k][2] != part:
        return None
    return words[k][0]


def _said_of(key: str, ctx: Sequence[tuple[str, str, int]], claim_keys: set[str]) -> bool:
    """Whether the sentence uses the word of something the claim names.

    That is the word after it ("closed on Mondays"), or before it when it ends its part ("the
    museum is closed"): the word before is more often a subject several predicates share.
    """
    for j, (word, _, part) in enumerate(ctx):
        if word != key:
            continue
        after = _beside(ctx, j, 1, part)
        target = after if after is not None else _beside(ctx, j, -1, part)
        if target in claim_keys:
            return True
    return False


_NEGATIVE = re.compile(
    r"\b(?:unable|fail(?:s|ed|ing)? to|refus(?:e|es|ed|ing) to|lack(?:s|ed|ing)?)\b", re.I
)


def _negative(text: str) -> bool:
    """Whether a text holds a negation, or a verb that negates ("unable to", "fails to")."""
    return is_negated(text) or bool(_NEGATIVE.search(text))


def widened(claim: str, sentence: str) -> Change | None:
    """A scope the claim widens past the sentence's, or None.

    The claim says "worldwide" (or the like) where the sentence names a place the claim does not;
    "all" (or the like) where the sentence says "most" (or the like) of the same thing (a word
    both share follows each); "unlimited" where it says "up to" a number. The sentence must not
    widen anything itself.
    """
    said = tokens(claim)
    if WIDE_WORDS.isdisjoint(said) and WIDE_PLACE_WORDS.isdisjoint(said):
        return None  # nothing in the claim that could widen a scope
    context = tokens(sentence)
    if set(context) & (WIDE_WORDS | WIDE_PLACE_WORDS):
        return None
    claim_keys = {k for k, _ in content_tokens(claim)}
    sentence_keys = {k for k, _ in content_tokens(sentence)}
    place_words = sorted(set(said) & WIDE_PLACE_WORDS)
    if place_words:
        for match in _PLACE.finditer(sentence):
            place = match["place"]
            if not set(tokens(place)) & set(said) and comparable(
                claim_keys, sentence_keys, {word_key(w) for w in place_words}
            ):
                written = match.group(0)
                if written.endswith(".") and "." not in written[:-1]:
                    written = written[:-1]  # the sentence's full stop, not "U.S."
                return Change(place_words[0], written)
    wide = [i for i, w in enumerate(said) if w in WIDE_WORDS]
    if not wide or not comparable(claim_keys, sentence_keys, {word_key(said[i]) for i in wide}):
        return None
    if "unlimited" in said:
        limit = _UP_TO.search(sentence)
        if limit:
            return Change("unlimited", limit.group(0))
    for j, word in enumerate(context):
        if word not in NARROW_WORDS or (word == "most" and j and context[j - 1] in ("the", "at")):
            continue  # "the most basic" is a superlative, not a share
        if j + 1 < len(context) and context[j + 1] in _NOT_A_SCOPE:
            continue  # "requires only that ...": a restriction of a clause, not of a thing
        scope = _following(context, j)
        for i in wide:
            if scope & _following(said, i):
                return Change(said[i], word)
    return None


_NOT_A_SCOPE = frozenset("that if when because to be been is are was were".split())
SCOPE_WINDOW = 3
"""How many words after a quantifier may name what it quantifies ("all the original parts")."""


def _following(words: list[str], i: int) -> set[str]:
    """The word keys of the content words shortly after ``words[i]``."""
    return {
        word_key(w)
        for w in words[i + 1 : i + 1 + SCOPE_WINDOW]
        if w not in STOPWORDS and w not in NARROW_WORDS
    }


MAX_ROLE_GAP = 6
"""The most words between two names for the words between them to be their relation."""


def swapped(claim: str, sentence: str) -> Change | None:
    """Two names in the claim in the other roles than the sentence gives them.

    "Acme acquired Globex" against "Globex acquired Acme", or "Globex was acquired by Acme"
    against "Globex acquired Acme": a name is a run of capitalised words (the first word of the
    claim too, since both texts must hold it) or a word for a party (:data:`ROLE_WORDS`: "the
    tenant", "the landlord"). The words between the two names agree (but for the passive's "was"
    and "by"); the names come in the reverse order in the same voice, or in the same order where
    one text is passive ("by") and the other is not. "From Lisbon to Porto" against "from Porto
    to Lisbon" is a swap too.
    """
    said = _Words.of(claim)
    claimed = said.runs()
    if len(claimed) < 2:
        return None
    context = _Words.of(sentence)
    runs = [run for run in claimed if context.find(run) is not None]
    for one, other in itertools.combinations(runs, 2):
        i, j = said.find(one), said.find(other)
        assert i is not None and j is not None
        first, second = (one, other) if i < j else (other, one)
        i, j = min(i, j), max(i, j)
        k, m = context.find(first), context.find(second)
        assert k is not None and m is not None
        between_claim = said.lower[i + len(first) : j]
        turned = m < k
        between_context = (
            context.lower[m + len(second) : k] if turned else context.lower[k + len(first) : m]
        )
        if len(between_claim) > MAX_ROLE_GAP or len(between_context) > MAX_ROLE_GAP:
            continue
        passive = ("by" in between_claim) != ("by" in between_context)
        if turned == passive:
            continue  # the same roles: the same order in the same voice, or a passive turned
        if not _same_relation(between_claim, between_context, passive=passive) and not (
            turned and _directions(said, i, between_claim, context, m, between_context)
        ):
            continue
        shown = (
            context.written(m, k + len(first)) if turned else context.written(k, m + len(second))
        )
        return Change(said.written(i, j + len(second)), shown)
    return None


def _same_relation(claim: list[str], context: list[str], *, passive: bool) -> bool:
    """Whether the words between two names say the same relation, and not a symmetric one.

    With one text passive, its "was" and "by" are left out ("was bought by" is "bought").
    """
    skip = STOPWORDS if passive else _ARTICLES
    relation = {word_key(w) for w in claim if w not in skip}
    other = {word_key(w) for w in context if w not in skip}
    return bool(relation - STOPWORDS - SYMMETRIC) and relation == other


def _directions(
    said: _Words, i: int, between_claim: list[str], context: _Words, m: int, between: list[str]
) -> bool:
    """Whether both texts say "from" one name "to" the other."""
    return (
        i > 0
        and m > 0
        and said.lower[i - 1] == "from"
        and context.lower[m - 1] == "from"
        and between_claim == ["to"]
        and between == ["to"]
    )


ROLE_WORDS = frozenset(
    """
    buyer seller employer employee landlord tenant lender borrower creditor debtor sender
    recipient host guest teacher student doctor patient parent child winner loser plaintiff
    defendant
    """.split()
)
"""Words for the parties of a relation, written in lower case: their roles can be swapped as
names' can ("the tenant must pay the landlord")."""


_ARTICLES = frozenset(("the", "a", "an"))
SYMMETRIC = frozenset(
    word_key(w)
    for w in """
    met meet meets married marry marries faced face faces played play plays drew draw draws tied
    tie ties merged merge merges partnered partner partners fought fight fights versus vs like
    unlike joined join
    """.split()
)
"""Relations that read the same both ways round ("A met B" is "B met A"): never a swap."""


@dataclass(frozen=True)
class _Words:
    """A text's words, lower case, with where each is written."""

    text: str
    lower: list[str]
    spans: list[tuple[int, int]]
    capitalised: list[bool]

    @classmethod
    def of(cls, text: str) -> _Words:
        """The words of a text (cached: a context sentence is read for every claim near it)."""
        return _words_of(text)

    @classmethod
    def read(cls, text: str) -> _Words:
        found = list(_WORD.finditer(text))
        return cls(
            text,
            [_POSSESSIVE.sub("", m.group(0).lower()) for m in found],
            [m.span() for m in found],
            [m.group(0)[:1].isupper() for m in found],
        )

    def runs(self) -> list[tuple[str, ...]]:
        """The runs of capitalised words that are not stopwords (``Orion Labs``), and party words.

        A word for a party (``tenant``) is a run of its own; a weekday or a month is a date, never
        a party ("April 1, 1976 by Steve Jobs" says when, not who did what to whom).
        """
        out: list[tuple[str, ...]] = []
        current: list[str] = []
        for word, upper in zip(self.lower, self.capitalised, strict=True):
            if upper and word not in STOPWORDS and word not in ROLE_WORDS and word not in CALENDAR:
                current.append(word)
                continue
            if current:
                out.append(tuple(current))
            current = []
            if word in ROLE_WORDS:
                out.append((word,))
        if current:
            out.append(tuple(current))
        return list(dict.fromkeys(out))

    def find(self, run: tuple[str, ...]) -> int | None:
        """Where the run first occurs, as a word index."""
        for i in range(len(self.lower) - len(run) + 1):
            if tuple(self.lower[i : i + len(run)]) == run:
                return i
        return None

    def written(self, start: int, end: int) -> str:
        """Words ``start`` to ``end`` as the text writes them."""
        return self.text[self.spans[start][0] : self.spans[end - 1][1]]


_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:[.,]\d+)*")
_POSSESSIVE = re.compile(r"['\u2019]s?$")


@lru_cache(maxsize=16384)
def _words_of(text: str) -> _Words:
    return _Words.read(text)
