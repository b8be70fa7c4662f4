"""Confirmed before it fails: the claims that would fail the gate are asked once more."""

from __future__ import annotations

import asyncio

from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator
from ragaliq.models import CaseResult, JudgeInfo, TestCase, Usage, Verdict
from ragaliq.policy import Budget
from ragaliq.preflight import check_budget
from ragaliq.runner.case import CaseRun
from ragaliq.runner.confirm import CONFIRMING, UNSTABLE, confirmable
from tests.conftest import make_case, make_verdict
from tests.fakes.judge import FakeJudge

S, N, C = Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO, Verdict.CONTRADICTED
CLAIMS = ["a", "b", "c"]


class TwiceAsked(FakeJudge):
    """Verdicts per claim text, for the first ask and for the confirming ask."""

    def __init__(self, first, again, **kw):
        super().__init__(claims={"case-1": CLAIMS}, **kw)
        self.first = first
        self.again = again
        self.verified: list[tuple[tuple[str, ...], int]] = []

    async def verify_claims(self, case, claims, *, sample=0, facts=()):
        self.verified.append((tuple(claims), sample))
        by_text = self.again if sample == CONFIRMING else self.first
        self.verdicts[case.id] = [by_text[c] for c in claims]
        return await super().verify_claims(case, claims, sample=sample, facts=facts)


def held_against(case: CaseResult) -> tuple[int, ...]:
    """Every claim the case holds against its response would fail the gate (no baseline)."""
    return tuple(i for i, c in enumerate(case.claims) if c.verdict is not S and confirmable(c))


def judged(judge, **kw) -> tuple[CaseResult, Usage]:
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    run = CaseRun(judge, evaluators, confirm=held_against, **kw)
    return asyncio.run(run.judge_case(make_case()))


def test_flagged_claims_are_asked_again_alone_in_reverse_order_and_unconfirmed_are_unstable():
    judge = TwiceAsked({"a": S, "b": N, "c": C}, {"b": S, "c": C})
    case, usage = judged(judge)
    assert judge.verified == [(("a", "b", "c"), 0), (("c", "b"), CONFIRMING)]
    a, b, c = case.claims
    assert (a.asked, a.flags) == ((), ())
    assert b.verdict is N and b.asked == (N, S) and UNSTABLE in b.flags and b.agreement == 0.5
    assert c.verdict is C and c.asked == (C, C) and UNSTABLE not in c.flags and c.agreement == 1
    assert usage.calls == 3  # extraction, verification, one confirming call
    assert case.results["hallucination"].flagged_claims == (1, 2)  # scored on the first verdicts


def test_a_case_with_nothing_to_confirm_costs_nothing_more():
    judge = TwiceAsked({"a": S, "b": S, "c": S}, {})
    case, usage = judged(judge)
    assert [sample for _, sample in judge.verified] == [0]
    assert usage.calls == 2 and all(not c.asked for c in case.claims)


def test_repeat_and_a_deterministic_judge_are_never_confirmed():
    repeated = TwiceAsked({"a": S, "b": N, "c": S}, {"b": S})
    judged(repeated, repeat=3)
    assert CONFIRMING not in [sample for _, sample in repeated.verified]

    class Rules(TwiceAsked):
        @property
        def info(self) -> JudgeInfo:
            return JudgeInfo(provider="offline", model="rules", prompt_version="1", heuristic=True)

    offline = Rules({"a": S, "b": N, "c": S}, {"b": S})
    case, _ = judged(offline)
    assert [sample for _, sample in offline.verified] == [0]
    assert case.claims[1].asked == ()


def test_a_failed_confirming_call_leaves_the_first_verdicts():
    class Failing(TwiceAsked):
        async def verify_claims(self, case, claims, *, sample=0, facts=()):
            if sample == CONFIRMING:
                from ragaliq.errors import JudgeError

                raise JudgeError("overloaded")
            return await super().verify_claims(case, claims, sample=sample, facts=facts)

    case, _ = judged(Failing({"a": S, "b": N, "c": S}, {}))
    assert case.claims[1].verdict is N and case.claims[1].asked == () and not case.claims[1].flags


def test_settled_offline_and_unstable_claims_are_not_confirmable():
    assert confirmable(make_verdict(N))
    assert not confirmable(make_verdict(S, flags=("settled_offline",)))
    assert not confirmable(make_verdict(N, flags=(UNSTABLE,)))
    assert not confirmable(make_verdict(N, asked=(N, N)))


class Estimating(FakeJudge):
    """Every ask costs one call of 1,000 tokens, and the claims are known."""

    def estimate(self, questions, case, *, claims=(), sample=0) -> Usage:
        return Usage(calls=1, input_tokens=1000)

    def planned_claims(self, case: TestCase) -> tuple[str, ...]:
        return ("a", "b")


def test_the_gates_estimate_counts_one_confirming_call_per_case():
    cases = [make_case(id=f"c{i}") for i in range(3)]
    evaluators = [HallucinationEvaluator()]
    plain = check_budget(
        cases, judge=Estimating(), evaluators=evaluators, repeat=1, budget=Budget()
    )
    confirmed = check_budget(
        cases, judge=Estimating(), evaluators=evaluators, repeat=1, budget=Budget(), confirm=True
    )
    assert (plain.calls, confirmed.calls) == (6, 9)
    repeated = check_budget(
        cases, judge=Estimating(), evaluators=evaluators, repeat=2, budget=Budget(), confirm=True
    )
    assert repeated.calls == 9  # the repetition, and no confirmation beside it
