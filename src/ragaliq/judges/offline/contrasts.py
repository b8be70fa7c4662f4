"""Where a claim says otherwise than the context sentence closest to it, word for word.

Each check compares a claim with one context sentence (the one holding most of its words) and
returns what it found as both texts write it, or None. None of them reads a paraphrase: each looks
for one documented kind of change in a sentence that otherwise says the same thing.

- :func:`opposite`: a word replaced by its opposite from :data:`OPPOSITES` ("a partial refund"
  against "a full refund"), both next to a word the two share;
- :func:`requirement_flip`: a requirement denied ("you do not need the receipt" against "returns
  must include the receipt"), or the other way round;
- :func:`widened`: a scope widened ("free worldwide" against "free in the US", "all customers"
  against "most customers", "unlimited" against "up to 5");
- :func:`swapped`: two names in swapped roles ("Acme acquired Globex" against "Globex acquired
  Acme"), not a passive ("Globex was acquired by Acme").
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from ragaliq.text.words import STOPWORDS, content_tokens, is_negated, names, tokens, word_key

__all__ = [
    "NARROW_WORDS",
    "OPPOSITES",
    "WIDE_PLACE_WORDS",
    "WIDE_WORDS",
    "opposite",
    "requirement_flip",
    "swapped",
    "widened",
]

OPPOSITES = """
full | partial
free | paid / chargeable
included | excluded
include | exclude
allowed / permitted | prohibited / forbidden / banned
accepted | rejected / declined / refused
approved | rejected / denied
win / won | lose / lost
winner | loser
victory | defeat
increase / increased / grow / grew | decrease / decreased / decline / shrink / shrank
rise / rose | fall / fell / drop / dropped
gain | loss
profit | loss
surplus | deficit
higher / highest | lower / lowest
maximum | minimum
early / earlier / earliest | late / later / latest
open / opened | closed / shut
online | offline
public | private
internal | external
domestic | international / foreign
buyer | seller
arrival / arrive | departure / depart
entry / entrance | exit
enable / enabled | disable / disabled
active | inactive
available | unavailable
valid | invalid / expired
legal | illegal
possible | impossible
likely | unlikely
safe | unsafe / dangerous
secure | insecure
success / succeeded / successful | failure / failed / unsuccessful
true | false
correct | incorrect
agree / agreed | disagree / disagreed
support / supported | oppose / opposed
majority | minority
upper | lower
inside / indoor / indoors | outside / outdoor / outdoors
north / northern | south / southern
east / eastern | west / western
male | female
men / man | women / woman
boy / boys | girl / girls
husband | wife
father | mother
son | daughter
brother | sister
new | used / secondhand / refurbished
hot | cold
warm | cool
heating | cooling
wet | dry
strong | weak
fast / faster / quick / quicker | slow / slower
high | low
long / longer | short / shorter
large / larger / big / bigger | small / smaller
wide / wider | narrow / narrower
cheap / cheaper | expensive
rich | poor
easy / easier | difficult / hard / harder
simple | complex / complicated
positive | negative
guilty / convicted | innocent / acquitted
alive | dead
add / added | remove / removed
connect / connected | disconnect / disconnected
lock / locked | unlock / unlocked
wired | wireless
manual / manually | automatic / automatically
analog / analogue | digital
mandatory / compulsory / required | optional / voluntary
permanent / permanently | temporary / temporarily
refundable | nonrefundable / non-refundable
best | worst
better | worse
upgrade | downgrade
upload | download
inbound / incoming | outbound / outgoing
employer | employee
landlord | tenant
lender | borrower
credit | debit
deposit | withdrawal
income | expense
urban | rural
morning | afternoon | evening
spring | summer | autumn | winter
hourly | daily | weekly | monthly | quarterly | annual / annually / yearly
red | green | blue | yellow | black | white | orange | purple | grey / gray
"""
"""Words that exclude one another, one group per line (alternatives split by ``|``, spellings of
one alternative by ``/``): general enough for product, policy and news text. A claim using one
alternative where the closest context sentence uses another, next to a word both share on the
same side, says the opposite of the context. Converses are left out ("buy" and "sell", "import"
and "export" say the same thing from the other side)."""


def _groups(table: str) -> dict[str, tuple[int, int]]:
    """Each word key to its group and its alternative within the group."""
    found: dict[str, tuple[int, int]] = {}
    for group, line in enumerate(line for line in table.splitlines() if line.strip()):
        for alternative, spellings in enumerate(line.split("|")):
            for spelling in spellings.split("/"):
                found.setdefault(word_key(spelling.strip().lower()), (group, alternative))
    return found


_ALTERNATIVE = _groups(OPPOSITES)
NEAR = 1
"""How many content words apart an opposite and the word both texts share may be (on the same
side: "partial refund" and "full refund")."""

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


def _comparable(claim_keys: set[str], sentence_keys: set[str], changed: set[str]) -> bool:
    """Whether the claim otherwise says what the sentence says (most of its other words)."""
    rest = claim_keys - changed
    shared = rest & sentence_keys
    return len(shared) >= min(MIN_SHARED, len(rest)) and len(shared) >= SHARED_SHARE * len(rest)


def opposite(claim: str, sentence: str) -> Change | None:
    """A word of the claim whose opposite the sentence uses in its place, or None.

    The claim must not use the sentence's word, nor the sentence the claim's; neither text may
    hold a negation (which may turn either round: "not free" is "paid"); and each word must stand
    next to a word both share, on the same side ("partial refund", "full refund").
    """
    if _negative(claim) or _negative(sentence):
        return None
    said = content_tokens(claim)
    ctx = content_tokens(sentence)
    claim_keys = {k for k, _ in said}
    sentence_keys = {k for k, _ in ctx}
    for i, (key, written) in enumerate(said):
        entry = _ALTERNATIVE.get(key)
        if entry is None or key in sentence_keys:
            continue
        for j, (other, other_written) in enumerate(ctx):
            found = _ALTERNATIVE.get(other)
            if found is None or found[0] != entry[0] or found[1] == entry[1]:
                continue
            if other in claim_keys:
                continue
            if _share_a_side([k for k, _ in said], i, [k for k, _ in ctx], j) and _comparable(
                claim_keys, sentence_keys, {key}
            ):
                return Change(written, other_written)
    return None


_NEGATIVE = re.compile(
    r"\b(?:unable|fail(?:s|ed|ing)? to|refus(?:e|es|ed|ing) to|lack(?:s|ed|ing)?)\b", re.I
)


def _negative(text: str) -> bool:
    """Whether a text holds a negation, or a verb that negates ("unable to", "fails to")."""
    return is_negated(text) or bool(_NEGATIVE.search(text))


def _share_a_side(first: list[str], i: int, second: list[str], j: int) -> bool:
    """Whether ``first[i]`` and ``second[j]`` have the same word beside them on one side."""
    before = set(first[max(0, i - NEAR) : i]) & set(second[max(0, j - NEAR) : j])
    after = set(first[i + 1 : i + 1 + NEAR]) & set(second[j + 1 : j + 1 + NEAR])
    return bool(before or after)


_REQUIRED = re.compile(
    r"\b(?:must(?!\s+not\b|n't)|required|requires?|mandatory|compulsory|obligatory|necessary|"
    r"needs?\s+to|ha(?:ve|s)\s+to)\b",
    re.I,
)
_NOT_REQUIRED = re.compile(
    r"\b(?:(?:do|does|did|will)(?:\s+not|n't)\s+(?:\w+\s+)?(?:need|have\s+to|require)|"
    r"(?:don't|doesn't|didn't|won't)\s+(?:\w+\s+)?(?:need|have\s+to|require)|no\s+need|"
    r"need\s+not|needn't|not\s+(?:required|necessary|mandatory|needed|obligatory|compulsory)|"
    r"optional|without\s+(?:needing|having\s+to))\b",
    re.I,
)
_REQUIREMENT_KEYS = frozenset(
    word_key(w) for w in "need needs required require requires necessary mandatory".split()
) | frozenset(("optional", "compulsory", "obligatory"))


def _requirement(text: str) -> tuple[int, str]:
    """+1 when the text requires something, -1 when it says it is not needed, else 0.

    A text that does both ("you must include it, unless you do not have to") is 0.
    """
    text = text.replace("\u2019", "'")
    denied = _NOT_REQUIRED.search(text)
    required = _REQUIRED.search(_NOT_REQUIRED.sub(" ", text))
    if denied and not required:
        return -1, denied.group(0)
    if required and not denied:
        return 1, required.group(0)
    return 0, ""


def requirement_flip(claim: str, sentence: str) -> Change | None:
    """A requirement the claim denies and the sentence states, or the other way round."""
    said, said_words = _requirement(claim)
    context, context_words = _requirement(sentence)
    if said == 0 or said != -context:
        return None
    claim_keys = {k for k, _ in content_tokens(claim)} - _REQUIREMENT_KEYS
    sentence_keys = {k for k, _ in content_tokens(sentence)} - _REQUIREMENT_KEYS
    if not claim_keys or not _comparable(claim_keys, sentence_keys, set()):
        return None
    return Change(said_words, context_words)


def widened(claim: str, sentence: str) -> Change | None:
    """A scope the claim widens past the sentence's, or None.

    The claim says "worldwide" (or the like) where the sentence names a place the claim does not;
    "all" (or the like) where the sentence says "most" (or the like) of the same thing (a word
    both share follows each); "unlimited" where it says "up to" a number. The sentence must not
    widen anything itself.
    """
    said = tokens(claim)
    context = tokens(sentence)
    if set(context) & (WIDE_WORDS | WIDE_PLACE_WORDS):
        return None
    claim_keys = {k for k, _ in content_tokens(claim)}
    sentence_keys = {k for k, _ in content_tokens(sentence)}
    place_words = sorted(set(said) & WIDE_PLACE_WORDS)
    if place_words:
        for match in _PLACE.finditer(sentence):
            place = match["place"]
            if not set(tokens(place)) & set(said) and _comparable(
                claim_keys, sentence_keys, {word_key(w) for w in place_words}
            ):
                written = match.group(0)
                if written.endswith(".") and "." not in written[:-1]:
                    written = written[:-1]  # the sentence's full stop, not "U.S."
                return Change(place_words[0], written)
    wide = [i for i, w in enumerate(said) if w in WIDE_WORDS]
    if not wide or not _comparable(claim_keys, sentence_keys, {word_key(said[i]) for i in wide}):
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
    """Two names in the claim in the reverse order of the sentence, around the same words.

    "Acme acquired Globex" against "Globex acquired Acme": the words between the names agree,
    and neither text turns the relation round with "by" (a passive) where the other does not.
    """
    said = tokens(claim)
    context = tokens(sentence)
    claimed = list(dict.fromkeys(n for n in names(claim) if n in said and n in context))
    for first, second in itertools.combinations(claimed, 2):
        i, j = said.index(first), said.index(second)
        k, m = context.index(first), context.index(second)
        if i > j:
            i, j, k, m = j, i, m, k
            first, second = second, first
        if not m < k or j - i > MAX_ROLE_GAP or k - m > MAX_ROLE_GAP:
            continue
        between_claim = said[i + 1 : j]
        between_context = context[m + 1 : k]
        if ("by" in between_claim) != ("by" in between_context):
            continue
        relation = {word_key(w) for w in between_claim if w not in ("the", "a", "an")}
        if relation and relation == {
            word_key(w) for w in between_context if w not in ("the", "a", "an")
        }:
            return Change(_span(claim, first, second), _span(sentence, second, first))
    return None


def _span(sentence: str, first: str, last: str) -> str:
    """The sentence from the word ``first`` to the word ``last``, as written."""
    lower = sentence.lower()
    start = re.search(rf"\b{re.escape(first)}\b", lower)
    if start is None:
        return sentence
    end = re.search(rf"\b{re.escape(last)}\b", lower[start.end() :])
    if end is None:
        return sentence
    return sentence[start.start() : start.end() + end.end()]
