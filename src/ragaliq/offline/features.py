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

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragaliq.offline.context import (
    ContextIndex,
    Count,
    Sentence,
    counts_of,
)
from ragaliq.offline.days import implied_days
from ragaliq.offline.grounding import Evidence, evidence_of, ungrounded
from ragaliq.offline.overlap import (
    KNOWN,
    NEAR,
    NOVEL,
    Found,
    best_sentences,
    cooccurrence,
    longest_run,
    ngram_shares,
)
from ragaliq.offline.records import RecordFindings
from ragaliq.text.quantities import Quantity, quantities
from ragaliq.text.sentences import CONTINUATION
from ragaliq.text.words import (
    calendar_words,
    content_tokens,
    content_words,
    drop_answer_word,
    is_negated,
    names,
    negated_words,
    negation_count,
    word_key,
)

__all__ = ["FEATURES", "MAX_CLAIM_WORDS", "Analysis", "analyse_claims"]

MAX_CLAIM_WORDS = 100
"""A claim with more content words than this (RAGTruth's longest has 50) is not compared with
the context: too long to check offline, it is not verifiable offline."""

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
    days: list[tuple[str, str]] = field(default_factory=list)
    """The weekdays and months the claim names or implies, each with the words that say it
    ("Monday", "daily", "Monday to Sunday")."""
    evidence: Evidence | None = None
    """The closest sentence with its neighbours on the same subject (:mod:`.grounding`)."""
    ungrounded: list[str] = field(default_factory=list)
    """The claim's content words, as written, that its evidence does not state."""
    too_long: bool = False
    """The claim has more than :data:`MAX_CLAIM_WORDS` content words, and was not compared."""
    figures_near: bool = True
    """Whether each figure of a claim about a record is stated where the claim rests (its
    closest field or sentence and their neighbours), or is one the record's fields were read
    for: a figure found only in another field may measure something else."""
    whole: str | None = None
    """The sentence the claim is the first part of, with the parts split off it ("… including
    a bag.") joined back: the contrast checks read a statement with all it says of its things.
    None for a part that goes on from another claim, whose statement is checked there."""
    features: list[float] = field(default_factory=list)


def analyse_claims(claims: Sequence[str], index: ContextIndex) -> list[Analysis]:
    """Analyse every claim of a response; features that span the response are filled in too.

    A claim that goes on from the one before it ("… including a bag.") is looked for in the
    context with that claim's words too, so that its evidence is where its statement's is.
    """
    analyses: list[Analysis] = []
    first: Analysis | None = None
    for claim in claims:
        going_on = claim.startswith(CONTINUATION)
        analysis = _analyse(claim, index, first.words if going_on and first else frozenset())
        if not going_on:
            first = analysis
            analysis.whole = analysis.text
        elif first is not None:
            first.whole = f"{(first.whole or first.text).rstrip('.')} {analysis.text}"
        analyses.append(analysis)
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


def _days(text: str) -> list[tuple[str, str]]:
    """The weekdays and months a claim names, then those it implies, each with its words."""
    named = calendar_words(text)
    said = {full for full, _ in named}
    return named + [(day, words) for day, words in implied_days(text) if day not in said]


def _too_long(claim: str, text: str, words: frozenset[str]) -> Analysis:
    return Analysis(
        claim=claim,
        text=text,
        words=words,
        novel=frozenset(),
        best=None,
        close=(),
        best_cov=0.0,
        context_cov=0.0,
        novel_words=[],
        novel_names=[],
        figures=[],
        novel_figures=[],
        novel_dates=[],
        negation_flip=False,
        record=None,
        too_long=True,
        features=[0.0] * len(FEATURES),
    )


def _analyse(claim: str, index: ContextIndex, head: frozenset[str]) -> Analysis:
    text = drop_answer_word(claim.removeprefix(CONTINUATION))
    pairs = content_tokens(text)
    words = [stem for stem, _ in pairs]
    word_set = frozenset(words)
    index.work.spend(len(pairs) + 1)
    if len(word_set) > MAX_CLAIM_WORDS:
        return _too_long(claim, text, word_set)
    n = len(word_set)
    state = [_known(stem, surface.lower(), index) for stem, surface in pairs]
    novel = frozenset(stem for stem, s in zip(words, state, strict=True) if s == NOVEL)
    near = frozenset(stem for stem, s in zip(words, state, strict=True) if s == NEAR) - novel
    found = best_sentences(word_set | head, index)
    best, best_cov, pair_cov, cover3, close = (
        found.best,
        found.best_cov,
        found.cover2,
        found.cover3,
        found.close,
    )
    evidence = evidence_of(found.best_id, index, word_set)
    claim_names = list(dict.fromkeys(names(text)))
    spelt = _spelt_names(text)
    novel_names = [
        name
        for name in claim_names
        if not index.knows_name(name, spelt.get(name, "")) and not _named_place(name, spelt, index)
    ]
    claim_quantities = quantities(text)
    claim_figures = [q for q in claim_quantities if _is_figure(q, record=bool(index.records))]
    record = _record_findings(text, found, index)
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
                surface for (_, surface), s in zip(pairs, state, strict=True) if s == NOVEL
            )
        ),
        novel_names=novel_names,
        figures=claim_figures,
        novel_figures=[q for q in claim_figures if not index.states(q)],
        miscounts=_miscounts(text, claim_quantities, best, index),
        novel_dates=[
            (full, written) for full, written in calendar_words(text) if full not in index.calendar
        ],
        days=_days(text),
        negation_flip=_negation_flip(text, word_set, best, best_cov),
        record=record,
        hours=any(record.weeks for record in index.records),
        evidence=evidence,
        ungrounded=ungrounded(
            pairs,
            evidence=evidence,
            names=claim_names,
            figures=claim_quantities,
            hours=record is not None and record.hours_agree,
            initials=index.shorts_of(claim_names),
        ),
    )
    if evidence is not None and evidence.record:
        local = evidence_of(found.best_id, index, word_set, whole_record=False)
        read = record.figures if record is not None else []
        analysis.figures_near = local is not None and all(
            q.key in read or any(q.stated_by(other) for other in local.quantities)
            for q in claim_figures
        )
    bigram_share, trigram_share = ngram_shares(words, text, found, index, best_cov)
    overlap = _Overlap(
        near=len(near),
        pair_cov=pair_cov,
        cover3=cover3,
        cooc_share=cooccurrence(words, state, found, index, best_cov),
        bigram_share=bigram_share,
        trigram_share=trigram_share,
        longest_novel_run=longest_run(state, NOVEL),
        names_found=len(claim_names) - len(novel_names),
    )
    analysis.features = _vector(analysis, overlap)
    return analysis


def _known(stem: str, lower: str, index: ContextIndex) -> int:
    if index.knows(stem) or index.knows(lower):
        return KNOWN
    if index.nearly_knows(stem) or index.nearly_knows(lower):
        return NEAR
    return NOVEL


_NAME_RUN = re.compile(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+")


def _spelt_names(text: str) -> dict[str, str]:
    """Each word of a name of several words, to the whole name in lower case (``new york``)."""
    spelt: dict[str, str] = {}
    for match in _NAME_RUN.finditer(text):
        whole = match.group(0).lower()
        for word in whole.split():
            spelt.setdefault(word, whole)
    return spelt


PLACE_HEADS = frozenset(
    """
    county city state province region district river lake mountain mount island bay valley
    street road avenue square
    """.split()
)
"""Words that say what kind of place a name is: "Tulsa County" names the Tulsa the context
writes, and the word the context leaves out is no new name (it is a word its evidence must
state, or the claim is not verifiable)."""


def _named_place(name: str, spelt: dict[str, str], index: ContextIndex) -> bool:
    """Whether a name word is a kind of place after a name the context knows."""
    whole = spelt.get(name, "").split()
    return (
        name in PLACE_HEADS
        and len(whole) > 1
        and all(index.knows_name(word, "") for word in whole if word != name)
    )


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


MAX_RECORDS = 8
"""A claim is checked against every record of a context with at most this many; in a context
with more, against the records its candidate sentences belong to."""


def _record_findings(text: str, found_in: Found, index: ContextIndex) -> RecordFindings | None:
    """What the context's records say about the claim, all together; None without a record."""
    if not index.records:
        return None
    records = index.records
    if len(records) > MAX_RECORDS:
        owners = {index.sentences[i].record for i in found_in.overlaps}
        records = tuple(r for k, r in enumerate(records) if k in owners)
    findings = RecordFindings()
    for record in records:
        found = record.check(text, index.work)
        findings.confirmed += found.confirmed
        findings.contradicted += found.contradicted
        findings.unknown += found.unknown
        findings.absent += found.absent
        findings.evidence += found.evidence
        findings.figures += found.figures
        findings.hours_agree = findings.hours_agree or found.hours_agree
        findings.uncertain += found.uncertain
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
    R5 handles slopes. It does not work on gravel"). A negation that governs a name ("without
    Wayne") says who took no part, which a claim about that name in another part does not deny.
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
        named_keys = {word_key(name) for name in names(best.text)}
        return any(used.count(word) == 1 for word in (best.negated & words) - named_keys)
    if not best.negated:
        return bool(claim_negated & best.words)
    if len(best.words) > len(words) + 2:
        return False  # with negations on both sides, only sentences that say nothing more
    return negation_count(claim) % 2 != negation_count(best.text) % 2
