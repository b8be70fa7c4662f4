"""Whether every content-bearing word of a claim is stated where its evidence is.

Word overlap somewhere in the context is no support: "ships with a waterproof cover" shares all
but one word with a context that says "ships with a cover", and a word found three paragraphs
away is often about something else. The offline judge says SUPPORTED only when each content word
of the claim is stated by its **evidence**: the context sentence that holds most of the claim's
words, with the neighbour that goes on about the same subject (the sentence before it when it
starts with a pronoun, the next one when that one does); a name may also come from the first
sentence of the chunk, which says what the chunk is about ("The Brio K2 kettle ..."). A claim
about a JSON record rests on all of the record's short fields and keys at once (a record
describes one thing), and on the free text (a review) whose sentence it is closest to. A word
is stated there:

- as the same word key: the same stem, an irregular form of it ("sold" is "sell"), or a word of
  the same group in the paraphrase table (:data:`ragaliq.text.words.SYNONYMS`: "buy" and
  "purchase", "fix" and "repair");
- as a derivation of one: the same root once a suffix that derives one word from another is
  dropped ("inspection" and "inspected", "rotation" and "rotates"; :func:`root`);
- for a figure, in any unit or spelling that says the same (90 days are three months);
- for a weekday or a month, by a day the evidence names or implies ("Tuesday to Sunday" names
  Friday, not Monday).

Words that may go ungrounded (:data:`MAY_GO_UNGROUNDED`) are function words (never content words
at all), discourse and filler words, generic verbs that carry no fact of their own ("offers",
"provides", "includes", "needs", "allows"), hedges and frequency words ("usually"), and words
about the exchange itself ("the passage says"). Every noun, adjective, object, place, agent,
condition, quantity, weekday and any other verb must be stated: a word the evidence does not
state makes the claim *not verifiable offline*, with that word named in the reason. The cascade
asks more before it settles a SUPPORTED claim offline: its relation verb (:data:`RELATIONS`:
"offers", "operates") stated, and its words of reach and comparison (:data:`SCOPES`) written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from ragaliq.offline.context import GENERIC, ContextIndex, Sentence, shortens
from ragaliq.text.quantities import Quantity
from ragaliq.text.words import (
    IRREGULAR_FORMS,
    UNIT_WORDS,
    content_tokens,
    content_words,
    negation_scopes,
    word_key,
)

__all__ = [
    "MAY_GO_UNGROUNDED",
    "MAY_GO_UNGROUNDED_IN_RECORDS",
    "RELATIONS",
    "SCOPES",
    "Evidence",
    "evidence_of",
    "polarity_gap",
    "root",
    "ungrounded",
]

_LIGHT_VERBS = """
make get give take come go use need allow let help keep find become remain available able possible
require want ensure mean put set see know show happen apply stay exist
"""
"""Verbs and adjectives that carry no fact of their own: the fact is in their objects."""
_RELATION_VERBS = """
offer provide include contain feature receive hold carry bring enable support accept operate
"""
"""Verbs that say what a thing has or does with its objects ("offers", "includes", "operates"):
a paraphrase often puts one where the context says "has" or "with", so a claim is SUPPORTED
without its evidence stating it; but the relation is part of the fact, and a claim is settled
offline (:data:`RELATIONS`) only when its evidence states it."""
_GENERIC_VERBS = f"{_LIGHT_VERBS} {_RELATION_VERBS}"
_GENERIC_AGENTS = "people person someone anyone everyone"
"""Nouns for whoever does something, which a paraphrase names where the context is passive."""
_HEDGES = """
usual usually often typical typically general generally normal normally likely possibly probably
perhaps mainly mostly largely simply really actually especially essentially basically rather
highly
"""
_SEQUENCE = "first firstly finally lastly next afterwards later begin start continue"
"""Words that order the steps of an answer ("First, ...", "Start by ...")."""
_FILLERS = "due others toward towards away now whole like along that's there's here's"
"""Words that join or point ("due to", "among others", "right now", "dishes like pizza",
"along with")."""
_ADVICE = "important essential necessary crucial recommend advise sure careful involve"
"""Words that frame advice ("It is important to ...", "make sure to ...")."""
_REPORTING = "argue believe highlight emphasise emphasize stress claim"
"""Verbs a summary reports a statement with, where the source says "said"."""
_RECORD_WORDS = """
locate location address situate base rating rate star score average review reviewer customer
patron diner guest visitor user business establishment place spot venue
"""
"""Words for a record's own structure, which a claim about a record may use: where the thing is
(its address), how it is rated (its stars), who wrote its reviews, and what it is (the thing the
record describes)."""
_META = """
passage passages context article text information source sources document documents data detail
details mention mentions mentioned state states stated note notes noted report reports reported
explain explains explained describe describes described indicate indicates indicated suggest
suggests suggested announce announces announced
"""
"""Words about the sources or the exchange ("the passage says", "the article reports")."""


def _inflections(words: str) -> frozenset[str]:
    """The words and their inflections as written (``apply``, ``applies``, ``applied``).

    Compared as written, not by stem: "mainly" may go ungrounded, "main" may not.
    """
    forms: set[str] = set()
    for word in words.split():
        forms |= {word, f"{word}s", f"{word}es", f"{word}ed", f"{word}d", f"{word}ing"}
        if word.endswith("e"):
            forms |= {f"{word[:-1]}ing", f"{word[:-1]}ed"}
        if word.endswith("y"):
            forms |= {f"{word[:-1]}ies", f"{word[:-1]}ied"}
        forms |= {form for form, base in IRREGULAR_FORMS.items() if base == word}
    return frozenset(forms)


MAY_GO_UNGROUNDED = (
    _inflections(f"{_GENERIC_VERBS} {_GENERIC_AGENTS} {_REPORTING} {_META} {_ADVICE} {_SEQUENCE}")
    | frozenset(f"{_HEDGES} {_FILLERS}".split())
    | GENERIC
)
"""Words a claim may use that its evidence does not state, as written (lower case)."""
MAY_GO_UNGROUNDED_IN_RECORDS = MAY_GO_UNGROUNDED | _inflections(_RECORD_WORDS)
"""The same for a claim about a JSON record, with the words for the record's structure."""
RELATIONS = _inflections(_RELATION_VERBS)
"""The relation verbs as written: a SUPPORTED claim using one its evidence does not state is not
settled offline (the cascade asks Claude)."""
SCOPES = frozenset(
    """
    only all each every both either neither none more most less least fewer fewest same first
    last before after better best worse worst earlier earliest later latest older oldest younger
    youngest larger largest bigger biggest smaller smallest higher highest lower lowest longer
    longest shorter shortest faster fastest cheaper cheapest greater greatest
    """.split()
)
"""Words that say how far a claim reaches or how it compares ("both", "only", "first", "more",
"largest", "before"): function words to the grounding, yet they make the claim; a SUPPORTED
claim with one its evidence does not write is not settled offline (the cascade asks Claude)."""
_FREE_KEYS = frozenset(word_key(word) for word in MAY_GO_UNGROUNDED)

_DERIVATIONS = (
    "ibility",
    "ability",
    "ations",
    "ation",
    "isms",
    "ism",
    "ists",
    "ist",
    "izes",
    "ize",
    "ises",
    "ise",
    "iz",
    "is",
    "itions",
    "ition",
    "ions",
    "ion",
    "ments",
    "ment",
    "ness",
    "ities",
    "ity",
    "ably",
    "able",
    "ibly",
    "ible",
    "ally",
    "ical",
    "ive",
    "ing",
    "ers",
    "er",
    "ors",
    "or",
    "al",
    "ed",
    "es",
    "e",
    "s",
    "y",
)
"""Suffixes that derive one word from another, longest first."""
MIN_ROOT = 4
"""A root shorter than this is no root: "us" of "use", "car" of "care" (a final "e" may leave
three letters: "vote" and "vot")."""
_DOUBLED = re.compile(r"([bdfglmnprtz])\1$")


@lru_cache(maxsize=65536)
def root(key: str) -> str:
    """A word key without the suffix that derives it, and without a doubled last consonant.

    ``inspection`` and ``inspect`` share ``inspect``, ``rotation`` and ``rotat`` share
    ``rotat``, ``cancell`` (of "cancelled") and ``cancel`` share ``cancel``.
    """
    for suffix in _DERIVATIONS:
        least = MIN_ROOT - 1 if suffix == "e" else MIN_ROOT
        if key.endswith(suffix) and len(key) - len(suffix) >= least:
            key = key[: len(key) - len(suffix)]
            break
    return _DOUBLED.sub(r"\1", key)


_HOURS = frozenset(word_key(w) for w in "open opens close closes closed hour hours daily".split())
"""Words a claim gives opening hours with, stated by a record's hours that agree with it."""
MAX_RECORD_FACTS = 512
"""The most short fields of a record a claim about it is grounded in (RAGTruth's records have
fewer than 100)."""
MAX_TEXT_SENTENCES = 32
"""The most sentences of one free-text field of a record (a review) a claim is grounded in."""


@dataclass
class Evidence:
    """The context a claim rests on: its closest sentence and the neighbours on its subject."""

    sentences: tuple[Sentence, ...]
    """The closest sentence first, then its neighbours."""
    topic: Sentence | None
    """The first sentence of the chunk, for names."""
    record: bool
    words: frozenset[str]
    """The word keys of its sentences (and of its record's keys)."""

    @cached_property
    def roots(self) -> frozenset[str]:
        """The roots of its words (:func:`root`), read only when a word is not found as is."""
        return frozenset(root(w) for w in self.words)

    @cached_property
    def surface(self) -> frozenset[str]:
        """Its tokens as written, lower case, hyphens dropped and hyphenated pieces kept."""
        return frozenset().union(*(_surface(s.raw) for s in self.sentences))

    @cached_property
    def days(self) -> frozenset[str]:
        """The weekdays and months its sentences name or imply."""
        return frozenset().union(*(s.days for s in self.sentences))

    @property
    def quantities(self) -> Iterable[Quantity]:
        for sentence in self.sentences:
            yield from sentence.quantities


@lru_cache(maxsize=16384)
def _surface(raw: tuple[str, ...]) -> frozenset[str]:
    return frozenset(
        piece.removesuffix("'s") for w in raw for piece in (w.replace("-", ""), *w.split("-"))
    )


NEIGHBOUR_SHARE = 0.4
"""Share of a claim's words a neighbouring sentence must hold to be about the same subject."""


def evidence_of(
    best: int | None,
    index: ContextIndex,
    words: frozenset[str] = frozenset(),
    *,
    whole_record: bool = True,
) -> Evidence | None:
    """The evidence around the sentence at position ``best`` for a claim with these words.

    None without a sentence. A neighbour of the sentence (in the same chunk) is about the same
    subject when a pronoun links them ("It reaches 25 km/h") or when it holds at least
    :data:`NEIGHBOUR_SHARE` of the claim's words, as a sentence a summary fuses with the next one
    does. A sentence of a record brings the record's short fields, keys and the free text it is
    in, unless ``whole_record`` is false (the sentence and its neighbours alone).
    """
    if best is None:
        return None
    sentences = index.sentences
    sentence = sentences[best]
    found = [sentence]
    least = NEIGHBOUR_SHARE * len(words)
    if best > 0 and best != sentence.opening:
        before = sentences[best - 1]
        if sentence.antecedent or (words and len(words & before.words) >= least):
            found.append(before)
    if best + 1 < len(sentences) and sentences[best + 1].opening == sentence.opening:
        after = sentences[best + 1]
        if sentence.follow or (words and len(words & after.words) >= least):
            found.append(after)
    keys: frozenset[str] = frozenset()
    if sentence.record is not None and whole_record:
        keys = index.records[sentence.record].key_words
        facts = index.record_facts[sentence.record][:MAX_RECORD_FACTS]
        text = range(sentence.opening, min(sentence.opening + MAX_TEXT_SENTENCES, len(sentences)))
        if best not in facts:  # a sentence of the record's free text: the whole text it is in
            facts = (*facts, *(i for i in text if sentences[i].opening == sentence.opening))
        index.work.spend(len(facts))
        found += [sentences[i] for i in facts if sentences[i] not in found]
    topic = sentences[sentence.opening] if sentence.opening != best else None
    return Evidence(
        sentences=tuple(found),
        topic=topic,
        record=sentence.record is not None,
        words=frozenset().union(*(s.words for s in found)) | keys,
    )


def ungrounded(
    tokens: Sequence[tuple[str, str]],
    *,
    evidence: Evidence | None,
    names: Iterable[str],
    figures: Sequence[Quantity],
    hours: bool = False,
    initials: Iterable[str] = (),
    free: frozenset[str] | None = None,
) -> list[str]:
    """The claim's content words (as written) that its evidence does not state, in order.

    ``tokens`` are the claim's content words with how it writes them; ``names`` the words of its
    names (lower case); ``figures`` its figures; ``hours`` whether a record's opening hours
    agree with the claim (its times, days and "open" are then stated); ``initials`` the short
    capitalised words of the context (``CA``), which may write a name of the claim short;
    ``free`` the words that may go ungrounded (by default :data:`MAY_GO_UNGROUNDED`, or
    :data:`MAY_GO_UNGROUNDED_IN_RECORDS` for a record).
    """
    if evidence is None:
        return list(dict.fromkeys(written for _, written in tokens))
    stated: set[str] = set(_HOURS) if hours else set()
    for figure in figures:
        if hours and figure.dimension in ("clock", "time"):
            stated.update(content_words(figure.written))
            continue
        if any(figure.stated_by(other) for other in evidence.quantities):
            stated.update(content_words(figure.written))
            if figure.dimension is not None:  # "350 degrees Fahrenheit" where it says "350°F"
                stated |= UNIT_WORDS.get(figure.dimension, frozenset())
    named = set(names)
    topic = evidence.topic.words if evidence.topic is not None else frozenset()
    if free is None:
        free = MAY_GO_UNGROUNDED_IN_RECORDS if evidence.record else MAY_GO_UNGROUNDED
    out: list[str] = []
    for key, written in tokens:
        lower = written.lower().replace("\u2019", "'").removesuffix("'s")
        if lower == "one":
            continue  # a pronoun ("one of the ...") more often than a count
        if (
            key in evidence.words
            or lower in free
            or key in stated
            or key in evidence.days
            or lower.replace("-", "") in evidence.surface
            or lower.replace("-", "") in evidence.words
            or root(key) in evidence.roots
            or (lower in named and _written_short(lower, evidence, initials))
            or (lower in named and key in topic)
        ):
            continue
        out.append(written)
    return list(dict.fromkeys(out))


def _written_short(name: str, evidence: Evidence, initials: Iterable[str]) -> bool:
    """Whether the evidence writes a name of the claim short ("CA" for "California")."""
    return any(
        short.lower() in evidence.surface and shortens(short, name)
        for short in initials
        if short[:1].lower() == name[:1]
    )


def polarity_gap(text: str, words: frozenset[str], evidence: Evidence | None) -> str:
    """What the evidence does not say of the claim's negations, or nothing.

    A negation is a content-bearing part too: each negation of the claim must govern a word a
    negation of the evidence governs ("needs no account" beside "does not need an account"), and
    the claim may not assert, unnegated, the first word with a fact that a negation of the
    evidence governs ("can be exchanged" beside "cannot be exchanged"), where no finding has
    already said so.
    """
    if evidence is None:
        return ""
    denied = [scope for s in evidence.sentences for scope in negation_scopes(s.text)]
    governed = frozenset(w for scope in denied for w in scope)
    claimed = negation_scopes(text)
    written = dict(reversed(content_tokens(text)))
    for scope in claimed:
        if not governed.intersection(scope):
            return (
                f"the claim denies {_listed(scope, written)}, which no negation of the context "
                "sentence it rests on denies"
            )
    firsts = {next((w for w in scope if w not in _FREE_KEYS), None) for scope in denied}
    asserted = (words & firsts) - {w for scope in claimed for w in scope}
    if asserted:
        ordered = [key for key in written if key in asserted]
        return (
            f"a negation of the context sentence it rests on governs {_listed(ordered, written)}, "
            "which the claim asserts; the offline judge cannot tell whether that negation bears "
            "on what the claim says"
        )
    return ""


def _listed(keys: Iterable[str], written: dict[str, str]) -> str:
    return ", ".join(f'"{written.get(key, key)}"' for key in keys)
