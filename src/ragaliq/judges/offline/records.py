"""Structured records as context: a JSON object read as fields, not as a bag of words.

A RAG system that describes a product, a place or an account from a record (a JSON object in the
context) hallucinates in ways word overlap cannot see: it says "offers outdoor seating" when the
record says ``"OutdoorSeating": false``, or talks about a field the record leaves ``null``. This
module reads any record from its own keys and values, with no knowledge of one dataset's names:

- **keys as words**: ``OutdoorSeating`` reads as "outdoor seating", ``wifi_available`` as "wifi"
  (words such as "has", "good for" or "available" are dropped, and so is a first word that
  several sibling keys share, such as ``Restaurants`` in ``RestaurantsTakeOut`` and
  ``RestaurantsReservations``); a key inside an object of flags also needs its parent's words in
  the claim when it is one word (``"BusinessParking": {"street": true}`` is "street parking",
  not "State Street");
- **values**: a claim that mentions a key is checked against its value, with the claim's negation
  read from its clause: a flag (``false``, ``"no"``, ``"none"``), a ``null`` (the record does not
  say), or a figure said beside the key's words ("a 4.5-star rating" against ``"stars": 4.0``);
- **a key the record lacks**: a claim that the place "offers", "has" or "provides" something the
  record names nowhere (not in a key, not in a value) is unknown;
- **lists**: "three reviews" is checked against the length of a list whose key says "reviews";
- **weeks**: a value mapping day names to time ranges is checked by :mod:`.schedule`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ragaliq.judges.offline.schedule import Span, Week, check_week, parse_week
from ragaliq.text.words import STOPWORDS, figures, word_key

__all__ = ["Record", "RecordFindings", "parse_record"]

_MIN_PROSE_WORDS = 8
"""A string field at least this long is free text (a review, a description), read as prose."""
NEAR_PREFIX = 5
"""Two words sharing this many first letters name the same thing (``accessible``, ``access``)."""
NUMBER_WINDOW = 3
"""A figure belongs to a key when one of the key's words is this close to it in the claim."""
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
_NULL_VALUES = frozenset({"", "null", "none", "unknown", "n/a", "na"})
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
_LIST_ITEM = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or|as well as)\s+", re.IGNORECASE)
_LIST_LEAD = re.compile(
    r"^(?:(?:it|they|the \w+|this \w+)\s+)?(?:(?:also|does|do|not|n't)\s+)*"
    r"(?:offers?|provides?|has|have|features?|boasts?|accepts?|allows?|includes?|serves?)?\s*"
    r"(?:(?:a|an|the|free|complimentary|its|their|both|some|several|various)\s+)*",
    re.IGNORECASE,
)
_OFFERS = re.compile(
    r"\b(?:offers?|provides?|has|have|features?|boasts?|accepts?|includes?|serves?|allows?)\s+"
    r"(?:(?:a|an|the|free|complimentary|its|their|also|both)\s+)?"
    r"(?P<thing>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)"
    r"(?=\s*(?:[,.;]|$)|\s+(?:and|or)\s+[\w'-]+\s*(?:[,.;]|$))",
    re.IGNORECASE,
)
"""A claim that the place has a thing (``offers delivery``, ``accepts cash and cards``); a word
before ``and`` that shares the next word's noun (``indoor and outdoor seating``) is left out."""
MAX_ITEM_WORDS = 2
"""A list item of at most this many content words is a thing (``delivery``, ``happy hour``)."""
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:\.\d+)?")
_KEY_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_COUNT_WORDS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten".split())
}
_COUNT = re.compile(
    r"\b(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:\w+\s+)?(?P<noun>\w+)",
    re.IGNORECASE,
)


@dataclass
class RecordFindings:
    """What a record says about one claim; each entry is a sentence a person can read."""

    confirmed: list[str] = field(default_factory=list)
    contradicted: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    """Fields the claim talks about that the record leaves null."""
    absent: list[str] = field(default_factory=list)
    """Things the claim says the place has that the record names nowhere."""
    evidence: list[str] = field(default_factory=list)
    """Quotes from the record (``"OutdoorSeating": false``) behind the findings."""

    @property
    def empty(self) -> bool:
        return not (self.confirmed or self.contradicted or self.unknown or self.absent)


@dataclass(frozen=True, slots=True)
class _Key:
    """How a key reads: the words a claim must use, and the key written as one word."""

    words: frozenset[str]
    """Word keys (``ragaliq.text.words.word_key``) the claim must all use; empty when only the
    joined form can match."""
    joined: str
    """The key's distinctive words run together, lower case: ``takeout``, ``wifi``."""
    name: str
    """How a reason names it: ``outdoor seating``."""


@dataclass(frozen=True, slots=True)
class _Field:
    key: _Key
    parent: _Key | None
    """For a field inside an object of flags, that object's key: the claim must use it too."""
    value: Any
    quote: str
    """How the field reads in the JSON: ``"street": false``."""


@dataclass(frozen=True)
class Record:
    """A JSON object from the context, read as fields."""

    fields: tuple[_Field, ...]
    """Every scalar field (flags, nulls, strings, numbers) and every object of flags."""
    lists: tuple[tuple[_Key, int, str], ...]
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

    def check(self, claim: str) -> RecordFindings:
        """The record's fields that the claim talks about, and whether they agree."""
        findings = RecordFindings()
        clauses = [c for c in _CLAUSE.split(claim) if c and c.strip()]
        named_children = {
            id(f.parent) for f, _ in _mentions(self.fields, _tokens(claim)) if f.parent is not None
        }
        for clause in clauses:
            tokens = _tokens(clause)
            matched = _mentions(self.fields, tokens)
            children = {id(f.parent) for f, _ in matched if f.parent is not None}
            for found, (start, end) in matched:
                if isinstance(found.value, dict) and id(found.key) in children:
                    continue  # "street parking": the child says more than "parking"
                negated = _negated_at(clause, start, end)
                if isinstance(found.value, dict) and (
                    (negated and id(found.key) in named_children)
                    or (not negated and not _offered(clause, found.key.name))
                ):
                    continue  # "no on-site parking, but street parking", "a nice atmosphere"
                self._check_field(found, clause, negated, findings)
            if matched:
                self._check_list_mates(clause, findings)
            self._check_offers(clause, findings)
            self._check_figures(clause, tokens, findings)
        for week in self.weeks:
            check_week(week, clauses, _noter(findings))
        self._check_counts(claim, findings)
        return findings

    def _check_field(
        self, found: _Field, clause: str, negated: bool, findings: RecordFindings
    ) -> None:
        state = _truth(found.value, clause)
        name = found.key.name if found.parent is None else f"{found.key.name} {found.parent.name}"
        if state is None:
            if found.key.words and found.key.words <= self.said:
                return  # the record's text talks about it: leave it to word overlap
            if (
                found.value is None
                or isinstance(found.value, dict)
                or (isinstance(found.value, str) and found.value.strip().lower() in _NULL_VALUES)
            ):
                if _UNSPECIFIED.search(clause):
                    findings.confirmed.append(f"the record does not say anything about {name}")
                else:
                    findings.unknown.append(f"the record has a null field about {name}")
                    findings.evidence.append(found.quote)
            return
        findings.evidence.append(found.quote)
        says = "has no" if negated else "has"
        if state != negated:
            findings.confirmed.append(f"the record agrees that it {says} {name}")
        else:
            findings.contradicted.append(
                f"the claim says it {says} {name}, but the record has {found.quote}"
            )

    def _check_list_mates(self, clause: str, findings: RecordFindings) -> None:
        """Items listed beside a field of the record that the record names nowhere.

        "offers outdoor seating, takeout, and delivery" lists what the record has fields for; an
        item of that list with no key or value in the record ("delivery") is a field it lacks.
        """
        if _UNSPECIFIED.search(clause):
            return
        for item in _LIST_ITEM.split(clause):
            words = [
                w
                for w in _TOKEN.findall(_LIST_LEAD.sub("", item.strip()))
                if w.lower() not in STOPWORDS and not w[0].isdigit()
            ]
            if not words or len(words) > MAX_ITEM_WORDS or not any(w.islower() for w in words):
                continue
            if any(self._names(word_key(w.lower()), w) for w in words):
                continue
            findings.absent.append(f"the record has no field about {' '.join(words)}")

    def _check_offers(self, clause: str, findings: RecordFindings) -> None:
        """Something the claim says the place has that the record names nowhere."""
        if _UNSPECIFIED.search(clause):
            return
        for match in _OFFERS.finditer(clause):
            words = [w for w in _TOKEN.findall(match["thing"]) if w.lower() not in STOPWORDS]
            if not words or any(self._names(word_key(w.lower()), w) for w in words):
                continue
            thing = " ".join(words)
            if not any(thing in a for a in findings.absent):
                findings.absent.append(f"the record has no field about {thing}")

    def _names(self, key: str, word: str) -> bool:
        lower = word.lower()
        return (
            key in self.vocabulary
            or lower in self.vocabulary
            or lower.replace("-", "") in self.vocabulary
            or (len(key) >= NEAR_PREFIX and key[:NEAR_PREFIX] in self.prefixes)
        )

    def _check_figures(self, clause: str, tokens: list[_Token], findings: RecordFindings) -> None:
        stated = figures(clause)
        if not stated:
            return
        numeric = [
            f
            for f in self.fields
            if isinstance(f.value, int | float) and not isinstance(f.value, bool) and f.key.words
        ]
        for value in stated:
            if re.search(rf"\bout of\s+{re.escape(value)}\b", clause):
                continue  # the scale of a rating, not a figure of the record
            near = _near_figure(value, tokens)
            owners = [f for f in numeric if f.key.words & near]
            if not owners:
                continue
            if any(_same_number(f.value, value) for f in owners):
                findings.confirmed.append(f"the record has {owners[0].key.name} {value}")
                findings.evidence.append(owners[0].quote)
            elif float(value) <= max(float(f.value) for f in owners) * 2:
                shown = ", ".join(sorted({f"{f.value:g}" for f in owners}))
                findings.contradicted.append(
                    f"the claim says {owners[0].key.name} {value}, but the record has {shown}"
                )
                findings.evidence.append(owners[0].quote)

    def _check_counts(self, claim: str, findings: RecordFindings) -> None:
        for match in _COUNT.finditer(claim):
            raw = match["n"].lower()
            count = int(raw) if raw.isdigit() else _COUNT_WORDS[raw]
            if not match["noun"].lower().endswith("s"):
                continue  # "one negative review" is about one of them, not how many there are
            noun = word_key(match["noun"].lower())
            for key, length, _quote in self.lists:
                if noun not in key.words:
                    continue
                before = claim[max(0, match.start() - 12) : match.start()].lower()
                if before.endswith("based on "):
                    findings.unknown.append(
                        f"the record does not say how many {key.name} a figure is based on"
                    )
                elif count == length:
                    findings.confirmed.append(f"the record lists {length} {key.name}")
                else:
                    findings.contradicted.append(
                        f"the claim counts {count} {key.name}, but the record lists {length}"
                    )


def _noter(findings: RecordFindings):  # type: ignore[no-untyped-def]
    def note(wrong: list[str], bad: str, good: str, quote: str) -> None:
        if quote:
            findings.evidence.append(quote)
        if wrong:
            days = ", ".join(d.capitalize() for d in wrong if d)
            findings.contradicted.append(
                f"the record's hours say {bad}" + (f" on {days}" if days else "")
            )
        else:
            findings.confirmed.append(f"the record's hours agree ({good})")

    return note


def _offered(clause: str, name: str) -> bool:
    """Whether the clause says the thing itself is offered.

    "offers parking" and "parking is available" do; "a nice atmosphere" does not.
    """
    words = r"\s+".join(re.escape(w) for w in name.split()[-1:])
    return bool(
        re.search(
            rf"\b(?:offers?|provides?|has|have|features?|with)\s+(?:free\s+|ample\s+)?{words}",
            clause,
            re.IGNORECASE,
        )
        or re.search(rf"{words}\s+(?:is|are)\s+(?:also\s+)?available", clause, re.IGNORECASE)
    )


def _same_number(value: float, stated: str) -> bool:
    try:
        return abs(float(value) - float(stated)) < 1e-9
    except ValueError:
        return False


def _near_figure(value: str, tokens: list[_Token]) -> frozenset[str]:
    """Word keys within NUMBER_WINDOW tokens of where the figure is stated."""
    near: set[str] = set()
    for i, token in enumerate(tokens):
        if token.key == value:
            near.update(t.key for t in tokens[max(0, i - NUMBER_WINDOW) : i + NUMBER_WINDOW + 1])
    return frozenset(near)


@dataclass(frozen=True, slots=True)
class _Token:
    key: str
    """The word key (``ragaliq.text.words.word_key``), or the number normalised."""
    raw: str
    """The word in lower case, hyphens dropped."""
    start: int
    end: int


def _tokens(clause: str) -> list[_Token]:
    """The clause's words with their spans; a hyphenated word also as its pieces."""
    out: list[_Token] = []
    for m in _TOKEN.finditer(clause):
        lower = m.group(0).lower().replace("\u2019", "'")
        if lower[0].isdigit():
            number = lower.rstrip("0").rstrip(".") if "." in lower else lower
            out.append(_Token(number, number, *m.span()))
            continue
        out.append(_Token(word_key(lower), lower.replace("-", ""), *m.span()))
        if "-" in lower:
            out.extend(
                _Token(word_key(piece), piece, *m.span()) for piece in lower.split("-") if piece
            )
    return out


def _mentions(fields: tuple[_Field, ...], tokens: list[_Token]) -> list[tuple[_Field, Span]]:
    """The fields the clause names, each with where it names it.

    A one-word field inside an object of flags is named with its parent's words ("street
    parking") or beside a sibling ("on the street or in the lot", "casual and romantic"); a longer
    key is specific enough on its own ("battery backup").
    """
    spots = _Spots(tokens)
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
    return out


class _Spots:
    """Where each word, near word and run of up to three words (joined) first occurs in a clause."""

    def __init__(self, tokens: list[_Token]) -> None:
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

    def find(self, key: _Key) -> Span | None:
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
        return None  # a figure: checked as a figure, not as a flag
    text = str(value).strip().strip("'\"").lower()
    if text.startswith("u'"):
        text = text[2:]
    if text in _NULL_VALUES:
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


def _key_parts(key: str) -> list[str]:
    return [part.lower() for part in _KEY_PART.findall(key)]


def _read_key(parts: list[str], prefixes: frozenset[str]) -> _Key:
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
    return _Key(words=words, joined=joined, name=name)


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
        self.fields: list[_Field] = []
        self.lists: list[tuple[_Key, int, str]] = []
        self.weeks: list[Week] = []
        self.prose: list[str] = []
        self.facts: list[str] = []
        self.vocabulary: set[str] = set()
        self.said: set[str] = set()

    def walk(self, node: dict[str, Any], parent: _Key | None, prefixes: frozenset[str]) -> None:
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
                    self.fields.append(_Field(key, parent, value, quote[:200]))
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
                self.fields.append(_Field(key, parent, value, quote))
                self.leaf(name, value)

    def leaf(self, name: str, value: Any) -> None:
        if isinstance(value, str):
            said = {word_key(t.lower()) for t in _TOKEN.findall(value) if not t[0].isdigit()}
            self.said |= said
            self.vocabulary |= said
            self.vocabulary.update(t.lower().replace("-", "") for t in _TOKEN.findall(value))
            if len(value.split()) >= _MIN_PROSE_WORDS:
                self.prose.append(value)
                return
        words = " ".join(_key_parts(name))
        if isinstance(value, bool) or value is None:
            self.facts.append(words)
        else:
            self.facts.append(f"{words}: {value}")


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
    walker.walk(data, None, _shared_prefixes(list(_all_keys(data))))
    vocabulary = frozenset(walker.vocabulary)
    return Record(
        fields=tuple(walker.fields),
        lists=tuple(walker.lists),
        weeks=tuple(walker.weeks),
        prose=tuple(walker.prose),
        facts=tuple(walker.facts),
        said=frozenset(walker.said),
        vocabulary=vocabulary,
        prefixes=frozenset(w[:NEAR_PREFIX] for w in vocabulary if len(w) >= NEAR_PREFIX),
    )
