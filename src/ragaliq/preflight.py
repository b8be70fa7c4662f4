"""Pre-flight: what a run would cost, with no judge call.

The judge says what each operation would take (:class:`~ragaliq.judges.base.EstimatingJudge`):
a cache hit costs nothing, the offline judge costs nothing, Claude's calls are estimated from the
prompts' size (four characters a token, typical reply sizes). For a case whose claims cannot be
known without a call, the claims are estimated from the response's sentences. The run's report
has the real figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ragaliq.evaluators.base import Evaluator
from ragaliq.judges.base import EstimatingJudge, Judge, Operation
from ragaliq.judges.offline import extract_sentence_claims
from ragaliq.models import CasePlan, Preflight, TestCase, Usage

__all__ = ["CLAIMS_PER_SENTENCE", "preflight"]

CLAIMS_PER_SENTENCE = 1.3
"""Atomic claims per response sentence, for responses whose claims are not known yet."""


def preflight(
    cases: Iterable[TestCase],
    *,
    judge: Judge,
    evaluators: Sequence[Evaluator[Any]],
    repeat: int = 1,
    notices: Sequence[str] = (),
) -> Preflight:
    """Estimate a run's judge calls, cache hits, tokens and cost without calling the judge."""
    if not isinstance(judge, EstimatingJudge):
        free = tuple(CasePlan(case_id=c.id, operations=0, cache_hits=0, calls=0) for c in cases)
        return Preflight(judge=judge.info, cases=free, usage=Usage(), notices=tuple(notices))
    needs_claims = any(e.needs_claims for e in evaluators)
    needs_relevance = any(e.needs_relevance for e in evaluators)
    plans: list[CasePlan] = []
    total = Usage()
    for case in cases:
        plan, usage = _plan(case, judge, needs_claims, needs_relevance, repeat=repeat)
        plans.append(plan)
        total += usage
    if judge.info.provider == "cascade":
        notices = (
            *notices,
            "cascade: the estimate assumes Claude verifies every claim; the offline judge settles "
            "some of them in the run, so it will cost less",
        )
    return Preflight(judge=judge.info, cases=tuple(plans), usage=total, notices=tuple(notices))


def _plan(
    case: TestCase,
    judge: EstimatingJudge,
    needs_claims: bool,
    needs_relevance: bool,
    *,
    repeat: int,
) -> tuple[CasePlan, Usage]:
    usage = Usage()
    operations = 0

    def account(operation: Operation, claims: Sequence[str] = (), sample: int = 0) -> None:
        nonlocal usage, operations
        operations += 1
        usage += judge.estimate(operation, case, claims, sample=sample)

    if needs_claims:
        account("extract_claims")
        claims = judge.planned_claims(case)
        if claims is None:
            sentences = len(extract_sentence_claims(case.response))
            claims = tuple(f"claim {i}" for i in range(math.ceil(sentences * CLAIMS_PER_SENTENCE)))
        if claims and case.has_context:
            for sample in range(repeat):
                account("verify_claims", claims, sample)
    if needs_relevance:
        account("evaluate_relevance")
    plan = CasePlan(
        case_id=case.id, operations=operations, cache_hits=usage.cache_hits, calls=usage.calls
    )
    return plan, usage
