"""Pre-flight: what a run would cost, with no judge call.

The judge says what asking each question would take (:class:`~ragaliq.judges.base.EstimatingJudge`):
a cache hit costs nothing, the offline judge costs nothing, Claude's calls are estimated from the
prompts' size (four characters a token, typical reply sizes). For a case whose claims cannot be
known without a call, the claims are estimated from the response's sentences. The questions, and
when they are asked, are the runner's (:class:`~ragaliq.runner.passes.Passes`). The run's report
has the real figures.

A gate confirms the claims that would fail it before deciding (:mod:`ragaliq.runner.confirm`):
its estimate counts, for each case whose claims are verified anew, one confirming call over all
of them, a bound; a case with nothing to confirm makes no such call in the run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from ragaliq.errors import BudgetError
from ragaliq.evaluators.base import Evaluator
from ragaliq.evaluators.questions import EXTRACT, VERIFY, Questions
from ragaliq.judges.base import EstimatingJudge, Judge
from ragaliq.models import CasePlan, Preflight, TestCase, Usage
from ragaliq.offline import extract_sentence_claims
from ragaliq.policy import Budget
from ragaliq.runner.confirm import CONFIRMING
from ragaliq.runner.passes import Passes, planned_asks

__all__ = ["CLAIMS_PER_SENTENCE", "check_budget", "estimate_case", "preflight"]

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
    if evaluators and not any(e.asks_judge() for e in evaluators):
        names = ", ".join(e.name for e in evaluators)
        notices = (
            *notices,
            f"no evaluator of this run asks the judge anything ({names} score the retrieved "
            "chunks against the cases' labels), so it makes 0 judge calls and costs nothing",
        )
    if not isinstance(judge, EstimatingJudge):
        free = tuple(CasePlan(case_id=c.id, operations=0, cache_hits=0, calls=0) for c in cases)
        return Preflight(judge=judge.info, cases=free, usage=Usage(), notices=tuple(notices))
    plans: list[CasePlan] = []
    total = Usage()
    for case in cases:
        plan, usage = _plan(case, judge, evaluators, repeat=repeat)
        plans.append(plan)
        total += usage
    if judge.info.provider == "cascade":
        notices = (
            *notices,
            "cascade: the estimate assumes Claude verifies every claim; the offline judge settles "
            "some of them in the run, so it will cost less",
        )
    return Preflight(judge=judge.info, cases=tuple(plans), usage=total, notices=tuple(notices))


def estimate_case(
    case: TestCase, *, judge: Judge, evaluators: Sequence[Evaluator[Any]], repeat: int = 1
) -> Usage:
    """What judging one case would take (calls, tokens, USD), with no judge call."""
    if not isinstance(judge, EstimatingJudge):
        return Usage()
    return _plan(case, judge, evaluators, repeat=repeat)[1]


def _plan(
    case: TestCase,
    judge: EstimatingJudge,
    evaluators: Sequence[Evaluator[Any]],
    *,
    repeat: int,
    confirm: bool = False,
) -> tuple[CasePlan, Usage]:
    """The questions the runner would ask about one case, each ask as the judge estimates it.

    The stages are the runner's own (:class:`~ragaliq.runner.passes.Passes`): what does not wait
    for the claims, then what reads them (``repeat`` times for the questions over items).
    """
    passes = Passes.of(case, evaluators)
    usage = Usage()
    operations = 0

    def account(questions: Questions, claims: Sequence[str] = ()) -> None:
        nonlocal usage, operations
        for asked, sample in planned_asks(questions, case, claims, repeat=repeat)[1]:
            operations += len(asked)
            usage += judge.estimate(asked, case, claims=claims, sample=sample)

    account(passes.first)
    if passes.second:
        claims: tuple[str, ...] = ()
        if EXTRACT in passes.first:
            planned = judge.planned_claims(case)
            if planned is None:
                sentences = len(extract_sentence_claims(case.response))
                planned = tuple(
                    f"claim {i}" for i in range(math.ceil(sentences * CLAIMS_PER_SENTENCE))
                )
            claims = planned
        before = usage.calls
        account(passes.second, claims)
        if confirm and repeat == 1 and VERIFY in passes.second and usage.calls > before:
            operations += 1
            usage += judge.estimate((VERIFY,), case, claims=claims, sample=CONFIRMING)
    plan = CasePlan(
        case_id=case.id, operations=operations, cache_hits=usage.cache_hits, calls=usage.calls
    )
    return plan, usage


def check_budget(
    cases: Iterable[TestCase],
    *,
    judge: Judge,
    evaluators: Sequence[Evaluator[Any]],
    repeat: int,
    budget: Budget,
    confirm: bool = False,
) -> Usage:
    """Estimate a gate's run before any call, and stop it if it would pass ``budget``.

    Each case is estimated as the runner would judge it (a cache hit costs nothing); the first
    case over the per-case budget, or a total over the run's, stops the gate with one line.
    With ``confirm``, a case verified anew counts one confirming call over all its claims.
    Returned: the estimate of the whole run.

    Raises:
        BudgetError: naming the case or the total, the figure, the budget and how to change it.
    """
    total = Usage()
    if not isinstance(judge, EstimatingJudge):
        return total
    fix = "in the base commit's ragaliq.yaml (gate.budget), or judge fewer or smaller cases"
    for case in cases:
        usage = _plan(case, judge, evaluators, repeat=repeat, confirm=confirm)[1]
        tokens = usage.input_tokens + usage.output_tokens
        if tokens > budget.case_tokens or usage.cost_usd > budget.case_usd:
            raise BudgetError(
                f"case {case.id!r} would take about {tokens:,} tokens (${usage.cost_usd:.2f}), "
                f"over the gate's budget per case ({budget.case_tokens:,} tokens, "
                f"${budget.case_usd:g}); nothing was judged. Raise gate.budget.case_tokens or "
                f"case_usd {fix}"
            )
        total += usage
    tokens = total.input_tokens + total.output_tokens
    if tokens > budget.run_tokens or total.cost_usd > budget.run_usd:
        raise BudgetError(
            f"this run would take about {tokens:,} tokens (${total.cost_usd:.2f}), over the "
            f"gate's budget per run ({budget.run_tokens:,} tokens, ${budget.run_usd:g}); nothing "
            f"was judged. Raise gate.budget.run_tokens or run_usd {fix}"
        )
    return total
