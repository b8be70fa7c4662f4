"""The ``Judge`` protocol: one method, ``ask``, answers every question an evaluator needs.

A judge is asked :class:`~ragaliq.evaluators.questions.Question` objects about a case, several at
once, and answers each (or says why it cannot) in :class:`~ragaliq.evaluators.questions.Answers`.
The cache, the cascade and the runner wrap that one method; a judge that asks a model (Claude)
groups the questions by what they read into as few calls as it can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from ragaliq.errors import JudgeResponseError
from ragaliq.evaluators.questions import Answers, Question, Questions
from ragaliq.models import (
    ChunkRatings,
    ClaimVerdict,
    JudgeInfo,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)
from ragaliq.text.counts import plural
from ragaliq.text.matching import evidence_in_context

__all__ = [
    "Answers",
    "EstimatingJudge",
    "ForkableJudge",
    "Judge",
    "Question",
    "Questions",
    "check_chunk_count",
    "check_verdict_count",
    "no_context_verdicts",
    "verified_evidence",
]


@runtime_checkable
class Judge(Protocol):
    """Something that answers questions about a case: its claims, their verdicts, relevance...

    Implementations never guess an answer: a question they cannot answer validly is in the
    answers' ``failed``, with the reason (or, for every question asked, a raised
    :class:`~ragaliq.errors.JudgeError`); a judge that cannot be used at all raises
    :class:`~ragaliq.errors.JudgeUnavailableError`.
    """

    @property
    def info(self) -> JudgeInfo:
        """Provider, model and prompt version: the provenance recorded in reports."""
        ...

    def version_of(self, question: Question[Any]) -> str:
        """How this judge answers ``question`` (its prompt's version).

        Part of a cached answer's key, so a change to one question is asked again for that
        question alone.
        """
        ...

    async def ask(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Answers:
        """Answer ``questions`` about ``case``.

        ``claims`` are what the questions over claims verify (extracted before); ``sample``
        numbers repeated verifications of the same claims (``judge.repeat``), so that a cache
        keeps each repetition apart; a judge may otherwise ignore it.
        """
        ...

    async def aclose(self) -> None:
        """Release connections and files."""
        ...


@runtime_checkable
class ForkableJudge(Protocol):
    """A judge that runs on the CPU alone and can be built again in another process.

    Optional: the runner spreads such a judge over processes (one per core), each building its
    own copy with :meth:`process_factory`; the verdicts are the same as in one process.
    """

    def process_factory(self) -> Callable[[], Judge]:
        """A picklable callable that builds an equal judge in another process."""
        ...


@runtime_checkable
class EstimatingJudge(Protocol):
    """A judge that can say what asking would cost without doing it (for ``--dry-run``).

    Optional: a judge without these methods is taken to cost nothing.
    """

    def estimate(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Usage:
        """The calls, tokens and USD asking would take (``cache_hits`` for cached answers)."""
        ...

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        """The claims extraction would give, when known without a call; None otherwise."""
        ...


def no_context_verdicts(claims: Sequence[str], facts: Sequence[str] = ()) -> VerificationResult:
    """Verdicts for a case without context: nothing can back any claim, and no judge is asked."""

    def unsupported(text: str) -> ClaimVerdict:
        return ClaimVerdict(
            text=text,
            verdict=Verdict.NOT_ENOUGH_INFO,
            reason="The case has no retrieved context, so nothing can support the claim.",
            confidence=1.0,
            flags=("empty_context",),
        )

    return VerificationResult(
        verdicts=tuple(map(unsupported, claims)), fact_verdicts=tuple(map(unsupported, facts))
    )


def check_verdict_count(
    claims: Sequence[str], result: VerificationResult, facts: Sequence[str] = ()
) -> VerificationResult:
    """Refuse a verification that does not give exactly one verdict per claim and per fact."""
    if len(result.verdicts) != len(claims):
        raise JudgeResponseError(
            f"the judge returned {plural(len(result.verdicts), 'verdict')} for "
            f"{plural(len(claims), 'claim')}"
        )
    if len(result.fact_verdicts) != len(facts):
        raise JudgeResponseError(
            f"the judge returned {plural(len(result.fact_verdicts), 'verdict')} for "
            f"{plural(len(facts), 'fact')}"
        )
    return result


def check_chunk_count(case: TestCase, result: ChunkRatings) -> ChunkRatings:
    """Refuse chunk ratings that do not rate every chunk of the case exactly once."""
    if len(result.ratings) != len(case.context):
        raise JudgeResponseError(
            f"the judge rated {plural(len(result.ratings), 'chunk')} of {len(case.context)}"
        )
    return result


UNVERIFIED_EVIDENCE = "unverified_evidence"
"""Flag on a verdict that said SUPPORTED with a quote the context does not have."""


def verified_evidence(verdict: ClaimVerdict, context: Sequence[str]) -> ClaimVerdict:
    """A SUPPORTED verdict whose quote is not in the context, as NOT_ENOUGH_INFO (flagged).

    Applied to every model verdict, fresh or from the cache: support must be shown, not said.
    """
    if verdict.verdict is not Verdict.SUPPORTED or UNVERIFIED_EVIDENCE in verdict.flags:
        return verdict
    if verdict.evidence and evidence_in_context(verdict.evidence, context):
        return verdict
    return verdict.model_copy(
        update={
            "verdict": Verdict.NOT_ENOUGH_INFO,
            "reason": f"Said SUPPORTED, but the quote is not in the context. {verdict.reason}",
            "flags": (*verdict.flags, UNVERIFIED_EVIDENCE),
        }
    )
