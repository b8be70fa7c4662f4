"""Where a claim names a record's fields, and whether it denies them.

A claim is read clause by clause. A field is named by its key's words (each, or near: ``access``
for ``accessible``) or by the key run together (``takeout``, ``wifi``); a one-word field inside
an object of flags needs its parent's words or a sibling beside it (``"BusinessParking":
{"street": true}`` is "street parking", not "State Street"). A negation denies what it governs:
one before the mention in its comma segment, one right after it through its verb, or one that
an earlier segment of a list carries on.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ragaliq.offline.opposites import alternative
from ragaliq.offline.record_fields import (
    NEAR_PREFIX,
    TOKEN,
    Field,
    Key,
    KeyLookup,
    name_value,
)
from ragaliq.offline.schedule import Span
from ragaliq.text.words import word_key

__all__ = [
    "CLAUSE",
    "NUMBER_WINDOW",
    "Token",
    "clause_tokens",
    "mentions",
    "near_figure",
    "negated_at",
    "stated_otherwise",
]

NUMBER_WINDOW = 3
"""A figure belongs to a key when one of the key's words is this close to it in the claim."""
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
CLAUSE = re.compile(
    r"[;!?]|[.:](?!\d)|,\s++with\b|,?(?<!\s)\s++(?:but|however|although|though|while|whereas|yet)\b"
    r"|\band\s+(?=(?:it|its|they|their|the|there|this|all|also|is|are|has|have|offers?|provides?|"
    r"accepts?|allows?|features?|serves?|does|do|customers|guests|visitors)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Token:
    key: str
    """The word key (``ragaliq.text.words.word_key``), or the number normalised."""
    raw: str
    """The word in lower case, hyphens dropped."""
    start: int
    end: int


def clause_tokens(clause: str) -> list[Token]:
    """The clause's words with their spans; a hyphenated word also as its pieces."""
    out: list[Token] = []
    for m in TOKEN.finditer(clause):
        lower = m.group(0).lower().replace("\u2019", "'")
        if lower[0].isdigit():
            number = lower.rstrip("0").rstrip(".") if "." in lower else lower
            out.append(Token(number, number, *m.span()))
            continue
        out.append(Token(word_key(lower), lower.replace("-", ""), *m.span()))
        if "-" in lower:
            out.extend(
                Token(word_key(piece), piece, *m.span()) for piece in lower.split("-") if piece
            )
    return out


def mentions(
    fields: tuple[Field, ...], tokens: list[Token], lookup: KeyLookup | None = None
) -> tuple[list[tuple[Field, Span]], int]:
    """The fields the clause names, each with where it names it; and the work it took.

    A one-word field inside an object of flags is named with its parent's words ("street
    parking") or beside a sibling ("on the street or in the lot", "casual and romantic"); a longer
    key is specific enough on its own ("battery backup"). With ``lookup`` (the fields' keys by
    their words), only the fields whose keys the clause uses are read.
    """
    spots = _Spots(tokens)
    visited = len(tokens)
    if lookup is not None:
        ids, visited = lookup.find(spots.words, spots.joined)
        fields = tuple(fields[i] for i in ids)
    visited += len(fields)
    own = [(f, spot) for f in fields if (spot := spots.find(f.key)) is not None]
    siblings = Counter(id(f.parent) for f, _ in own if f.parent is not None)
    parents: dict[int, bool] = {}
    out = []
    for found, spot in own:
        parent = found.parent
        if parent is not None and len(found.key.name.split()) < 2:
            if id(parent) not in parents:
                parents[id(parent)] = spots.find(parent) is not None
            if not parents[id(parent)] and siblings[id(parent)] < 2:
                continue
        out.append((found, spot))
    return out, visited


class _Spots:
    """Where each word, near word and run of up to three words (joined) first occurs in a clause."""

    def __init__(self, tokens: list[Token]) -> None:
        self.joined: dict[str, Span] = {}
        self.words: dict[str, Span] = {}
        self.prefixes: dict[str, Span] = {}
        for i, token in enumerate(tokens):
            span = (token.start, token.end)
            self.words.setdefault(token.key, span)
            if len(token.key) >= NEAR_PREFIX:
                self.prefixes.setdefault(token.key[:NEAR_PREFIX], span)
            run = ""
            for later in tokens[i : i + 3]:
                run += later.raw
                self.joined.setdefault(run, (token.start, later.end))

    def find(self, key: Key) -> Span | None:
        """Where the clause names the key: its words run together, or each of its words."""
        spot = self.joined.get(key.joined)
        if spot is not None or not key.words:
            return spot
        spots = []
        for word in key.words:
            hit = self.words.get(word)
            if hit is None and len(word) >= NEAR_PREFIX:
                hit = self.prefixes.get(word[:NEAR_PREFIX])
            if hit is None:
                return None
            spots.append(hit)
        return min(spots)


def near_figure(value: str, tokens: list[Token]) -> frozenset[str]:
    """Word keys within NUMBER_WINDOW tokens of where the figure is stated."""
    near: set[str] = set()
    for i, token in enumerate(tokens):
        if token.key == value:
            near.update(t.key for t in tokens[max(0, i - NUMBER_WINDOW) : i + NUMBER_WINDOW + 1])
    return frozenset(near)


_NEGATED_AFTER = re.compile(
    r"[\s\w-]{0,24}?\b(?:is|are|was|were|does|do|did)(?:\s+(?:also|still|currently|usually))?"
    r"(?:\s+not\b|n't\b|\s+unavailable\b)|\s++(?:not available|unavailable)\b",
    re.IGNORECASE,
)
"""A negation right after the mention denies it through its verb (``Wi-Fi is not available``);
one after a conjunction is about the next item (``casual and not trendy``)."""


def negated_at(clause: str, start: int, end: int) -> bool:
    """Whether the clause denies the thing mentioned at ``clause[start:end]``.

    A negation before it in its comma segment denies it (``does not offer Wi-Fi``), unless a
    positive verb comes between (``no Wi-Fi but has a patio``), and so does one right after it
    through its verb (``Wi-Fi is not available``, not ``casual and not trendy``); a list
    continues a negation from earlier segments (``no garage, street, or valet parking``) until a
    segment brings its own verb, unless that segment starts with "or" after a negated one ("does
    not provide valet parking, or offer reservations").
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
    if _OR_NEXT.match(clause, seg_start) and _negated_before(clause, segments, here):
        return True  # "does not provide valet parking, or offer reservations"
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


_OR_NEXT = re.compile(r"\s*+(?:or|nor)\b", re.IGNORECASE)


def _negated_before(clause: str, segments: list[tuple[int, int]], here: int) -> bool:
    """Whether the comma segment before ``here`` holds a negation."""
    if here == 0:
        return False
    text = clause[segments[here - 1][0] : segments[here - 1][1]]
    return any(not _NOT_NEGATION.match(text, m.start()) for m in _NEGATION.finditer(text))


OPPOSITE_WINDOW = 5
"""How many words from a field's mention a word may be to say what the field's value is."""
_NAMED = re.compile(
    r"\s*+(?:(?:of|is|was|being|called|named)\s++|[:,]\s*+)?(?:the\s++)?"
    r"(?P<name>[A-Z][\w'\u2019&-]*+(?:\s++[A-Z][\w'\u2019&-]*+)*)"
)


@dataclass(frozen=True, slots=True)
class Stated:
    """What a claim says a field's value is, as written, and whether the record agrees."""

    text: str
    agrees: bool


def stated_otherwise(
    value: object, clause: str, span: Span, known: frozenset[str]
) -> Stated | None:
    """What the clause says the value of the field mentioned at ``clause[start:end]`` is.

    For a name (``"city": "Cork"``), the name written right after the mention ("the city of
    Dublin", "city: Cork"), unless the record names it elsewhere (``known``: the record's
    words, lower case); for a word with an opposite (``"WiFi": "free"``), that word or its
    opposite (:func:`.opposites.alternative`) closest to the mention ("paid WiFi"). None when
    the clause says neither.
    """
    start, end = span
    name = name_value(value)
    if name is not None:
        match = _NAMED.match(clause, end)
        if match is None:
            return None
        said = match["name"]
        claimed = {w.lower() for w in TOKEN.findall(said)}
        if claimed & {w.lower() for w in TOKEN.findall(name)}:
            return Stated(said, agrees=True)
        if claimed & known:
            return None  # a name the record gives elsewhere: another field's, not this one's
        return Stated(said, agrees=False)
    if not isinstance(value, str) or " " in value.strip():
        return None
    own = alternative(word_key(value.strip().strip("'\"").lower()))
    if own is None:
        return None
    found = list(TOKEN.finditer(clause))
    mention = [i for i, m in enumerate(found) if start <= m.start() < end]
    if not mention:
        return None
    near = [
        (min(abs(i - k) for k in mention), m.group(0), entry)
        for i, m in enumerate(found)
        if i not in mention
        and (entry := alternative(word_key(m.group(0).lower()))) is not None
        and entry[0] == own[0]
    ]
    near = [n for n in near if n[0] <= OPPOSITE_WINDOW]
    if not near:
        return None
    _, written, entry = min(near, key=lambda n: n[0])
    return Stated(written, agrees=entry[1] == own[1])
