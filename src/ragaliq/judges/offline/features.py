"""What the offline judge measures about a claim against its context.

The context is indexed once per case (:mod:`.context`); every claim then gets a short vector of
hand-made features plus the findings behind them (the words, numbers and names the context lacks,
the record fields it contradicts), so the verdict's reason can say what was found, not just a
score.

The features are what RAGTruth teaches about hallucinations in RAG answers: names, numbers and
dates that do not occur in the context; novel content words concentrated in one run ("... and
suicide bombings") rather than spread thin, as paraphrase is; a negation the closest context
sentence lacks; claims about fields a structured record does not have or contradicts; and meta or
advice sentences ("it is important to consult ...") that add what no passage said.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragaliq.judges.offline.context import ContextIndex, Count, Sentence, counts_of
from ragaliq.judges.offline.records import RecordFindings
from ragaliq.text.quantities import Quantity, quantities
from ragaliq.text.words import (
    calendar_words,
    content_tokens,
    content_words,
    drop_answer_word,
    is_negated,
    names,
    negated_words,
    negation_count,
    tokens,
)

__all__ = ["FEATURES", "Analysis", "analyse_claims"]

FEATURES = (
    "log_words",
    "novel_share",
    "novel_log",
    "near_log",
    "best_cov",
    "pair_cov",
    "cover3",
    "cooc_share",
    "bigram_share",
    "trigram_share",
    "novel_names",
    "novel_figures",
    "negation_flip",
    "novel_run",
    "meta",
    "hedge",
    "advice",
    "rec_contradicted",
    "rec_unknown",
    "rec_confirmed",
    "response_novel_share",
    "position",
    "first",
    "figures_found",
    "names_found",
    "rec_absent",
)
"""The feature names, in the order of every vector and of the model's weights."""

_META = re.compile(
    r"\b(?:passages?|provided|context|article|structured data|json|the text|given information|"
    r"information given|based on)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:may|might|could|likely|possibly|probably|perhaps|seems?|appears?|generally|typically|"
    r"usually|often|potentially)\b",
    re.IGNORECASE,
)
_ADVICE = re.compile(
    r"\b(?:important|recommend(?:ed|s)?|should|consult|ensure|make sure|always|note that|"
    r"overall|additionally|in conclusion|in summary)\b",
    re.IGNORECASE,
)


@dataclass
class Analysis:
    """One claim against the context: its feature vector and what lies behind it."""

    claim: str
    text: str
    """The claim as it is compared: without a leading "Yes," or "No."."""
    words: frozenset[str]
    novel: frozenset[str]
    """Content words (stemmed) the context lacks, even approximately."""
    best: Sentence | None
    close: tuple[Sentence, ...]
    """The sentences holding at least half of the claim's words, most first (``best`` too)."""
    best_cov: float
    context_cov: float
    novel_words: list[str]
    """The novel words as written in the claim, in order."""
    novel_names: list[str]
    figures: list[Quantity]
    """The claim's figures: in digits, or in words with a unit ("sixty days")."""
    novel_figures: list[Quantity]
    """The claim's figures the context does not state."""
    novel_dates: list[tuple[str, str]]
    """Weekdays and months of the claim the context does not name: in full, and as written."""
    negation_flip: bool
    record: RecordFindings | None
    hours: bool = False
    """Whether the context's record gives opening hours (a week of time ranges)."""
    miscounts: list[tuple[Count, Count]] = field(default_factory=list)
    """Things the claim counts otherwise than the closest sentence, which the context never
    counts so: the claim's count and the sentence's ("three children", "two children")."""
    features: list[float] = field(default_factory=list)


def analyse_claims(claims: Sequence[str], index: ContextIndex) -> list[Analysis]:
    """Analyse every claim of a response; features that span the response are filled in too."""
    analyses = [_analyse(claim, index) for claim in claims]
    total_words = sum(len(a.words) for a in analyses)
    novel = sum(len(a.novel) for a in analyses)
    share = novel / total_words if total_words else 0.0
    last = max(len(analyses) - 1, 1)
    for position, analysis in enumerate(analyses):
        analysis.features[_RESPONSE_NOVEL] = share
        analysis.features[_POSITION] = position / last
        analysis.features[_FIRST] = 1.0 if position == 0 else 0.0
    return analyses


_RESPONSE_NOVEL = FEATURES.index("response_novel_share")
_POSITION = FEATURES.index("position")
_FIRST = FEATURES.index("first")


_KNOWN, _NEAR, _NOVEL = 0, 1, 2
"""How far the context knows a word of the claim: as it is, by its first letters, not at all."""


@dataclass(frozen=True, kw_only=True)
class _Overlap:
    """How the claim's words sit in the context, beyond what :class:`Analysis` keeps."""

    near: int
    """Words the context knows only by their first letters."""
    pair_cov: float
    cover3: float
    cooc_share: float
    bigram_share: float
    trigram_share: float
    longest_novel_run: int
    names_found: int


def _analyse(claim: str, index: ContextIndex) -> Analysis:
    text = drop_answer_word(claim)
    pairs = content_tokens(text)
    words = [stem for stem, _ in pairs]
    word_set = frozenset(words)
    n = len(word_set)
    state = [_known(stem, surface.lower(), index) for stem, surface in pairs]
    novel = frozenset(stem for stem, s in zip(words, state, strict=True) if s == _NOVEL)
    near = frozenset(stem for stem, s in zip(words, state, strict=True) if s == _NEAR) - novel
    best, best_cov, pair_cov, cover3, close = _best_sentences(word_set, index)
    claim_names = list(dict.fromkeys(names(text)))
    spelt = _spelt_names(text)
    novel_names = [name for name in claim_names if not index.knows_name(name, spelt.get(name, ""))]
    claim_quantities = quantities(text)
    claim_figures = [q for q in claim_quantities if _is_figure(q, record=bool(index.records))]
    analysis = Analysis(
        claim=claim,
        text=text,
        words=word_set,
        novel=novel,
        best=best,
        close=close,
        best_cov=best_cov,
        context_cov=1 - len(novel) / n if n else 0.0,
        novel_words=list(
            dict.fromkeys(
                surface for (_, surface), s in zip(pairs, state, strict=True) if s == _NOVEL
            )
        ),
        novel_names=novel_names,
        figures=claim_figures,
        novel_figures=[q for q in claim_figures if not index.states(q)],
        miscounts=_miscounts(text, claim_quantities, best, index),
        novel_dates=[
            (full, written) for full, written in calendar_words(text) if full not in index.calendar
        ],
        negation_flip=_negation_flip(text, word_set, best, best_cov),
        record=_record_findings(text, index),
        hours=any(record.weeks for record in index.records),
    )
    bigram_share, trigram_share = _ngram_shares(words, text, index, best_cov)
    overlap = _Overlap(
        near=len(near),
        pair_cov=pair_cov,
        cover3=cover3,
        cooc_share=_cooccurrence(words, state, index, best_cov),
        bigram_share=bigram_share,
        trigram_share=trigram_share,
        longest_novel_run=_longest_run(state, _NOVEL),
        names_found=len(claim_names) - len(novel_names),
    )
    analysis.features = _vector(analysis, overlap)
    return analysis


def _known(stem: str, lower: str, index: ContextIndex) -> int:
    if index.knows(stem) or index.knows(lower):
        return _KNOWN
    if index.nearly_knows(stem) or index.nearly_knows(lower):
        return _NEAR
    return _NOVEL


_NAME_RUN = re.compile(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+")


def _spelt_names(text: str) -> dict[str, str]:
    """Each word of a name of several words, to the whole name in lower case (``new york``)."""
    spelt: dict[str, str] = {}
    for match in _NAME_RUN.finditer(text):
        whole = match.group(0).lower()
        for word in whole.split():
            spelt.setdefault(word, whole)
    return spelt


_SCALE_WORDS = frozenset(
    "hundred hundreds thousand thousands million millions billion dozen".split()
)
MIN_WORD_COUNT = 3
"""A count in words without a unit is a figure from three up ("four seasons", "six players"):
"one" is as often a pronoun, and "two" names a pair the context often lists without counting."""


def _is_figure(quantity: Quantity, *, record: bool) -> bool:
    """Whether a quantity of the claim is a figure the context must state.

    In digits, or in words with a unit ("sixty days"); a count in words from three up, except
    against a record (whose lists a claim counts) and a bare "hundred" ("several hundred").
    """
    if not quantity.in_words or quantity.unit is not None:
        return True
    return (
        not record
        and quantity.value >= MIN_WORD_COUNT
        and quantity.written.lower() not in _SCALE_WORDS
    )


def _cooccurrence(
    words: list[str], state: list[int], index: ContextIndex, best_cov: float
) -> float:
    """The share of adjacent known words that the context has in one sentence together."""
    known = [
        stem for stem, s in zip(words, state, strict=True) if s == _KNOWN and stem in index.postings
    ]
    links = list(itertools.pairwise(known))
    if not links:
        return best_cov
    return sum(
        not index.postings[a].isdisjoint(index.postings[b]) if a != b else True for a, b in links
    ) / len(links)


def _longest_run(state: list[int], kind: int) -> int:
    run = longest = 0
    for s in state:
        run = run + 1 if s == kind else 0
        longest = max(longest, run)
    return longest


def _ngram_shares(
    words: list[str], text: str, index: ContextIndex, best_cov: float
) -> tuple[float, float]:
    """The shares of the claim's word pairs, and of its verbatim word triples, in the context."""
    bigrams = list(itertools.pairwise(words))
    bigram_share = (
        sum(pair in index.pairs for pair in bigrams) / len(bigrams) if bigrams else best_cov
    )
    raw = tokens(text)
    trigrams = list(zip(raw, raw[1:], raw[2:], strict=False))
    trigram_share = (
        sum(gram in index.trigrams for gram in trigrams) / len(trigrams) if trigrams else best_cov
    )
    return bigram_share, trigram_share


def _miscounts(
    text: str, found: Sequence[Quantity], best: Sentence | None, index: ContextIndex
) -> list[tuple[Count, Count]]:
    return [
        (count, other)
        for count in counts_of(text, found)
        if best is not None and count.quantity.key not in index.counts.get(count.noun, ())
        for other in best.counts
        if other.noun == count.noun
    ]


def _record_findings(text: str, index: ContextIndex) -> RecordFindings | None:
    """What the context's records say about the claim, all together; None without a record."""
    if not index.records:
        return None
    findings = RecordFindings()
    for record in index.records:
        found = record.check(text)
        findings.confirmed += found.confirmed
        findings.contradicted += found.contradicted
        findings.unknown += found.unknown
        findings.absent += found.absent
        findings.evidence += found.evidence
        findings.figures += found.figures
    return findings


def _vector(a: Analysis, o: _Overlap) -> list[float]:
    """The claim's features, in the order of :data:`FEATURES`; the response's are filled later."""
    n = len(a.words)
    record = a.record
    values = {
        "log_words": math.log1p(n),
        "novel_share": len(a.novel) / n if n else 0.0,
        "novel_log": math.log1p(len(a.novel)),
        "near_log": math.log1p(o.near),
        "best_cov": a.best_cov,
        "pair_cov": o.pair_cov,
        "cover3": o.cover3,
        "cooc_share": o.cooc_share,
        "bigram_share": o.bigram_share,
        "trigram_share": o.trigram_share,
        "novel_names": float(min(len(a.novel_names), 3)),
        "novel_figures": float(min(len(a.novel_figures), 3)),
        "negation_flip": 1.0 if a.negation_flip else 0.0,
        "novel_run": math.log1p(o.longest_novel_run),
        "meta": 1.0 if _META.search(a.text) else 0.0,
        "hedge": float(min(len(_HEDGE.findall(a.text)), 2)),
        "advice": float(min(len(_ADVICE.findall(a.text)), 2)),
        "rec_contradicted": float(min(len(record.contradicted), 3)) if record else 0.0,
        "rec_unknown": float(min(len(record.unknown), 3)) if record else 0.0,
        "rec_confirmed": float(min(len(record.confirmed), 3)) if record else 0.0,
        "response_novel_share": 0.0,  # filled in by analyse_claims
        "position": 0.0,
        "first": 0.0,
        "figures_found": float(min(len(a.figures) - len(a.novel_figures), 3)),
        "names_found": float(min(o.names_found, 3)),
        "rec_absent": float(min(len(record.absent), 3)) if record else 0.0,
    }
    return [values[name] for name in FEATURES]


NEGATION_COVERAGE = 0.9
"""Share of a claim's words the closest sentence must hold for a negation to flip it."""


def _negation_flip(
    claim: str, words: frozenset[str], best: Sentence | None, best_cov: float
) -> bool:
    """Whether the closest sentence negates what the claim asserts, or the other way round.

    The negation must govern a word both share (``not refundable`` against ``refundable``), and
    the two must otherwise say the same thing: nearly all of the claim's words are in the sentence,
    and the sentence is not much longer than the claim (in a long sentence the negation is
    usually about something else). A word the sentence uses twice, once negated ("wants to
    implant them, but does not want money"), proves nothing. When both are negated, one must hold
    one negation more than the other ("does not work without a connection" against "works
    without a connection"). A sentence that starts with a pronoun also holds the words of the
    sentence before it that the claim names in its place ("The R5 works on gravel" against "The
    R5 handles slopes. It does not work on gravel").
    """
    if best is None or len(words) < 0.5 * len(best.words):
        return False
    named = words - best.words
    if best_cov < NEGATION_COVERAGE and len(named - best.antecedent) > len(words) * (
        1 - NEGATION_COVERAGE
    ):
        return False
    claim_negated = negated_words(claim)
    if not is_negated(claim):
        used = content_words(best.text)
        return any(used.count(word) == 1 for word in best.negated & words)
    if not best.negated:
        return bool(claim_negated & best.words)
    if len(best.words) > len(words) + 2:
        return False  # with negations on both sides, only sentences that say nothing more
    return negation_count(claim) % 2 != negation_count(best.text) % 2


CLOSE = 3
"""How many of the sentences holding half of a claim's words the contrast checks read."""


def _best_sentences(
    words: frozenset[str], index: ContextIndex
) -> tuple[Sentence | None, float, float, float, tuple[Sentence, ...]]:
    """The context sentence holding most of the claim's words, and the shares it holds.

    Returned: that sentence, its share of the claim's words, then the share the best two and the
    best three sentences hold together, picked greedily (summaries often fuse sentences; words
    scattered over many sentences are a weaker support); and the (at most :data:`CLOSE`)
    sentences that hold at least half of the claim's words, most first.
    """
    if not words:
        return None, 0.0, 0.0, 0.0, ()
    overlap: dict[int, int] = {}
    for word in words:
        for i in index.postings.get(word, ()):
            overlap[i] = overlap.get(i, 0) + 1
    if not overlap:
        return None, 0.0, 0.0, 0.0, ()
    ranked = sorted(
        (i for i in overlap if 2 * overlap[i] >= len(words)), key=lambda i: (-overlap[i], i)
    )
    close = tuple(index.sentences[i] for i in ranked[:CLOSE])
    best_id = min(overlap, key=lambda i: (-overlap[i], i))
    best = index.sentences[best_id]
    n = len(words)
    covered = overlap[best_id]
    rest = words - best.words
    shares = []
    for _ in range(2):
        gains = {i: len(rest & index.sentences[i].words) for i in overlap if i != best_id}
        pick = min(gains, key=lambda i: (-gains[i], i), default=None)
        if pick is not None and gains[pick]:
            covered += gains[pick]
            rest = rest - index.sentences[pick].words
        shares.append(covered / n)
    return best, overlap[best_id] / n, shares[0], shares[1], close
