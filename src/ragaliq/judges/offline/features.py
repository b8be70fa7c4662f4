"""What the offline judge measures about a claim against its context.

The context is indexed once per case (sentences, content words, numbers, names, word pairs,
verbatim word triples, and any JSON record); every claim then gets a short vector of hand-made
features plus the findings behind them (the words, numbers and names the context lacks, the
record fields it contradicts), so the verdict's reason can say what was found, not just a score.

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

from ragaliq.judges.offline.records import Record, RecordFindings, parse_record
from ragaliq.text.quantities import Quantity, quantities
from ragaliq.text.words import (
    CALENDAR,
    NEGATIONS,
    STOPWORDS,
    calendar_words,
    content_tokens,
    content_words,
    drop_answer_word,
    is_negated,
    names,
    negated_words,
    negation_count,
    split_context,
    tokens,
    word_key,
)
from ragaliq.text.words import stem as stem_of

__all__ = ["FEATURES", "Analysis", "ContextIndex", "Sentence", "analyse_claims"]

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

PAIR_WINDOW = 3
"""Two context words at most this far apart form a pair a claim's adjacent words can match."""

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


GENERIC = frozenset(
    """
    however despite although though whereas meanwhile moreover furthermore additionally addition
    additional overall thus therefore hence instead also still yet even well already including
    various several numerous particular particularly specific specifically certain currently
    recently recent latest new way ways thing things lot lots kind type roughly rough approximately
    approximate around nearly almost circa
    """.split()
)
"""Discourse and filler words: a paraphrase adds them freely, so they are never "novel"."""
ALIASES = (
    "us usa america american americans united states",
    "uk britain british england united kingdom",
    "un united nations",
    "eu europe european union",
    "isis isil islamic state daesh levant",
)
"""Names that stand for one another: a context that has one of a group knows them all."""
_ALIAS_GROUPS = tuple(frozenset(group.split()) for group in ALIASES)
_ALIAS_KEYS = (
    ("us", "u.s", "usa", "america", "american"),
    ("uk", "u.k", "britain", "british"),
    ("un", "u.n"),
    ("eu", "european"),
    ("isis", "isil", "daesh"),
)
_ACRONYM = re.compile(r"\b(?:[A-Za-z]\.){2,}")
_DOTTED = re.compile(r"\b[A-Za-z]+(?:\.[A-Za-z]+)+\b")
"""A word written with inner full stops (``Ph.D``), to be known without them (``phd``)."""
NEAR_PREFIX = 5
"""A novel word sharing this many first letters with a context word is a near match."""


@dataclass(frozen=True, slots=True)
class Count:
    """A number of things: "three children" is 3 of ``child``."""

    quantity: Quantity
    noun: str
    """The word key of what is counted."""
    written: str
    """The number and the noun as the text writes them."""


_NOUN_AFTER = re.compile(r"\s+([A-Za-z][A-Za-z'-]*)")


def counts_of(text: str, found: Sequence[Quantity]) -> list[Count]:
    """The things a text counts: a bare number (at least 2) followed at once by a word."""
    out = []
    for quantity in found:
        if quantity.unit is not None or quantity.value < 2 or quantity.value != int(quantity.value):
            continue
        end = quantity.start + len(quantity.written)
        noun = _NOUN_AFTER.match(text, end)
        if noun is None or noun[1].lower() in STOPWORDS or noun[1].lower() in NEGATIONS:
            continue
        key = word_key(noun[1].lower())
        out.append(Count(quantity, key, text[quantity.start : noun.end()]))
    return out


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of the context (or one field of a record), indexed."""

    text: str
    words: frozenset[str]
    quantities: tuple[Quantity, ...]
    """The figures it states (``24V``, ``sixty days``)."""
    negated: frozenset[str]
    """The content words a negation in the sentence governs."""
    calendar: frozenset[str]
    """The weekdays and months it names, in full (``Jan`` is ``january``)."""
    counts: tuple[Count, ...] = ()
    """The things it counts ("two children", "14 routes")."""


@dataclass(frozen=True)
class ContextIndex:
    """Everything about a case's context that claims are compared with; built once per case."""

    sentences: tuple[Sentence, ...]
    words: frozenset[str]
    prefixes: frozenset[str]
    surface: frozenset[str]
    """Every token of the context, lower case, unstemmed (for names)."""
    figures: dict[str, tuple[Quantity, ...]]
    """The context's figures by value (``24``)."""
    measures: dict[str, tuple[Quantity, ...]]
    """The context's figures with a unit, by what they measure (``time``, ``usd``)."""
    calendar: frozenset[str]
    """The weekdays and months the context names or implies ("weekdays" names Monday)."""
    counts: dict[str, frozenset[str]]
    """What the context counts, and by which numbers (``child``: ``2``, ``3``)."""
    postings: dict[str, frozenset[int]]
    """Content word to the sentences holding it."""
    pairs: frozenset[tuple[str, str]]
    trigrams: frozenset[tuple[str, str, str]]
    records: tuple[Record, ...]
    asked: frozenset[str]
    """Words of the query: a name the question uses is not an invention of the answer."""

    @classmethod
    def build(cls, chunks: Sequence[str], query: str = "") -> ContextIndex:
        """Index the chunks; a chunk that is one JSON object is read as a record."""
        texts: list[str] = []
        records: list[Record] = []
        for chunk in chunks:
            record = parse_record(chunk)
            if record is None:
                texts.extend(split_context(chunk))
                continue
            records.append(record)
            texts.extend(record.facts)
            for prose in record.prose:
                texts.extend(split_context(prose))
        sentences: list[Sentence] = []
        postings: dict[str, list[int]] = {}
        pairs: set[tuple[str, str]] = set()
        trigrams: set[tuple[str, str, str]] = set()
        surface: set[str] = set()
        figures: dict[str, list[Quantity]] = {}
        counted: dict[str, set[str]] = {}
        measures: dict[str, list[Quantity]] = {}
        calendar: set[str] = set()
        for text in texts:
            words = content_words(text)
            for i, word in enumerate(words):
                for other in words[i + 1 : i + 1 + PAIR_WINDOW]:
                    pairs.add((word, other))
                    pairs.add((other, word))
            raw = tokens(text)
            surface.update(raw)
            surface.update(piece for token in raw if "-" in token for piece in token.split("-"))
            surface.update(m.replace(".", "").lower() for m in _ACRONYM.findall(text))
            surface.update(m.replace(".", "").lower() for m in _DOTTED.findall(text))
            trigrams.update(zip(raw, raw[1:], raw[2:], strict=False))
            found = tuple(quantities(text))
            for quantity in found:
                figures.setdefault(quantity.key, []).append(quantity)
                if quantity.dimension is not None:
                    measures.setdefault(quantity.dimension, []).append(quantity)
            days = frozenset(full for full, _ in calendar_words(text))
            calendar |= days | _implied_days(text)
            index = len(sentences)
            for word in set(words):
                postings.setdefault(word, []).append(index)
            sentences.append(
                Sentence(
                    text,
                    frozenset(words),
                    found,
                    negated_words(text),
                    days,
                    counts=tuple(counts_of(text, found)),
                )
            )
            for count in sentences[-1].counts:
                counted.setdefault(count.noun, set()).add(count.quantity.key)
        for keys, group in zip(_ALIAS_KEYS, _ALIAS_GROUPS, strict=True):
            if not surface.isdisjoint(keys):
                surface |= group
        prefixes = {w[:NEAR_PREFIX] for w in postings if len(w) >= NEAR_PREFIX}
        prefixes |= {w[:NEAR_PREFIX] for w in surface if len(w) >= NEAR_PREFIX}
        return cls(
            sentences=tuple(sentences),
            words=frozenset(postings),
            prefixes=frozenset(prefixes),
            surface=frozenset(surface),
            figures={key: tuple(found) for key, found in figures.items()},
            measures={key: tuple(found) for key, found in measures.items()},
            calendar=frozenset(calendar),
            counts={noun: frozenset(values) for noun, values in counted.items()},
            postings={word: frozenset(ids) for word, ids in postings.items()},
            pairs=frozenset(pairs),
            trigrams=frozenset(trigrams),
            records=tuple(records),
            asked=frozenset(tokens(query)),
        )

    def knows(self, word: str) -> bool:
        """Whether a content word (stemmed) or a word as written occurs in the context."""
        return word in self.words or word in self.surface or word in GENERIC

    def nearly_knows(self, word: str) -> bool:
        """Whether a context word starts like this one (``criticism`` and ``criticised``)."""
        return len(word) >= NEAR_PREFIX and word[:NEAR_PREFIX] in self.prefixes

    def states(self, figure: Quantity) -> bool:
        """Whether the context states this figure, in any unit or spelling that says the same."""
        same_value = self.figures.get(figure.key, ())
        if any(figure.stated_by(other) for other in same_value):
            return True
        if figure.dimension is None:
            return False
        return any(figure.stated_by(other) for other in self.measures.get(figure.dimension, ()))


_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday".split())
_IMPLIED_DAYS = (
    (re.compile(r"\bweekdays?\b", re.I), _WEEKDAYS),
    (re.compile(r"\bweekends?\b", re.I), frozenset(("saturday", "sunday"))),
    (
        re.compile(
            r"\b(?:daily|every ?day|(?:seven|7) days a week|all week|24/7|round the clock)\b",
            re.I,
        ),
        _WEEKDAYS | {"saturday", "sunday"},
    ),
)


_DAY_ORDER = (
    "monday tuesday wednesday thursday friday saturday sunday".split(),
    "january february march april may june july august september october november december".split(),
)
_SPAN = re.compile(
    rf"\b({'|'.join(sorted(CALENDAR, key=len, reverse=True))})\.?"
    rf"\s*(?:-|\u2013|to|through|thru|until|till)\s*"
    rf"({'|'.join(sorted(CALENDAR, key=len, reverse=True))})\b",
    re.I,
)


def _implied_days(text: str) -> frozenset[str]:
    """The weekdays and months a text names by a span or a word for several.

    "Monday to Friday" names Tuesday too, "weekdays" names Monday, "daily" every day.
    """
    days: set[str] = set()
    for pattern, named in _IMPLIED_DAYS:
        if pattern.search(text):
            days |= named
    for match in _SPAN.finditer(text):
        first, last = CALENDAR[match[1].lower()], CALENDAR[match[2].lower()]
        for order in _DAY_ORDER:
            if first in order and last in order:
                k = order.index(first)
                while order[k] != last:
                    days.add(order[k])
                    k = (k + 1) % len(order)
    return frozenset(days)


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


def _analyse(claim: str, index: ContextIndex) -> Analysis:
    text = drop_answer_word(claim)
    pairs = content_tokens(text)
    words = [stem for stem, _ in pairs]
    word_set = frozenset(words)
    n = len(word_set)
    state: list[int] = []  # 0 known, 1 nearly known, 2 novel
    for stem, surface in pairs:
        lower = surface.lower()
        if index.knows(stem) or index.knows(lower):
            state.append(0)
        elif index.nearly_knows(stem) or index.nearly_knows(lower):
            state.append(1)
        else:
            state.append(2)
    novel = frozenset(stem for stem, s in zip(words, state, strict=True) if s == 2)
    near = frozenset(stem for stem, s in zip(words, state, strict=True) if s == 1) - novel
    novel_surface = list(
        dict.fromkeys(surface for (_, surface), s in zip(pairs, state, strict=True) if s == 2)
    )
    best, best_cov, pair_cov, cover3, close = _best_sentences(word_set, index)
    known = [
        stem for stem, s in zip(words, state, strict=True) if s == 0 and stem in index.postings
    ]
    links = list(itertools.pairwise(known))
    cooc_share = (
        sum(
            not index.postings[a].isdisjoint(index.postings[b]) if a != b else True
            for a, b in links
        )
        / len(links)
        if links
        else best_cov
    )
    context_cov = 1 - len(novel) / n if n else 0.0

    run = longest = 0
    for s in state:
        run = run + 1 if s == 2 else 0
        longest = max(longest, run)
    bigrams = list(itertools.pairwise(words))
    bigram_share = (
        sum(pair in index.pairs for pair in bigrams) / len(bigrams) if bigrams else best_cov
    )
    raw = tokens(text)
    trigrams = list(zip(raw, raw[1:], raw[2:], strict=False))
    trigram_share = (
        sum(gram in index.trigrams for gram in trigrams) / len(trigrams) if trigrams else best_cov
    )
    claim_names = list(dict.fromkeys(names(text)))
    novel_names = [
        name
        for name in claim_names
        if not (
            index.knows(name)
            or index.knows(stem_of(name))
            or index.nearly_knows(name)
            or name in index.asked
        )
    ]
    claim_quantities = quantities(text)
    claim_figures = [q for q in claim_quantities if not q.in_words or q.unit is not None]
    miscounts = [
        (count, other)
        for count in counts_of(text, claim_quantities)
        if best is not None and count.quantity.key not in index.counts.get(count.noun, ())
        for other in best.counts
        if other.noun == count.noun
    ]
    novel_figures = [q for q in claim_figures if not index.states(q)]
    negation_flip = _negation_flip(text, word_set, best, best_cov)
    findings: RecordFindings | None = None
    if index.records:
        findings = RecordFindings()
        for record in index.records:
            found = record.check(text)
            findings.confirmed += found.confirmed
            findings.contradicted += found.contradicted
            findings.unknown += found.unknown
            findings.absent += found.absent
            findings.evidence += found.evidence
    novel_share = len(novel) / n if n else 0.0
    features = [
        math.log1p(n),
        novel_share,
        math.log1p(len(novel)),
        math.log1p(len(near)),
        best_cov,
        pair_cov,
        cover3,
        cooc_share,
        bigram_share,
        trigram_share,
        float(min(len(novel_names), 3)),
        float(min(len(novel_figures), 3)),
        1.0 if negation_flip else 0.0,
        math.log1p(longest),
        1.0 if _META.search(text) else 0.0,
        float(min(len(_HEDGE.findall(text)), 2)),
        float(min(len(_ADVICE.findall(text)), 2)),
        float(min(len(findings.contradicted), 3)) if findings else 0.0,
        float(min(len(findings.unknown), 3)) if findings else 0.0,
        float(min(len(findings.confirmed), 3)) if findings else 0.0,
        0.0,  # response_novel_share, filled in by analyse_claims
        0.0,  # position
        0.0,  # first
        float(min(len(claim_figures) - len(novel_figures), 3)),
        float(min(len(claim_names) - len(novel_names), 3)),
        float(min(len(findings.absent), 3)) if findings else 0.0,
    ]
    return Analysis(
        claim=claim,
        text=text,
        words=word_set,
        novel=novel,
        best=best,
        close=close,
        best_cov=best_cov,
        context_cov=context_cov,
        novel_words=novel_surface,
        novel_names=novel_names,
        figures=claim_figures,
        novel_figures=novel_figures,
        miscounts=miscounts,
        novel_dates=[
            (full, written) for full, written in calendar_words(text) if full not in index.calendar
        ],
        negation_flip=negation_flip,
        record=findings,
        features=features,
    )


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
    without a connection").
    """
    if best is None or best_cov < 0.9 or len(words) < 0.5 * len(best.words):
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
