"""Running a suite: every case judged once, evaluators scored from the shared answers.

Per case the judge extracts claims once and verifies them once (faithfulness and hallucination
both read those verdicts) while relevance is rated alongside. Judge requests in flight are bounded
by a semaphore; cases are pulled by a fixed pool of workers, so a suite of any size holds only a
few cases in memory at once. A case the judge fails on becomes an ``error`` result and the run
goes on; a judge that cannot be used at all stops the run.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.judges.base import Judge, check_verdict_count, no_context_verdicts
from ragaliq.models import (
    CaseResult,
    ClaimVerdict,
    EvaluationResult,
    RelevanceResult,
    RunReport,
    RunSummary,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)

__all__ = [
    "UNSTABLE_BELOW",
    "Progress",
    "RunSettings",
    "first_leaf",
    "majority_verdicts",
    "run_suite",
]

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)

UNSTABLE_BELOW = 2 / 3
"""Agreement under which a repeated verdict is ``unstable``."""
_SEVERITY = (
    Verdict.CONTRADICTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.SUPPORTED,
)


@dataclass(frozen=True, kw_only=True)
class Progress:
    """Where a run stands, reported after each case."""

    done: int
    total: int
    errors: int
    usage: Usage


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How a run may use the judge."""

    concurrency: int = 8
    """Judge requests in flight at once."""
    budget_usd: float | None = None
    """Stop starting new cases when the next one would probably take the spend past this."""
    on_progress: Callable[[Progress], None] | None = None
    repeat: int = 1
    """Verifications per case; with more than one, each claim gets the majority verdict."""


@dataclass(kw_only=True)
class _Outcome:
    verdicts: tuple[ClaimVerdict, ...] | None = None
    relevance: RelevanceResult | None = None
    claims_error: str | None = None
    relevance_error: str | None = None
    usage: Usage


class _Run:
    def __init__(
        self,
        cases: Sequence[TestCase],
        judge: Judge,
        evaluators: Sequence[Evaluator[Any]],
        settings: RunSettings,
    ) -> None:
        self.cases = cases
        self.judge = judge
        self.evaluators = evaluators
        self.settings = settings
        self.slots = asyncio.Semaphore(settings.concurrency)
        self.needs_claims = any(e.needs_claims for e in evaluators)
        self.needs_relevance = any(e.needs_relevance for e in evaluators)
        self.results: dict[int, CaseResult] = {}
        self.usage = Usage()
        self.errors = 0
        self.in_flight = 0
        self.judged = 0
        self.stopped_early: str | None = None
        self.next_index = 0
        self.max_case_cost = 0.0
        self.priced = 0
        """Finished cases that cost something: what the budget's per-case estimate rests on."""
        self.case_done = asyncio.Condition()

    async def call(self, operation: Callable[[], Awaitable[T]]) -> T:
        async with self.slots:
            return await operation()

    def over_budget(self) -> bool:
        """Whether one more case could take the spend past the budget.

        Each case in flight and the next one are assumed to cost as much as the dearest case so
        far. Until a case that cost something has finished (cache hits, cases without claims and
        early errors cost nothing), there is nothing to go on, so cases run one at a time.
        """
        budget = self.settings.budget_usd
        if budget is None or self.priced == 0:
            return False
        return self.usage.cost_usd + self.max_case_cost * (self.in_flight + 1) > budget

    async def worker(self) -> None:
        while self.stopped_early is None and self.next_index < len(self.cases):
            if self.settings.budget_usd is not None and self.priced == 0 and self.in_flight:
                async with self.case_done:
                    await self.case_done.wait()
                continue
            if self.over_budget():
                self.stopped_early = (
                    f"budget_usd {self.settings.budget_usd:g} reached: spent "
                    f"${self.usage.cost_usd:.4f} on {self.judged} cases; the next case would "
                    "pass the budget"
                )
                return
            index = self.next_index
            self.next_index += 1
            self.in_flight += 1
            try:
                result, usage = await self.judge_case(self.cases[index])
            finally:
                self.in_flight -= 1
            self.results[index] = result
            self.usage += usage
            self.max_case_cost = max(self.max_case_cost, usage.cost_usd)
            self.judged += 1
            self.priced += usage.cost_usd > 0
            async with self.case_done:
                self.case_done.notify_all()
            self.errors += result.status == "error"
            if self.settings.on_progress is not None:
                self.settings.on_progress(
                    Progress(
                        done=len(self.results),
                        total=len(self.cases),
                        errors=self.errors,
                        usage=self.usage,
                    )
                )

    async def judge_case(self, case: TestCase) -> tuple[CaseResult, Usage]:
        outcome = _Outcome(usage=Usage())
        try:
            async with asyncio.TaskGroup() as group:
                if self.needs_claims:
                    group.create_task(self.claims_pass(case, outcome))
                if self.needs_relevance:
                    group.create_task(self.relevance_pass(case, outcome))
        except* JudgeUnavailableError as group_error:
            raise first_leaf(group_error) from None
        judgement = CaseJudgement(case=case, verdicts=outcome.verdicts, relevance=outcome.relevance)
        results: dict[str, EvaluationResult] = {}
        for evaluator in self.evaluators:
            failure = (outcome.claims_error if evaluator.needs_claims else None) or (
                outcome.relevance_error if evaluator.needs_relevance else None
            )
            results[evaluator.name] = (
                evaluator.error(failure) if failure else evaluator.evaluate(judgement)
            )
        errors = [e for e in (outcome.claims_error, outcome.relevance_error) if e]
        return (
            CaseResult(
                id=case.id,
                input_hash=case.input_hash,
                status="error" if errors else "ok",
                query=case.query,
                claims=outcome.verdicts or (),
                results=results,
                error="; ".join(errors) or None,
            ),
            outcome.usage,
        )

    async def claims_pass(self, case: TestCase, outcome: _Outcome) -> None:
        try:
            extraction = await self.call(lambda: self.judge.extract_claims(case))
            outcome.usage += extraction.usage
            claims = extraction.claims
            if not claims:
                outcome.verdicts = ()
                return
            if not case.has_context:
                outcome.verdicts = no_context_verdicts(claims).verdicts
                return
            outcome.verdicts = await self.verify(case, claims, outcome)
        except JudgeUnavailableError:
            raise
        except JudgeError as exc:
            outcome.usage += exc.usage or Usage()
            outcome.claims_error = f"claims: {exc}"
        except Exception as exc:  # a bug in one case must not lose the rest of the run
            outcome.claims_error = f"claims: unexpected {type(exc).__name__}: {exc}"

    async def verify(
        self, case: TestCase, claims: Sequence[str], outcome: _Outcome
    ) -> tuple[ClaimVerdict, ...]:
        """Verify once, or ``repeat`` times at once and keep the majority verdict per claim."""
        results: list[VerificationResult] = []

        async def one(sample: int) -> None:
            result = await self.call(lambda: self.judge.verify_claims(case, claims, sample=sample))
            results.append(check_verdict_count(claims, result))

        try:
            async with asyncio.TaskGroup() as group:
                for sample in range(self.settings.repeat):
                    group.create_task(one(sample))
        except* JudgeError as group_error:
            for result in results:
                outcome.usage += result.usage
            first = first_leaf(group_error)
            for failure in leaves(group_error):  # the first one's usage is counted where caught
                if failure is not first:
                    outcome.usage += failure.usage or Usage()
            raise first from None
        for result in results:
            outcome.usage += result.usage
        if len(results) == 1:
            return results[0].verdicts
        return majority_verdicts(results, unstable_below=UNSTABLE_BELOW)

    async def relevance_pass(self, case: TestCase, outcome: _Outcome) -> None:
        try:
            relevance = await self.call(lambda: self.judge.evaluate_relevance(case))
            outcome.usage += relevance.usage
            outcome.relevance = relevance
        except JudgeUnavailableError:
            raise
        except JudgeError as exc:
            outcome.usage += exc.usage or Usage()
            outcome.relevance_error = f"relevance: {exc}"
        except Exception as exc:  # a bug in one case must not lose the rest of the run
            outcome.relevance_error = f"relevance: unexpected {type(exc).__name__}: {exc}"


async def run_suite(
    cases: Sequence[TestCase],
    *,
    judge: Judge,
    evaluators: Sequence[Evaluator[Any]],
    settings: RunSettings | None = None,
    notices: Sequence[str] = (),
) -> RunReport:
    """Judge every case and build the run report.

    Raises:
        JudgeUnavailableError: the judge cannot be used at all; nothing more is scheduled.
    """
    run = _Run(cases, judge, evaluators, settings or RunSettings())
    workers = min(len(cases), run.settings.concurrency * 2) or 1
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(workers):
                group.create_task(run.worker())
    except* JudgeUnavailableError as group_error:
        raise first_leaf(group_error) from None
    case_results = [run.results[i] for i in sorted(run.results)]
    case_results += [
        CaseResult(
            id=case.id,
            input_hash=case.input_hash,
            status="skipped",
            query=case.query,
            error=run.stopped_early,
        )
        for i, case in enumerate(cases)
        if i not in run.results
    ]
    infos = {e.name: e.info() for e in evaluators}
    return RunReport(
        judge=judge.info,
        evaluators=infos,
        summary=RunSummary.of(case_results, infos),
        usage=run.usage,
        cases=tuple(case_results),
        notices=tuple(notices),
        stopped_early=run.stopped_early,
    )


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


def first_leaf(group: BaseExceptionGroup[E]) -> E:
    """The first exception in a (possibly nested) exception group."""
    first = group.exceptions[0]
    return first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def leaves(group: BaseExceptionGroup[E]) -> list[E]:
    """Every exception in a (possibly nested) exception group, in order."""
    found: list[E] = []
    for exc in group.exceptions:
        found += leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc]
    return found
