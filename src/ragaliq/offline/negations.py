"""Where a claim negates what the context sentence closest to it says, or the other way round.

- :func:`negation_change`: what a negation the other text lacks says, as each text writes it
  ("does not have a keep-warm mode" against "has a keep-warm mode"); whether there is one is
  decided by the claim's features (:mod:`.features`);
- :func:`requirement_flip`: a requirement denied ("you do not need the receipt" against "returns
  must include the receipt"), or the other way round.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache

from ragaliq.offline.contrasts import Change, comparable
from ragaliq.text.words import NEGATION_CUES, STOPWORDS, content_tokens, negated_words, word_key

__all__ = ["negation_change", "requirement_flip"]

_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:[.,]\d+)*")


_AUXILIARY = frozenset(
    """
    do does did is are was were be been will would can could should may might must has have had
    """.split()
)
NEGATION_REACH = 4
"""How many words after a negation the word it governs may be ("does not have a keep-warm")."""
LEAD_WORDS = 2
"""How many small words before the shared word its quote takes along ("has a keep-warm")."""


def negation_change(claim: str, sentence: str) -> Change | None:
    """What the claim and the sentence say of a word one of them negates, as each writes it.

    The word is one both use that a negation governs in one text only (else in both, the count
    of negations differing). Each side is quoted from its negation to that word ("does not have
    a keep-warm"), or, where the text does not negate it, the word with the small words before
    it ("has a keep-warm"); a word both use that follows it is quoted too ("mode"). None when
    no such word is found.
    """
    claim_keys = {key for key, _ in content_tokens(claim)}
    sentence_keys = {key for key, _ in content_tokens(sentence)}
    claim_negated, sentence_negated = negated_words(claim), negated_words(sentence)
    keys = ((claim_negated - sentence_negated) & sentence_keys) | (
        (sentence_negated - claim_negated) & claim_keys
    )
    keys = keys or (claim_negated & sentence_keys) | (sentence_negated & claim_keys)
    if not keys:
        return None
    shared = claim_keys & sentence_keys
    said = _negated_phrase(claim, keys, shared) or _phrase(claim, keys, shared)
    context = _negated_phrase(sentence, keys, shared) or _phrase(sentence, keys, shared)
    if said is None or context is None:
        return None
    return Change(said, context)


def _negated_phrase(text: str, keys: AbstractSet[str], shared: AbstractSet[str]) -> str | None:
    """From a negation of the text to the word of ``keys`` it governs, as written."""
    words = _Written.of(text)
    for i, word in enumerate(words.lower):
        if word not in NEGATION_CUES and not word.endswith("n't"):
            continue
        for k in range(i + 1, min(i + 1 + NEGATION_REACH, len(words.lower))):
            if word_key(words.lower[k]) in keys:
                start = i - 1 if i and words.lower[i - 1] in _AUXILIARY else i
                return words.quote(start, k, shared)
    return None


def _phrase(text: str, keys: AbstractSet[str], shared: AbstractSet[str]) -> str | None:
    """The first word of ``keys`` in the text with the small words just before it, as written."""
    words = _Written.of(text)
    for k, word in enumerate(words.lower):
        if word_key(word) not in keys:
            continue
        start = k
        while (
            start > 0
            and k - start < LEAD_WORDS
            and words.lower[start - 1] in STOPWORDS
            and words.lower[start - 1] not in NEGATION_CUES
        ):
            start -= 1
        return words.quote(start, k, shared)
    return None


@dataclass(frozen=True)
class _Written:
    """A text's words, lower case, and where each is written."""

    text: str
    lower: list[str]
    spans: list[tuple[int, int]]

    @classmethod
    def of(cls, text: str) -> _Written:
        found = list(_WORD.finditer(text))
        return cls(
            text,
            [m.group(0).lower().replace("\u2019", "'") for m in found],
            [m.span() for m in found],
        )

    def quote(self, start: int, end: int, shared: AbstractSet[str]) -> str:
        """Words ``start`` to ``end`` as written, and the next one when both texts use it."""
        after = end + 1
        if (
            after < len(self.lower)
            and self.lower[after] not in STOPWORDS
            and word_key(self.lower[after]) in shared
        ):
            end = after
        return self.text[self.spans[start][0] : self.spans[end][1]]


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


@lru_cache(maxsize=16384)
def _requirement(text: str) -> tuple[int, str]:
    """+1 when the text requires something, -1 when it says it is not needed, else 0.

    A text that does both ("you must include it, unless you do not have to") is 0. Cached: a
    context sentence is read for every claim it is close to.
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
    if not claim_keys or not comparable(claim_keys, sentence_keys, set()):
        return None
    return Change(said_words, context_words)
