"""How much of a claim the context's sentences share.

The sentences that hold most of a claim's words (`best_sentences`), and the shares of its word
pairs and triples, its longest run of words in a row and its words' co-occurrence in them, which
the claim's features (:mod:`ragaliq.offline.features`) are made of.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ragaliq.offline.context import (
    PAIR_WINDOW,
    ContextIndex,
    Sentence,
)
from ragaliq.text.words import (
    tokens,
)

KNOWN, NEAR, NOVEL = 0, 1, 2
"""How far the context knows a word of the claim: as it is, by its first letters, not at all."""


def cooccurrence(
    words: list[str], state: list[int], found: Found, index: ContextIndex, best_cov: float
) -> float:
    """The share of adjacent known words that the context has in one sentence together.

    Every sentence holding a word of the claim is a candidate (up to the cap), so looking among
    the candidates is looking in the whole context.
    """
    known = [
        stem for stem, s in zip(words, state, strict=True) if s == KNOWN and stem in index.postings
    ]
    links = list(itertools.pairwise(known))
    if not links:
        return best_cov
    index.work.spend(len(links) + sum(len(shared) for shared in found.overlaps.values()))
    # the best sentence first: it holds most pairs, so most links are settled by the first look
    best = found.best_id
    held = [found.overlaps[best], *found.overlaps.values()] if best is not None else []
    return sum(a == b or any(a in s and b in s for s in held) for a, b in links) / len(links)


def longest_run(state: list[int], kind: int) -> int:
    run = longest = 0
    for s in state:
        run = run + 1 if s == kind else 0
        longest = max(longest, run)
    return longest


def ngram_shares(
    words: list[str], text: str, found: Found, index: ContextIndex, best_cov: float
) -> tuple[float, float]:
    """The shares of the claim's word pairs, and of its word triples as written, near it.

    Near it: in the context sentences that hold half of its words, or else the closest one. A
    pair is two words at most :data:`~.context.PAIR_WINDOW` apart in one sentence, in either
    order.
    """
    close = found.close or ((found.best,) if found.best is not None else ())
    for sentence in close:
        index.work.spend(len(sentence.raw))
    bigrams = [_gram(pair) for pair in itertools.pairwise(words)]
    if bigrams:
        pairs = [_pairs(sentence.sequence) for sentence in close]
        bigram_share = sum(any(p in held for held in pairs) for p in bigrams) / len(bigrams)
    else:
        bigram_share = best_cov
    raw = tokens(text)
    trigrams = [_gram(g) for g in zip(raw, raw[1:], raw[2:], strict=False)]
    if trigrams:
        grams = [_trigrams(sentence.raw) for sentence in close]
        trigram_share = sum(any(g in held for held in grams) for g in trigrams) / len(trigrams)
    else:
        trigram_share = best_cov
    return bigram_share, trigram_share


def _gram(words: Iterable[str]) -> str:
    """Words as one string, each apart (no word holds a NUL), to look up among a sentence's.

    A string, not a tuple: the cached sets of a sentence's pairs and triples then hold no object
    the cycle collector has to pass over.
    """
    return "\x00".join(words)


@lru_cache(maxsize=8192)
def _pairs(sequence: tuple[str, ...]) -> frozenset[str]:
    found: set[str] = set()
    for i, word in enumerate(sequence):
        for other in sequence[i + 1 : i + 1 + PAIR_WINDOW]:
            found.add(_gram((word, other)))
            found.add(_gram((other, word)))
    return frozenset(found)


@lru_cache(maxsize=8192)
def _trigrams(raw: tuple[str, ...]) -> frozenset[str]:
    return frozenset(_gram(g) for g in zip(raw, raw[1:], raw[2:], strict=False))


CLOSE = 3
"""How many of the sentences holding half of a claim's words the contrast checks read."""


@dataclass(frozen=True)
class Found:
    """The context sentences closest to a claim (see :func:`best_sentences`)."""

    best: Sentence | None
    best_id: int | None
    best_cov: float
    cover2: float
    cover3: float
    close: tuple[Sentence, ...]
    overlaps: dict[int, frozenset[str]]
    """For each candidate sentence, the claim's words it holds."""


_NOTHING = Found(None, None, 0.0, 0.0, 0.0, (), {})


def best_sentences(words: frozenset[str], index: ContextIndex) -> Found:
    """The context sentence holding most of the claim's words, and the shares it holds.

    Found among the claim's candidate sentences (:meth:`ContextIndex.candidates`): that sentence,
    its share of the claim's words, then the share the best two and the best three sentences hold
    together, picked greedily (summaries often fuse sentences; words scattered over many
    sentences are a weaker support); and the (at most :data:`CLOSE`) sentences that hold at least
    half of the claim's words, most first.
    """
    if not words:
        return _NOTHING
    candidates = index.candidates(words)
    if not candidates:
        return _NOTHING
    sentences = index.sentences
    index.work.spend(3 * len(candidates) * len(words))
    overlaps = {i: words & sentences[i].words for i in candidates}
    overlap = {i: len(shared) for i, shared in overlaps.items()}
    keyed = sorted((-count, i) for i, count in overlap.items())  # most words first, then order
    best_id = keyed[0][1]
    close = tuple(sentences[i] for count, i in keyed[:CLOSE] if -2 * count >= len(words))
    best = sentences[best_id]
    n = len(words)
    covered = overlap[best_id]
    rest = words - best.words
    shares = []
    for _ in range(2):
        if not rest:  # the best sentence holds every word: no other adds one
            shares.append(covered / n)
            continue
        gains = {i: len(rest & sentences[i].words) for i in overlap if i != best_id}
        pick = min(gains, key=lambda i: (-gains[i], i), default=None)
        if pick is not None and gains[pick]:
            covered += gains[pick]
            rest = rest - sentences[pick].words
        shares.append(covered / n)
    return Found(
        best=best,
        best_id=best_id,
        best_cov=overlap[best_id] / n,
        cover2=shares[0],
        cover3=shares[1],
        close=close,
        overlaps=overlaps,
    )
