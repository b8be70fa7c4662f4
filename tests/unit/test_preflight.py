from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from ragaliq.evaluators import (
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    FaithfulnessEvaluator,
    HallucinationEvaluator,
    RelevanceEvaluator,
)
from ragaliq.evaluators.questions import Questions
from ragaliq.judges.base import EstimatingJudge
from ragaliq.models import TestCase, Usage
from ragaliq.preflight import preflight
from ragaliq.runner import RunSettings, run_suite
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge

ALL = (
    FaithfulnessEvaluator,
    HallucinationEvaluator,
    RelevanceEvaluator,
    ContextRecallEvaluator,
    ContextPrecisionEvaluator,
)


@dataclass
class EstimatingFake(FakeJudge):
    """The fake judge, able to estimate: one call per question, every argument recorded."""

    estimates: list[tuple[tuple[str, ...], str, tuple[str, ...], int]] = field(default_factory=list)

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        return tuple(self.claims.get(case.id, [case.response]))

    def estimate(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Usage:
        self.estimates.append((tuple(q.name for q in questions), case.id, tuple(claims), sample))
        return Usage(calls=len(questions))


CASES = [
    make_case(id="plain"),
    make_case(id="facts", expected_facts=("Refunds take 14 days.", "Plans cost $5.")),
    make_case(id="answer", expected_answer="Refunds take 14 days. Support is 24/7."),
    make_case(id="no-context", context=(), expected_facts=("Refunds take 14 days.",)),
    make_case(id="three-chunks", context=("a", "b", "c")),
]


@pytest.mark.parametrize(
    "kinds",
    [ALL, (ContextRecallEvaluator,), (ContextPrecisionEvaluator,), (FaithfulnessEvaluator,)],
    ids=["all five", "recall only", "precision only", "faithfulness only"],
)
@pytest.mark.parametrize("repeat", [1, 2])
def test_the_dry_run_counts_the_calls_the_run_makes(kinds, repeat):
    evaluators = [kind() for kind in kinds]
    judge = EstimatingFake()
    assert isinstance(judge, EstimatingJudge)
    plan = preflight(CASES, judge=judge, evaluators=evaluators, repeat=repeat)
    asyncio.run(
        run_suite(CASES, judge=judge, evaluators=evaluators, settings=RunSettings(repeat=repeat))
    )
    made = Counter(case_id for _, case_id in judge.calls)
    assert {p.case_id: p.calls for p in plan.cases} == {c.id: made[c.id] for c in CASES}
    assert plan.usage.calls == len(judge.calls)


def test_the_needed_facts_and_chunks_are_estimated_with_the_claims_verification():
    judge = EstimatingFake(claims={"facts": ["Refunds take 14 days."]})
    evaluators = [HallucinationEvaluator(), ContextRecallEvaluator(), ContextPrecisionEvaluator()]
    preflight([CASES[1]], judge=judge, evaluators=evaluators, repeat=2)
    claims = ("Refunds take 14 days.",)
    assert judge.estimates == [
        (("extract_claims",), "facts", (), 0),
        (("verify_claims", "verify_facts", "rate_chunks"), "facts", claims, 0),
        (("verify_claims", "verify_facts"), "facts", claims, 1),
    ]


@dataclass
class PricedFake(EstimatingFake):
    """Every question costs 1,000 tokens and a cent."""

    def estimate(self, questions, case, *, claims=(), sample=0) -> Usage:
        n = len(questions)
        return Usage(calls=n, input_tokens=900 * n, output_tokens=100 * n, cost_usd=0.01 * n)


def test_a_gate_is_estimated_against_its_budget_before_any_call():
    from ragaliq.errors import BudgetError
    from ragaliq.policy import Budget
    from ragaliq.preflight import check_budget

    suite = [FaithfulnessEvaluator(), RelevanceEvaluator()]  # 3 questions a case
    cases = [make_case(id=f"c{i}") for i in range(4)]
    judge = PricedFake()
    total = check_budget(cases, judge=judge, evaluators=suite, repeat=1, budget=Budget())
    assert (total.input_tokens + total.output_tokens, round(total.cost_usd, 2)) == (12_000, 0.12)
    with pytest.raises(BudgetError, match=r"case 'c0' would take about 3,000 tokens"):
        check_budget(
            cases, judge=judge, evaluators=suite, repeat=1, budget=Budget(case_tokens=2_999)
        )
    with pytest.raises(BudgetError, match=r"this run would take about 12,000 tokens \(\$0\.12\)"):
        check_budget(cases, judge=judge, evaluators=suite, repeat=1, budget=Budget(run_usd=0.1))
    assert judge.calls == []  # estimated, never called


def test_the_estimate_asks_what_the_run_asks_of_a_blank_response():
    judge = EstimatingFake()
    case = make_case(id="blank", response=" ")
    plan = preflight([case], judge=judge, evaluators=[e() for e in ALL])
    run = asyncio.run(run_suite([case], judge=judge, evaluators=[e() for e in ALL]))
    asked = [op for op, _ in judge.calls]
    estimated = [names for names, *_ in judge.estimates]
    # A blank response: no claims or relevance asked or estimated; the chunks still rated.
    assert estimated == [("rate_chunks",)] and asked == ["chunks"]
    assert plan.cases[0].operations == len(asked)
    assert run.cases[0].results["faithfulness"].status == "error"
