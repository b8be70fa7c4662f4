"""A claim copied from one context sentence, and what the rest of that sentence does to it.

A claim that is a contiguous span of one context sentence, up to case, punctuation and a
citation marker ("The app syncs notes across devices" of "The app syncs notes across devices,
but it does not work offline."), is what the context says, unless the part of the sentence left
out governs the span:

- a **negation** before it in its clause ("It is not true that the app works offline"), or a
  word after it that denies it ("..., which is false", "is a myth");
- a **condition** or a limit ("If you upgrade to Pro, the app works offline", "... only on
  Android", "..., unless the order was opened");
- a **modal** or a hedge ("The app may ...", "It is likely that ...");
- an **attribution** ("According to the vendor, ...", "..., the company said").

A part before the span governs it unless a clause boundary (``;``, ``:``, ``, and``, ``,
but``, ``while``, ``whereas``, ``though``, ``yet``) comes after the governing word; a part after
the span governs it up to the first such boundary, or, but for a denial ("..., which is
false"), up to the first coordinator or relative pronoun ("... per month and can be bought by
Owners" leaves the span alone). Words are matched whole, so that
"cannot" and "notes" are read as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Governor", "Span", "copied_span", "governor_of", "governs"]

GovernorKind = Literal["negation", "condition", "modal", "attribution"]

NEGATIONS = frozenset(
    """
    not no never none nobody nothing neither nor without cannot can't won't isn't aren't wasn't
    weren't doesn't don't didn't hasn't haven't hadn't shouldn't wouldn't couldn't mustn't
    false untrue myth incorrect wrong deny denies denied refute refutes refuted hardly
    """.split()
)
NEGATIONS_AFTER = frozenset("false untrue myth incorrect wrong denied refuted".split())
"""Words after a span that deny it ("..., which is false"); a plain "not" after the span
negates something else ("covers dental, not vision")."""
CONDITIONS = frozenset(
    """
    if unless provided providing assuming suppose supposing when whenever once only except
    excluding until whether otherwise
    """.split()
)
MODALS = frozenset(
    """
    may might could would should can must shall will possibly probably perhaps maybe likely
    unlikely seems seem seemed appears appear appeared supposedly reportedly allegedly
    expected planned plans proposed hopes hoped aims rumored rumoured
    """.split()
)
ATTRIBUTIONS = frozenset(
    """
    said says say claims claimed claim reported reports according believes believe believed
    thinks think thought alleged alleges argued argues suggests suggested told insists insisted
    estimated estimates predicted predicts warned wrote writes announced
    """.split()
)
_KINDS: tuple[tuple[GovernorKind, frozenset[str]], ...] = (
    ("negation", NEGATIONS),
    ("condition", CONDITIONS),
    ("modal", MODALS),
    ("attribution", ATTRIBUTIONS),
)
_WORD = re.compile(r"[^\W_]++(?:['\u2019][^\W_]++)?")
_BOUNDARY = re.compile(
    r"[;:]|,\s*+(?:and|but|yet|so|while|whereas|though|although)\b"
    r"|\b(?:but|whereas|although|though|yet)\b",
    re.IGNORECASE,
)
_CONJUNCT = re.compile(r"\b(?:and|or|nor|but|which|who|whom|whose|where)\b", re.IGNORECASE)
"""After the span, a coordinator starts a conjunct of its own ("... per month and can be bought
by Owners") and a relative pronoun a clause about its last noun ("... a DPA, which Owners can
sign"): what follows either governs that part, not the span (a denial still does: "..., which
is false")."""
_NOT_SO = re.compile(r"\bnot\s++(?:true|the\s++case|correct|so)\b", re.IGNORECASE)
"""A denial after the span ("..., which is not true")."""
MIN_SPAN_WORDS = 3
"""A span shorter than this ("It works") says too little to stand alone."""


@dataclass(frozen=True)
class Governor:
    """A word of the part of a sentence left out that governs the copied span."""

    kind: GovernorKind
    words: str
    """The left-out part from the governing word to the span (or from the span to it)."""


@dataclass(frozen=True)
class Span:
    """Where a claim sits, word for word, in a context sentence."""

    sentence: str
    start: int
    end: int
    governor: Governor | None


def _words(text: str) -> list[str]:
    return [m.group(0).lower().replace("\u2019", "'") for m in _WORD.finditer(text)]


def copied_span(claim: str, sentences: Iterable[str]) -> Span | None:
    """Where the claim is copied from one of the sentences, preferring a span nothing governs.

    The first sentence holding the claim as a contiguous span that nothing governs; else the
    first that holds it governed; None when no sentence holds it. The claim is matched word for
    word, whole words only, with any punctuation or spacing between them (up to case), so a
    claim and its sentence may differ in commas, quotes, a citation marker the claim's reading
    already left out, and a final full stop.
    """
    words = [re.escape(w) for w in (m.group(0) for m in _WORD.finditer(claim))]
    if len(words) < MIN_SPAN_WORDS:
        return None
    pattern = re.compile(r"(?<![^\W_])" + r"[\W_]++".join(words) + r"(?![^\W_])", re.IGNORECASE)
    governed: Span | None = None
    for sentence in sentences:
        match = pattern.search(sentence)
        if match is None:
            continue
        span = Span(
            sentence,
            match.start(),
            match.end(),
            governor_of(sentence[: match.start()], sentence[match.end() :]),
        )
        if span.governor is None:
            return span
        governed = governed or span
    return governed


def governor_of(before: str, after: str) -> Governor | None:
    """What in the left-out parts governs the span between them (None: nothing does)."""
    boundaries = list(_BOUNDARY.finditer(before))
    start = boundaries[-1].end() if boundaries else 0
    lead = before[start:]
    for word in _words(lead):
        kind = _kind(word, after=False)
        if kind is not None:
            at = re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", lead, re.IGNORECASE)
            shown = lead[at.start() :] if at is not None else lead
            return Governor(kind, shown.strip(" ,"))
    stop = _BOUNDARY.search(after)
    clause = after[: stop.start()] if stop is not None else after
    if _NOT_SO.search(clause) or NEGATIONS_AFTER.intersection(_words(clause)):
        return Governor("negation", clause.strip(" ,.;:!?()"))
    near = _CONJUNCT.search(clause)
    tail = clause[: near.start()] if near is not None else clause
    for word in _words(tail):
        kind = _kind(word, after=True)
        if kind is not None:
            return Governor(kind, tail.strip(" ,.;:!?()"))
    return None


def _kind(word: str, *, after: bool) -> GovernorKind | None:
    negation = word in NEGATIONS or word.endswith("n't")
    if after and negation:
        return None  # a plain negation after the span negates something else
    if negation:
        return "negation"
    return next((kind for kind, found in _KINDS if word in found), None)


def governs(word: str) -> bool:
    """Whether a word (lower case) negates, conditions, hedges or attributes what it governs."""
    return _kind(word, after=False) is not None
