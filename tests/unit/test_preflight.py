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
    """The fake judge, able to estimate: one call per operation, every argument recorded."""

    estimates: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        return tuple(self.claims.get(case.id, [case.response]))

    def estimate(
        self,
        operation: str,
        case: TestCase,
        claims: Sequence[str] = (),
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> Usage:
        self.estimates.append((operation, case.id, tuple(claims), tuple(facts)))
        return Usage(calls=1)


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


def test_the_needed_facts_are_estimated_in_the_verification_call():
    judge = EstimatingFake(claims={"facts": ["Refunds take 14 days."]})
    evaluators = [HallucinationEvaluator(), ContextRecallEvaluator(), ContextPrecisionEvaluator()]
    preflight([CASES[1]], judge=judge, evaluators=evaluators)
    assert judge.estimates == [
        ("extract_claims", "facts", (), ()),
        ("verify_claims", "facts", ("Refunds take 14 days.",), CASES[1].needed_facts),
        ("rate_chunks", "facts", (), ()),
    ]
