"""When two claims are the same claim re-worded, and whether a quote occurs in a context.

The gate pairs each claim hallucinated in a pull request's run with one hallucinated in the
baseline's run of the same case; what is left unpaired is *newly* hallucinated. A re-wording must
keep what a reader would check (figures, names and their order, negation), so that "$10 a month"
and "$100 a month" are two claims however alike they read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher
from typing import TypeVar

from ragaliq.text.words import STOPWORDS, content_words, is_negated, numbers, starts_sentence

__all__ = [
    "FUZZY_JACCARD",
    "FUZZY_RATIO",
    "evidence_in_context",
    "normalise",
    "same_claim",
    "unmatched",
]

FUZZY_RATIO = 0.85
"""Character similarity at which two claims are the same claim re-worded."""
FUZZY_JACCARD = 0.75
"""Content-word overlap at which two claims are the same claim re-worded."""

T = TypeVar("T")


def normalise(text: str) -> str:
    """Lower case, with every run of characters other than letters and digits one space."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


def same_claim(a: str, b: str) -> bool:
    """Whether two claims say the same thing: equal when normalised, or a close re-wording.

    A re-wording must keep what a reader would check: the same figures, the same names in the
    same order, and the same negation. "$10 a month" and "$100 a month", "the capital of France"
    and "of Germany", "safe" and "not safe" are different claims however alike they read.
    """
    na, nb = normalise(a), normalise(b)
    if na == nb:
        return True
    if numbers(a) != numbers(b) or is_negated(a) != is_negated(b) or not _names_agree(a, b):
        return False
    wa, wb = set(content_words(a)), set(content_words(b))
    if wa and wb and len(wa & wb) / len(wa | wb) >= FUZZY_JACCARD:
        return True
    return SequenceMatcher(None, na, nb, autojunk=False).ratio() >= FUZZY_RATIO


_CAPITALISED = re.compile(r"(?<![\w'\u2019-])[A-Z][\w'\u2019-]*")


def _capitalised(text: str) -> list[tuple[str, bool]]:
    """Capitalised words in order, lower-cased, each with whether it starts a sentence."""
    return [
        (m.group(0).lower(), starts_sentence(text, m.start()))
        for m in _CAPITALISED.finditer(text)
        if m.group(0).lower() not in STOPWORDS
    ]


def _proper_words(text: str, other: str) -> list[str]:
    """The names in a claim, in order.

    A word that only starts a sentence ("Phone support ...") counts when either claim
    capitalises it elsewhere ("... is Paris").
    """
    inside = {w for t in (text, other) for w, first in _capitalised(t) if not first}
    return [w for w, first in _capitalised(text) if not first or w in inside]


def _names_agree(a: str, b: str) -> bool:
    """The same names, and not the same sentence with its names swapped ("Alice sued Bob")."""
    pa, pb = _proper_words(a, b), _proper_words(b, a)
    if set(pa) != set(pb):
        return False
    if pa == pb:
        return True
    skeleton_a = [w for w in normalise(a).split() if w not in pa]
    skeleton_b = [w for w in normalise(b).split() if w not in pb]
    return skeleton_a != skeleton_b


def unmatched(
    items: Iterable[T],
    others: Sequence[T],
    *,
    text: Callable[[T], str],
    same: Callable[[str, str], bool] = same_claim,
) -> list[T]:
    """The items with no counterpart among ``others``; each of those matches one item at most.

    Items repeated word for word are paired first; the re-worded rest (``same``, by default
    :func:`same_claim`) are paired so that as many as possible find a counterpart (a maximum
    matching, by augmenting paths).
    """
    free = list(others)
    exact_left: list[T] = []
    for item in items:
        key = normalise(text(item))
        match = next((o for o in free if normalise(text(o)) == key), None)
        if match is None:
            exact_left.append(item)
        else:
            free.remove(match)
    edges = [[j for j, o in enumerate(free) if same(text(c), text(o))] for c in exact_left]
    owner: dict[int, int] = {}  # index in free -> index in exact_left

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(exact_left)):
        augment(i, set())  # an item once matched stays matched, perhaps to another counterpart
    matched = set(owner.values())
    return [c for i, c in enumerate(exact_left) if i not in matched]


def evidence_in_context(evidence: str, context: Sequence[str]) -> bool:
    """Whether a quote occurs in the context, ignoring case, whitespace and punctuation.

    Words must match whole ("10 million" is not in "110 million"). A quote joined with an
    ellipsis counts when each of its parts occurs.
    """
    haystack = f" {normalise(' '.join(context))} "
    parts = [normalise(p) for p in re.split(r"\.\.\.|\u2026", evidence)]
    parts = [p for p in parts if p]
    return bool(parts) and all(f" {p} " in haystack for p in parts)
