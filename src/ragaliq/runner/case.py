"""Judging one case: each pass its evaluators need, asked once, and their scores.

The judge extracts the claims once and verifies them once (faithfulness and hallucination both
read those verdicts, and the needed facts ride in the same call), while relevance and the chunk
ratings are asked alongside; which passes a case needs is :class:`~ragaliq.runner.passes.Passes`.
A pass the judge fails on is the case's error, never a score; a judge that cannot be used at all
stops the run.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ragaliq.errors import BudgetError, JudgeError, JudgeUnavailableError
from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.judges.base import (
    EstimatingJudge,
    Judge,
    check_chunk_count,
    check_verdict_count,
    no_context_verdicts,
)
from ragaliq.models import (
    CaseResult,
    ChunkRating,
    ClaimVerdict,
    EvaluationResult,
    RelevanceResult,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)
from ragaliq.pool import first_leaf, leaves
from ragaliq.redaction import redact
from ragaliq.runner.passes import Passes
from ragaliq.runner.settings import RunSettings
from ragaliq.text.counts import plural

__all__ = ["UNSTABLE_BELOW", "CaseBudget", "CaseRun", "majority_verdicts"]

T = TypeVar("T")

UNSTABLE_BELOW = 2 / 3
"""Agreement under which a repeated verdict is ``unstable``."""
_SEVERITY = (
    Verdict.CONTRADICTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.SUPPORTED,
)


@dataclass(frozen=True, kw_only=True)
class CaseBudget:
    """What one case may spend (a gate's budget per case), checked on what it really spent.

    The pre-flight estimate holds the response's sentences for its claims; once the judge has
    extracted the claims, the verification is estimated again from them, and a case whose
    claims would take it past the budget is an error instead of a paid call.
    """

    tokens: int | None = None
    usd: float | None = None

    @classmethod
    def of(cls, settings: RunSettings) -> CaseBudget | None:
        if settings.case_tokens is None and settings.case_usd is None:
            return None
        return cls(tokens=settings.case_tokens, usd=settings.case_usd)

    def check(self, spent: Usage, ahead: Usage, doing: str) -> None:
        """Stop before ``doing`` when what it would take, on top of ``spent``, passes the budget.

        Raises:
            BudgetError: naming both figures and the budget.
        """
        total = spent + ahead
        tokens = total.input_tokens + total.output_tokens
        if (self.tokens is None or tokens <= self.tokens) and (
            self.usd is None or total.cost_usd <= self.usd
        ):
            return
        limits = " and ".join(
            shown
            for shown in (
                f"{self.tokens:,} tokens" if self.tokens is not None else "",
                f"${self.usd:g}" if self.usd is not None else "",
            )
            if shown
        )
        raise BudgetError(
            f"over the gate's budget per case ({limits}): {doing} would take about "
            f"{tokens:,} tokens (${total.cost_usd:.2f}) in all; not judged. Raise "
            "gate.budget.case_tokens or case_usd in the base commit's config, or split the case"
        )


@dataclass(kw_only=True)
class _CaseAnswers:
    verdicts: tuple[ClaimVerdict, ...] | None = None
    facts: tuple[ClaimVerdict, ...] | None = None
    relevance: RelevanceResult | None = None
    chunks: tuple[ChunkRating, ...] | None = None
    claims_error: str | None = None
    relevance_error: str | None = None
    chunks_error: str | None = None
    usage: Usage

    def failure_for(self, evaluator: Evaluator[Any]) -> str | None:
        """Why an evaluator cannot score the case: a pass it needs failed."""
        needs = (
            (evaluator.needs_claims or evaluator.needs_facts, self.claims_error),
            (evaluator.needs_relevance, self.relevance_error),
            (evaluator.needs_chunks, self.chunks_error),
        )
        return next((error for needed, error in needs if needed and error), None)

    @property
    def errors(self) -> list[str]:
        return [e for e in (self.claims_error, self.relevance_error, self.chunks_error) if e]


class CaseRun:
    """The judge and the evaluators of one run, asked once per case."""

    def __init__(
        self,
        judge: Judge,
        evaluators: Sequence[Evaluator[Any]],
        *,
        concurrency: int = 8,
        repeat: int = 1,
        case_budget: CaseBudget | None = None,
    ) -> None:
        self.judge = judge
        self.evaluators = evaluators
        self.repeat = repeat
        """Verifications per case; with more than one, each claim gets the majority verdict."""
        self.slots = asyncio.Semaphore(concurrency)
        self.case_budget = case_budget

    async def call(self, operation: Callable[[], Awaitable[T]]) -> T:
        async with self.slots:
            return await operation()

    async def judge_case(self, case: TestCase) -> tuple[CaseResult, Usage]:
        answers = _CaseAnswers(usage=Usage())
        passes = Passes.of(case, self.evaluators)
        blank = passes.unjudgeable
        try:
            async with asyncio.TaskGroup() as group:
                if passes.verification:
                    group.create_task(self.claims_pass(case, answers, passes))
                if passes.relevance:
                    group.create_task(self.relevance_pass(case, answers))
                if passes.chunks:
                    group.create_task(self.chunks_pass(case, answers, passes))
        except* JudgeUnavailableError as group_error:
            raise first_leaf(group_error) from None
        judgement = CaseJudgement(
            case=case,
            verdicts=answers.verdicts,
            facts=answers.facts,
            relevance=answers.relevance,
            chunks=answers.chunks,
        )
        results: dict[str, EvaluationResult] = {}
        for evaluator in self.evaluators:
            failure = blank.get(evaluator.name) or answers.failure_for(evaluator)
            results[evaluator.name] = (
                evaluator.error(failure) if failure else evaluator.evaluate(judgement)
            )
        errors = [*dict.fromkeys(blank.values()), *answers.errors]
        return (
            CaseResult(
                id=case.id,
                input_hash=case.input_hash,
                status="error" if errors else "ok",
                query=case.query,
                claims=answers.verdicts or (),
                facts=answers.facts or (),
                chunks=answers.chunks or (),
                retrieved=case.chunk_refs,
                labels=case.labels,
                results=results,
                error="; ".join(errors) or None,
            ),
            answers.usage,
        )

    async def claims_pass(self, case: TestCase, answers: _CaseAnswers, passes: Passes) -> None:
        answers.claims_error = await _guarded(
            "claims", answers, self._claims(case, answers, passes)
        )

    async def _claims(self, case: TestCase, answers: _CaseAnswers, passes: Passes) -> None:
        """The claims, extracted once, and with the needed facts verified in one call."""
        claims: tuple[str, ...] = ()
        if passes.claims:
            extraction = await self.call(lambda: self.judge.extract_claims(case))
            answers.usage += extraction.usage
            claims = extraction.claims
        facts = case.needed_facts if passes.facts else ()
        if Passes.verifies(case, claims, facts):
            self._check_budget(case, claims, facts, answers)
            answers.verdicts, answers.facts = await self.verify(case, claims, facts, answers)
        elif claims or facts:
            unsupported = no_context_verdicts(claims, facts)
            answers.verdicts, answers.facts = unsupported.verdicts, unsupported.fact_verdicts
        else:
            answers.verdicts, answers.facts = (), ()

    def _check_budget(
        self, case: TestCase, claims: Sequence[str], facts: Sequence[str], answers: _CaseAnswers
    ) -> None:
        """Stop before verifying claims that would take the case past its budget."""
        if self.case_budget is None or not isinstance(self.judge, EstimatingJudge):
            return
        ahead = Usage()
        for sample in range(self.repeat):
            ahead += self.judge.estimate("verify_claims", case, claims, sample=sample, facts=facts)
        doing = f"verifying its {plural(len(claims), 'claim')}"
        self.case_budget.check(answers.usage, ahead, doing)

    async def verify(
        self, case: TestCase, claims: Sequence[str], facts: Sequence[str], answers: _CaseAnswers
    ) -> tuple[tuple[ClaimVerdict, ...], tuple[ClaimVerdict, ...]]:
        """Verify once, or ``repeat`` times at once and keep the majority verdict per claim."""
        results: list[VerificationResult] = []

        async def one(sample: int) -> None:
            result = await self.call(
                lambda: self.judge.verify_claims(case, claims, sample=sample, facts=facts)
            )
            results.append(check_verdict_count(claims, result, facts))

        try:
            async with asyncio.TaskGroup() as group:
                for sample in range(self.repeat):
                    group.create_task(one(sample))
        except* JudgeError as group_error:
            for result in results:
                answers.usage += result.usage
            first = first_leaf(group_error)
            for failure in leaves(group_error):  # the first one's usage is counted where caught
                if failure is not first:
                    answers.usage += failure.usage or Usage()
            raise first from None
        for result in results:
            answers.usage += result.usage
        if len(results) == 1:
            return results[0].verdicts, results[0].fact_verdicts
        as_facts = [VerificationResult(verdicts=r.fact_verdicts) for r in results]
        return (
            majority_verdicts(results, unstable_below=UNSTABLE_BELOW),
            majority_verdicts(as_facts, unstable_below=UNSTABLE_BELOW),
        )

    async def relevance_pass(self, case: TestCase, answers: _CaseAnswers) -> None:
        answers.relevance_error = await _guarded(
            "relevance", answers, self._relevance(case, answers)
        )

    async def _relevance(self, case: TestCase, answers: _CaseAnswers) -> None:
        relevance = await self.call(lambda: self.judge.evaluate_relevance(case))
        answers.usage += relevance.usage
        answers.relevance = relevance

    async def chunks_pass(self, case: TestCase, answers: _CaseAnswers, passes: Passes) -> None:
        answers.chunks_error = await _guarded(
            "chunks", answers, self._chunks(case, answers, passes)
        )

    async def _chunks(self, case: TestCase, answers: _CaseAnswers, passes: Passes) -> None:
        if not passes.rates(case):
            answers.chunks = ()
            return
        ratings = await self.call(lambda: self.judge.rate_chunks(case))
        answers.usage += ratings.usage
        answers.chunks = check_chunk_count(case, ratings).ratings


async def _guarded(label: str, answers: _CaseAnswers, work: Awaitable[None]) -> str | None:
    """Run one pass of a case; a judge failure is the case's error, not the run's end.

    A judge that cannot be used at all still stops the run. The error is data that every output
    carries (the report, the Python API's results, a test's failure), so no secret stays in it.
    """
    try:
        await work
    except JudgeUnavailableError:
        raise
    except JudgeError as exc:
        answers.usage += exc.usage or Usage()
        return redact(f"{label}: {exc}")
    except BudgetError as exc:
        return f"{label}: {exc}"
    except Exception as exc:  # a bug in one case must not lose the rest of the run
        return redact(f"{label}: unexpected {type(exc).__name__}: {exc}")
    return None


def majority_verdicts(
    results: Sequence[VerificationResult], *, unstable_below: float
) -> tuple[ClaimVerdict, ...]:
    """Per claim, the verdict most repetitions gave, with its agreement.

    A tie goes to the verdict that backs the claim least, so doubt never passes as support; a
    claim whose agreement is below ``unstable_below`` is flagged ``unstable``.
    """
    merged: list[ClaimVerdict] = []
    for votes in zip(*(r.verdicts for r in results), strict=True):
        counts = Counter(v.verdict for v in votes)
        top = max(counts.values())
        tied = [v for v in _SEVERITY if counts.get(v) == top]
        winner = tied[0]
        chosen = [v for v in votes if v.verdict is winner]
        agreement = round(top / len(votes), 6)
        flags = tuple(dict.fromkeys(f for v in chosen for f in v.flags))
        if agreement < unstable_below:
            flags = (*flags, "unstable")
        merged.append(
            chosen[0].model_copy(
                update={
                    "confidence": round(sum(v.confidence for v in chosen) / len(chosen), 6),
                    "agreement": agreement,
                    "flags": flags,
                }
            )
        )
    return tuple(merged)
