"""The offline judge: deterministic verdicts from word and number overlap, with no network.

It is a heuristic, not a model, and says so in its name and in every report. It exists so that
a new user sees the gate work without an API key, and so that fork PRs without secrets can still
get a cheap first pass.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragaliq.judges._text import content_words, is_negated, numbers, split_sentences
from ragaliq.judges.base import check_verdict_count, no_context_verdicts
from ragaliq.models import (
    ClaimsResult,
    ClaimVerdict,
    JudgeInfo,
    RelevanceResult,
    TestCase,
    Verdict,
    VerificationResult,
)

__all__ = ["OFFLINE_JUDGE_NAME", "OfflineJudge"]

OFFLINE_JUDGE_NAME = "offline-heuristic"
_VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]

SUPPORTED_COVERAGE = 0.8
"""Share of a claim's content words one context sentence must hold for SUPPORTED."""
PARTIAL_COVERAGE = 0.5
"""Share of a claim's content words the whole context must hold for PARTIALLY_SUPPORTED."""
RELEVANCE_SATURATION = 0.8
"""Share of the query's content words a response must echo to count as fully relevant."""
MAX_EVIDENCE_CHARS = 400


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    words: frozenset[str]
    numbers: frozenset[str]
    negated: bool


@dataclass(frozen=True, slots=True)
class _ContextIndex:
    sentences: tuple[_Sentence, ...]
    words: frozenset[str]
    numbers: frozenset[str]

    @classmethod
    def build(cls, chunks: Sequence[str]) -> _ContextIndex:
        sentences = tuple(
            _Sentence(
                text=text,
                words=frozenset(content_words(text)),
                numbers=frozenset(numbers(text)),
                negated=is_negated(text),
            )
            for chunk in chunks
            for text in split_sentences(chunk)
        )
        all_words: set[str] = set()
        all_numbers: set[str] = set()
        for sentence in sentences:
            all_words |= sentence.words
            all_numbers |= sentence.numbers
        return cls(sentences, frozenset(all_words), frozenset(all_numbers))


class OfflineJudge:
    """A deterministic judge by lexical and numeric grounding; no key, no network, no cost."""

    def __init__(self) -> None:
        self._info = JudgeInfo(
            provider="offline", model=OFFLINE_JUDGE_NAME, prompt_version=_VERSION, heuristic=True
        )

    @property
    def info(self) -> JudgeInfo:
        return self._info

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        return ClaimsResult(claims=tuple(extract_sentence_claims(case.response)))

    async def verify_claims(
        self, case: TestCase, claims: Sequence[str], *, sample: int = 0
    ) -> VerificationResult:
        if not case.has_context:
            return no_context_verdicts(claims)
        index = _ContextIndex.build(case.context)
        result = VerificationResult(verdicts=tuple(_verify(claim, index) for claim in claims))
        return check_verdict_count(claims, result)

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        query = set(content_words(case.query))
        if not query:
            return RelevanceResult(score=1.0, reasoning="The query has no content words to match.")
        answered = query & set(content_words(case.response))
        coverage = len(answered) / len(query)
        score = round(min(1.0, coverage / RELEVANCE_SATURATION), 3)
        missing = sorted(query - answered)
        reasoning = f"The response uses {len(answered)} of the query's {len(query)} key terms"
        reasoning += f"; missing: {', '.join(missing[:8])}." if missing else "."
        return RelevanceResult(score=score, reasoning=reasoning)

    async def aclose(self) -> None:
        return None


def extract_sentence_claims(response: str) -> list[str]:
    """Sentences of the response that state something: not questions, headings or list intros."""
    claims = []
    for sentence in split_sentences(response):
        if sentence.endswith(("?", ":")):
            continue
        if not content_words(sentence):
            continue
        claims.append(sentence)
    return claims


def _verify(claim: str, index: _ContextIndex) -> ClaimVerdict:
    words = set(content_words(claim))
    claim_numbers = numbers(claim)
    if not words:
        return ClaimVerdict(
            text=claim,
            verdict=Verdict.NOT_ENOUGH_INFO,
            reason="The claim has no content words to ground.",
            confidence=0.3,
        )
    best, best_cov = _best_sentence(words, index)
    context_cov = len(words & index.words) / len(words)
    evidence = best.text[:MAX_EVIDENCE_CHARS] if best is not None and best_cov > 0 else None
    missing_numbers = sorted(claim_numbers - index.numbers)

    if missing_numbers:
        shown = ", ".join(missing_numbers[:3])
        if best is not None and best.numbers and best_cov >= PARTIAL_COVERAGE:
            return ClaimVerdict(
                text=claim,
                verdict=Verdict.CONTRADICTED,
                evidence=evidence,
                reason=f"The context states other figures here; {shown} does not occur in it.",
                confidence=round(0.5 + 0.4 * best_cov, 3),
            )
        return ClaimVerdict(
            text=claim,
            verdict=Verdict.NOT_ENOUGH_INFO,
            evidence=evidence,
            reason=f"The figure {shown} does not occur in the context.",
            confidence=0.7,
        )
    if best is not None and best_cov >= 0.6 and best.negated != is_negated(claim):
        return ClaimVerdict(
            text=claim,
            verdict=Verdict.CONTRADICTED,
            evidence=evidence,
            reason="The closest context sentence says the opposite (one of them is negated).",
            confidence=round(0.4 + 0.4 * best_cov, 3),
        )
    percent = f"{best_cov:.0%}"
    if best_cov >= SUPPORTED_COVERAGE:
        return ClaimVerdict(
            text=claim,
            verdict=Verdict.SUPPORTED,
            evidence=evidence,
            reason=f"One context sentence holds {percent} of the claim's content words.",
            confidence=round(0.5 + 0.5 * best_cov, 3),
        )
    if context_cov >= PARTIAL_COVERAGE:
        return ClaimVerdict(
            text=claim,
            verdict=Verdict.PARTIALLY_SUPPORTED,
            evidence=evidence,
            reason=(
                f"The context holds {context_cov:.0%} of the claim's content words, "
                f"at best {percent} in one sentence."
            ),
            confidence=round(0.4 + 0.3 * context_cov, 3),
        )
    unknown = sorted(words - index.words)
    return ClaimVerdict(
        text=claim,
        verdict=Verdict.NOT_ENOUGH_INFO,
        evidence=evidence,
        reason=(
            f"Only {context_cov:.0%} of the claim's content words occur in the context; "
            f"not found: {', '.join(unknown[:6])}."
        ),
        confidence=round(0.5 + 0.4 * (1 - context_cov), 3),
    )


def _best_sentence(words: set[str], index: _ContextIndex) -> tuple[_Sentence | None, float]:
    best: _Sentence | None = None
    best_overlap = 0
    for sentence in index.sentences:
        overlap = len(words & sentence.words)
        if overlap > best_overlap:
            best, best_overlap = sentence, overlap
    return best, best_overlap / len(words)
