"""The ``Judge`` protocol: the three questions every judge answers about a case."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol, runtime_checkable

from ragaliq.errors import JudgeResponseError
from ragaliq.models import (
    ChunkRatings,
    ClaimsResult,
    ClaimVerdict,
    JudgeInfo,
    RelevanceResult,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)
from ragaliq.text.counts import plural
from ragaliq.text.matching import evidence_in_context

__all__ = [
    "OPERATIONS",
    "EstimatingJudge",
    "ForkableJudge",
    "Judge",
    "Operation",
    "check_chunk_count",
    "check_verdict_count",
    "no_context_verdicts",
    "verified_evidence",
]

Operation = Literal["extract_claims", "verify_claims", "evaluate_relevance", "rate_chunks"]
OPERATIONS: tuple[Operation, ...] = (
    "extract_claims",
    "verify_claims",
    "evaluate_relevance",
    "rate_chunks",
)


@runtime_checkable
class Judge(Protocol):
    """Something that extracts claims, verifies them against a context and rates relevance.

    Implementations raise :class:`~ragaliq.errors.JudgeError` when they cannot give a valid
    answer; they never guess one.
    """

    @property
    def info(self) -> JudgeInfo:
        """Provider, model and prompt version: the provenance recorded in reports."""
        ...

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        """The atomic factual claims the response makes."""
        ...

    async def verify_claims(
        self,
        case: TestCase,
        claims: Sequence[str],
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> VerificationResult:
        """One verdict per claim against the case's context, all claims at once, in order.

        ``facts`` (what retrieval had to bring, for context recall) are verified in the same
        call, each on its own, into ``fact_verdicts``. ``sample`` numbers repeated verifications
        of the same claims (``judge.repeat``), so that a cache keeps each repetition apart; a
        judge may otherwise ignore it.
        """
        ...

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        """How well the response answers the query, from 0 to 1."""
        ...

    async def rate_chunks(self, case: TestCase) -> ChunkRatings:
        """Whether each retrieved chunk is relevant to the query, all chunks in one call."""
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
    """A judge that can say what an operation would cost without doing it (for ``--dry-run``).

    Optional: a judge without these methods is taken to cost nothing.
    """

    def estimate(
        self,
        operation: Operation,
        case: TestCase,
        claims: Sequence[str] = (),
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> Usage:
        """The calls, tokens and USD one operation would take (``cache_hits=1`` if cached)."""
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
