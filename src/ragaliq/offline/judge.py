"""The offline judge: deterministic verdicts from grounding findings, with no network.

It is a heuristic, not a language model, and says so in its name and in every report. It exists
so that a new user sees the gate work without an API key, so that fork PRs without secrets still
get a first pass, and as the cheap first stage of the cascade in front of Claude.

Each claim (a sentence, clause, list item or table row of the response, as
:mod:`ragaliq.text.sentences` splits it; a leading "Yes," or "No." is read as the answer it is)
is measured against the context (see ``features``). The judge **accuses only with a reason that
is true of the context**; where it cannot tell, it says so. In this order:

1. **Findings** (:mod:`.findings`): a figure the context does not state (units and spellings
   read alike), a weekday or month that differs, a name the context lacks, a negation or a
   requirement flipped, an opposite word, a widened scope, two names in swapped roles, or a JSON
   record's field contradicted, null or missing. The claim is CONTRADICTED, PARTIALLY_SUPPORTED
   or NOT_ENOUGH_INFO, and its reason quotes what the claim and the context say.
2. **Verbatim support** (every content word in one sentence, most word triples as written) is a
   confident SUPPORTED.
3. Otherwise a small logistic regression shipped as data (``model.json``, one for prose and one
   for records, reproduced from the tune part of RAGTruth by ``scripts/train_offline.py``) gives
   the probability that the claim is hallucinated. Each kind of case (:func:`case_kind`: an answer
   to a question, prose with no question, a record) has its own threshold. Below it the claim is
   SUPPORTED (and flagged ``offline_confident`` when far below, unless it is about a record and
   uses a word, name or figure the record lacks), unless it adds new content to an
   answer that otherwise keeps to the context (:func:`adds_new_content`); otherwise the claim is
   **not verifiable offline**: NOT_ENOUGH_INFO flagged ``not_verifiable_offline``
   (:data:`ragaliq.models.NOT_VERIFIABLE`), which the evaluators leave out of their scores and
   the gate never lists as hallucinated, because a word the context lacks is as often a
   paraphrase as an invention, and a lexical judge cannot tell which.

Every verdict quotes the closest context sentence (or record field) and says what was, or was not,
found. Measured on the held-out part of RAGTruth by ``benchmarks/ragtruth.py`` and on fresh
single-sentence probes by ``benchmarks/offline_probes.py``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from typing import Any

from ragaliq.evaluators.questions import CHUNKS, EXTRACT, FACTS, RELEVANCE, VERIFY
from ragaliq.judges.base import (
    Answers,
    Question,
    Questions,
    check_chunk_count,
    check_verdict_count,
    no_context_verdicts,
)
from ragaliq.models import (
    NOT_VERIFIABLE,
    ChunkRating,
    ChunkRatings,
    ClaimsResult,
    ClaimVerdict,
    JudgeInfo,
    JudgeResult,
    RelevanceResult,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)
from ragaliq.offline.context import ContextIndex
from ragaliq.offline.features import FEATURES, MAX_CLAIM_WORDS, Analysis, analyse_claims
from ragaliq.offline.findings import find
from ragaliq.offline.grounding import polarity_gap
from ragaliq.offline.model import MODEL_RESOURCE, ClaimModel, load_model
from ragaliq.offline.relevance import rate_relevance
from ragaliq.offline.sentence_claims import extract_sentence_claims
from ragaliq.offline.settling import record_lacks, settled
from ragaliq.offline.spans import Governor, Span, copied_span
from ragaliq.offline.work import Work, collection_paused
from ragaliq.text.citations import CitationReader, without_citations
from ragaliq.text.words import (
    content_words,
    word_key,
)

__all__ = [
    "OFFLINE_JUDGE_NAME",
    "OfflineJudge",
    "is_verbatim",
    "polarity_of",
    "record_lacks",
    "settled",
]

OFFLINE_JUDGE_NAME = "offline-heuristic"
CHUNK_QUERY_SHARE = 0.5
"""Share of the query's content words a chunk must hold to be rated relevant by the heuristic."""
DRAWN_ON = 0.8
"""Share of a response sentence's content words a chunk must hold for the response to draw on it."""
MAX_EVIDENCE_CHARS = 400
CONFIDENT = "offline_confident"
"""Flag on a SUPPORTED verdict the offline judge is sure of: the cascade settles it offline."""
_TEXT_SOURCES = (
    "words.py",
    "lexicon.py",
    "citations.py",
    "sentences.py",
    "tables.py",
    "quantities.py",
)
"""The text readers the offline verdicts depend on besides this package: a change to any of them,
or to a module of this package, is a new judge version."""


def _sources() -> list[tuple[str, str]]:
    """What the judge's version digests, as (package, file name).

    Every module of this package and its model, and the text readers it uses.
    """
    own = sorted(
        entry.name
        for entry in resources.files(__package__).iterdir()
        if entry.name.endswith(".py") or entry.name == MODEL_RESOURCE
    )
    return [*((__package__, name) for name in own), *(("ragaliq.text", n) for n in _TEXT_SOURCES)]


def _version() -> str:
    digest = hashlib.sha256()
    for package, name in _sources():
        digest.update(name.encode())
        digest.update(resources.files(package).joinpath(name).read_bytes())
    return digest.hexdigest()[:12]


class OfflineJudge:
    """A deterministic judge by lexical, numeric and record grounding; no key, network or cost."""

    def __init__(self) -> None:
        self.model = load_model()
        self._info = JudgeInfo(
            provider="offline", model=OFFLINE_JUDGE_NAME, prompt_version=_VERSION, heuristic=True
        )
        self.work_spent = 0
        """The units of work spent on every case verified so far (:mod:`.work`)."""

    @property
    def info(self) -> JudgeInfo:
        return self._info

    def process_factory(self) -> Callable[[], OfflineJudge]:
        """Build an equal judge in another process (the runner spreads this judge over cores)."""
        return OfflineJudge

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        """The response's own sentences: known without any call."""
        return tuple(extract_sentence_claims(case.response))

    def estimate(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Usage:
        """Free: no call, no token, no cost."""
        return Usage()

    def version_of(self, question: Question[Any]) -> str:
        """Every answer comes from the same rules and model: the judge's own version."""
        return self._info.prompt_version

    async def ask(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Answers:
        """Each question answered by the method below that answers it; ``sample`` is ignored."""
        found: dict[str, JudgeResult] = {}
        failed: dict[str, str] = {}
        for question in questions:
            if question is EXTRACT:
                found[question.name] = await self.extract_claims(case)
            elif question is VERIFY:
                found[question.name] = await self.verify_claims(case, claims)
            elif question is FACTS:
                facts = await self.verify_claims(case, (), facts=case.needed_facts)
                found[question.name] = VerificationResult(verdicts=facts.fact_verdicts)
            elif question is RELEVANCE:
                found[question.name] = await self.evaluate_relevance(case)
            elif question is CHUNKS:
                found[question.name] = await self.rate_chunks(case)
            else:
                failed[question.name] = "the offline judge cannot answer it; judge with Claude"
        usage = sum((answer.usage for answer in found.values()), Usage())
        return Answers(found=found, failed=failed, usage=usage)

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        return ClaimsResult(claims=tuple(extract_sentence_claims(case.response)))

    async def verify_claims(
        self,
        case: TestCase,
        claims: Sequence[str],
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> VerificationResult:
        """Verdicts for the claims, and apart from them for the needed facts.

        ``sample`` is ignored, as every repetition is the same. The facts are analysed on their
        own, so that they do not change the response-wide features of the claims.
        """
        if not case.has_context:
            return no_context_verdicts(claims, facts)
        work = Work(
            len(case.query)
            + sum(len(chunk) for chunk in case.context)
            + sum(len(text) for text in (*claims, *facts))
        )
        markers = CitationReader.of(
            chunks=len(case.context), ids=[ref.id for ref in case.chunk_refs]
        )
        stated = [_stated(claim, markers) for claim in claims]
        try:
            with collection_paused():  # no await inside: nothing else runs meanwhile
                verdicts, fact_verdicts = self._judged(case, claims, stated, facts, work)
        finally:
            self.work_spent += work.spent
        result = VerificationResult(verdicts=verdicts, fact_verdicts=fact_verdicts)
        return check_verdict_count(claims, result, facts)

    def _judged(
        self,
        case: TestCase,
        claims: Sequence[str],
        stated: Sequence[str],
        facts: Sequence[str],
        work: Work,
    ) -> tuple[tuple[ClaimVerdict, ...], tuple[ClaimVerdict, ...]]:
        """The verdicts on the claims (as written, judged as ``stated``) and on the facts.

        The case's context index lives only here, so that it is freed as this returns, before
        the cycle collector is let run again, and the collector never walks it.
        """
        index = ContextIndex.build(case.context, query=case.query, work=work)
        model = self.model.for_index(index)
        verdicts = tuple(
            _naming_chunks(_verdict(analysis, model, index), analysis, index, claim)
            for claim, analysis in zip(claims, analyse_claims(stated, index), strict=True)
        )
        fact_verdicts = tuple(
            _naming_chunks(_verdict(analysis, model, index), analysis, index, fact)
            for fact, analysis in zip(facts, analyse_claims(facts, index), strict=True)
        )
        return verdicts, fact_verdicts

    async def rate_chunks(self, case: TestCase) -> ChunkRatings:
        """A heuristic rating per chunk: the query's key terms, and whether the response uses it."""
        query = set(content_words(case.query))
        sentences = [set(content_words(s)) for s in extract_sentence_claims(case.response)]
        ratings = []
        for chunk in case.context:
            words = set(content_words(chunk))
            held = len(query & words)
            drawn = [s for s in sentences if s and len(s & words) >= DRAWN_ON * len(s)]
            if query and held >= CHUNK_QUERY_SHARE * len(query):
                reason = f"holds {held} of the query's {len(query)} key terms"
                relevant = True
            elif drawn:
                reason = f"the response draws on it ({len(drawn)} of its sentences)"
                relevant = True
            else:
                reason = (
                    f"holds {held} of the query's {len(query)} key terms, and the response "
                    "draws on none of it"
                )
                relevant = False
            ratings.append(
                ChunkRating(relevant=relevant, reason=f"Heuristic: {reason}.", heuristic=True)
            )
        return check_chunk_count(case, ChunkRatings(ratings=tuple(ratings)))

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        rated = rate_relevance(case.query, case.response)
        return RelevanceResult(score=rated.score, reasoning=rated.reasoning)

    async def aclose(self) -> None:
        return None


def _stated(claim: str, markers: CitationReader) -> str:
    """What a claim states: without the markers that cite the case's chunks (``[2]``, ``[doc-7]``).

    A citation says where the response credits the claim from, not what it claims: its number
    is no figure to ground. The verdict keeps the claim as written, markers and all.
    """
    return without_citations(claim, markers.find(claim))


_BACKING = (Verdict.SUPPORTED, Verdict.PARTIALLY_SUPPORTED)


def _naming_chunks(
    verdict: ClaimVerdict, a: Analysis, index: ContextIndex, claim: str
) -> ClaimVerdict:
    """The verdict on ``claim`` as written, naming the chunks that back it.

    The chunks that state the sentence its support rests on back a SUPPORTED or
    PARTIALLY_SUPPORTED claim; any other verdict names none.
    """
    chunks: tuple[int, ...] = ()
    if verdict.verdict in _BACKING and a.best is not None:
        chunks = index.stated_in.get(a.best.text, ())
    return verdict.model_copy(update={"text": claim, "chunks": chunks})


def _verdict(a: Analysis, model: ClaimModel, index: ContextIndex) -> ClaimVerdict:
    """One claim's verdict.

    A finding accuses, full grounding supports, and otherwise the judge says it could not check
    the claim.
    """
    if a.too_long:
        return _not_verifiable(
            a,
            0.5,
            f"it has {len(a.words)} content words, more than the {MAX_CLAIM_WORDS} the offline "
            "judge compares with a context",
            compared=False,
        )
    if not a.words:
        return _not_verifiable(a, 0.5, "the claim has no content words to compare", compared=False)
    p = model.probability(a.features)
    evidence = _evidence(a)
    span = _copied(a, index)
    if span is not None and span.governor is None:
        return ClaimVerdict(
            text=a.claim,
            verdict=Verdict.SUPPORTED,
            evidence=span.sentence[:MAX_EVIDENCE_CHARS],
            reason="The context states this word for word, and nothing else in its sentence "
            "negates, conditions, hedges or attributes it.",
            confidence=round(max(1 - p, 0.95), 3),
            flags=(CONFIDENT,) if settled(a, copied=True) else (),
        )
    found = find(a)
    if found:
        first = found[0]
        more = next((f for f in found[1:] if f.kind != first.kind), None)
        reason = first.reason if more is None else f"{first.reason} {more.reason}"
        return ClaimVerdict(
            text=a.claim,
            verdict=first.verdict,
            evidence=first.evidence or evidence,
            reason=reason,
            confidence=round(max(p, 0.6), 3),
        )
    if a.ungrounded:
        return _not_verifiable(a, p, _ungrounded(a, index))
    if a.record is not None and a.record.uncertain:
        return _not_verifiable(
            a, p, f"{a.record.uncertain[0]}: part of it may hold", compared=False
        )
    if span is not None and span.governor is not None:
        return _not_verifiable(a, p, governed(span.governor), compared=False)
    polarity = polarity_of(a)
    if polarity:
        return _not_verifiable(a, p, polarity, compared=False)
    if is_verbatim(a):
        return ClaimVerdict(
            text=a.claim,
            verdict=Verdict.SUPPORTED,
            evidence=evidence,
            reason="The context states this almost word for word.",
            confidence=round(max(1 - p, 0.95), 3),
            flags=(CONFIDENT,) if settled(a, verbatim=True) else (),
        )
    if p < model.threshold:
        return ClaimVerdict(
            text=a.claim,
            verdict=Verdict.SUPPORTED,
            evidence=evidence,
            reason=_support_reason(a),
            confidence=round(1 - p, 3),
            flags=(CONFIDENT,) if settled(a) else (),
        )
    return _not_verifiable(
        a,
        p,
        "its words are all in the context sentence it rests on, put together unlike the "
        f"context's (the claim model rates it {p:.2f} likely to be hallucinated)",
    )


MAX_SHOWN_WORDS = 6
MAX_GOVERNOR_CHARS = 80


MAX_SPAN_SENTENCES = 4
"""The sentences holding most of a claim's words that are searched for it word for word: a
sentence it is copied from holds all its words, so it is among the first."""


def _copied(a: Analysis, index: ContextIndex) -> Span | None:
    """Where the claim is copied from a prose sentence of its context, if it is."""
    if a.record is not None or not a.close or a.best_cov < 1.0:
        return None

    def searched() -> Iterator[str]:
        for sentence in a.close[:MAX_SPAN_SENTENCES]:
            index.work.spend(len(sentence.raw) + 1)  # its words, each passed once
            yield sentence.text

    return copied_span(a.text, searched())


_GOVERNED = {
    "negation": "says it under a negation",
    "condition": "says it only with a condition or a limit",
    "modal": "says only that it may or will be so",
    "attribution": "says it only as someone's word",
}


def governed(governor: Governor) -> str:
    """Why a claim copied from a sentence is not verifiable: what governs it there."""
    words = governor.words
    if len(words) > MAX_GOVERNOR_CHARS:
        words = words[:MAX_GOVERNOR_CHARS].rsplit(" ", 1)[0] + " \u2026"
    return (
        f'the context sentence it is copied from {_GOVERNED[governor.kind]} ("{words}"), '
        "which the offline judge does not weigh"
    )


def _ungrounded(a: Analysis, index: ContextIndex) -> str:
    """Which words of the claim the context does not state where the rest of it is."""
    shown = a.ungrounded[:MAX_SHOWN_WORDS]
    listed = ", ".join(f'"{w}"' for w in shown)
    if len(a.ungrounded) > len(shown):
        listed += f" and {len(a.ungrounded) - len(shown)} more"
    where = "the context sentence it rests on" if a.best is not None else "the context"
    said = f"{where} does not state {listed}"
    elsewhere = [w for w in shown if index.knows(word_key(w.lower()))]
    if elsewhere and a.best is not None:
        those = ", ".join(f'"{w}"' for w in elsewhere)
        said += f" (the context uses {those} elsewhere, not there)"
    return said


def polarity_of(a: Analysis) -> str:
    """What the claim's evidence does not say of its negations (:func:`.grounding.polarity_gap`).

    A claim about a record whose fields confirmed it needs no more: the record's fields were
    read with the claim's negations (``"OutdoorSeating": false`` confirms "has no outdoor
    seating").
    """
    if a.record is not None and a.record.confirmed and not a.record.contradicted:
        return ""
    return polarity_gap(a.text, a.words, a.evidence)


def _not_verifiable(a: Analysis, p: float, what: str, *, compared: bool = True) -> ClaimVerdict:
    """A claim the judge can neither ground nor fault: NOT_ENOUGH_INFO, flagged as such.

    The reason says first what the judge could not ground (the words its evidence does not
    state), then, when the claim was compared with the context, that nothing faults it either.
    """
    fault = (
        ", and the offline judge found nothing in the context to fault it (no figure, name, "
        "date, negation or other finding)"
        if compared
        else ""
    )
    return ClaimVerdict(
        text=a.claim,
        verdict=Verdict.NOT_ENOUGH_INFO,
        evidence=_evidence(a),
        reason=f"Not verifiable offline: {what}{fault}.",
        confidence=round(p, 3),
        flags=(NOT_VERIFIABLE,),
    )


_VERSION = _version()


VERBATIM_TRIGRAMS = 0.7
"""Share of a claim's word triples found in the context for verbatim support (with every content
word of the claim in one sentence). On the tune part of RAGTruth none of the 358 claims this
settles is hallucinated."""
_TRIGRAMS = FEATURES.index("trigram_share")


def is_verbatim(a: Analysis) -> bool:
    """Whether the context states the claim nearly word for word, in one sentence."""
    return a.best_cov >= 1.0 and a.features[_TRIGRAMS] >= VERBATIM_TRIGRAMS


def _support_reason(a: Analysis) -> str:
    if a.record is not None and a.record.confirmed and not a.record.unknown:
        confirmed = a.record.confirmed[0]
        return confirmed[:1].upper() + confirmed[1:] + "."
    reason = f"One context sentence holds {a.best_cov:.0%} of the claim's content words"
    if a.best_cov < 1:
        reason += f", the whole context {a.context_cov:.0%}"
    return reason + "."


def _evidence(a: Analysis) -> str | None:
    if (
        a.record is not None
        and a.record.evidence
        and (a.record.contradicted or a.record.unknown or a.best_cov < 0.5)
    ):
        return a.record.evidence[0][:MAX_EVIDENCE_CHARS]
    if a.best is None or a.best_cov == 0:
        return None
    return a.best.text[:MAX_EVIDENCE_CHARS]
