from __future__ import annotations

import asyncio

import pytest

from ragaliq.errors import JudgeError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator
from ragaliq.gate import GateRules, compare
from ragaliq.models import ClaimVerdict, Usage, Verdict, VerificationResult
from ragaliq.runner import RunSettings, majority_verdicts, run_suite
from tests.baselines import record_baseline
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge

KEY = "sk-ant-cache-signing"
S, P, N, C = (
    Verdict.SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.CONTRADICTED,
)


class NoisyJudge(FakeJudge):
    """Gives the verdicts of ``by_sample[sample]`` to the claims of every case."""

    def __init__(self, by_sample, **kw):
        super().__init__(**kw)
        self.by_sample = by_sample
        self.samples: list[int] = []

    async def verify_claims(self, case, claims, *, sample=0, facts=()):
        self.samples.append(sample)
        self.verdicts[case.id] = self.by_sample[sample]
        return await super().verify_claims(case, claims, sample=sample, facts=facts)


def result(*verdicts, confidence=0.9):
    return VerificationResult(
        verdicts=tuple(
            ClaimVerdict(text=f"c{i}", verdict=v, confidence=confidence)
            for i, v in enumerate(verdicts)
        )
    )


def test_majority_verdict_and_agreement():
    merged = majority_verdicts(
        [result(S, S, C), result(S, N, C), result(S, N, S)], unstable_below=2 / 3
    )
    assert [m.verdict for m in merged] == [S, N, C]
    assert [m.agreement for m in merged] == [1.0, round(2 / 3, 6), round(2 / 3, 6)]
    assert all("unstable" not in m.flags for m in merged)


def test_a_split_vote_is_unstable_and_ties_go_to_the_weaker_verdict():
    merged = majority_verdicts([result(S, P), result(N, S)], unstable_below=2 / 3)
    assert [m.verdict for m in merged] == [N, P]
    assert all(m.agreement == 0.5 for m in merged)
    assert all("unstable" in m.flags for m in merged)


async def test_repeat_verifies_k_times_and_records_agreement():
    judge = NoisyJudge({0: [S, S, N], 1: [S, N, N], 2: [S, S, C]}, claims={"a": ["x", "y", "z"]})
    report = await run_suite(
        [make_case(id="a")],
        judge=judge,
        evaluators=[FaithfulnessEvaluator(), HallucinationEvaluator()],
        settings=RunSettings(repeat=3),
    )
    assert sorted(judge.samples) == [0, 1, 2]
    assert judge.count("extract") == 1
    claims = report.cases[0].claims
    assert [c.verdict for c in claims] == [S, S, N]
    assert [c.agreement for c in claims] == [1.0, round(2 / 3, 6), round(2 / 3, 6)]
    assert report.usage.calls == 1 + 3  # one extraction, three verifications


async def test_unstable_claims_are_not_new_unless_configured():
    claims = {"a": ["stable fact", "shaky fact", "wrong fact"]}
    base_judge = FakeJudge(claims=claims, verdicts={"a": [S, S, S]})
    evaluators = [HallucinationEvaluator()]
    base = record_baseline(
        await run_suite([make_case(id="a")], judge=base_judge, evaluators=evaluators)
    )
    noisy = NoisyJudge({0: [S, N, C], 1: [S, S, C]}, claims=claims)
    head = await run_suite(
        [make_case(id="a")], judge=noisy, evaluators=evaluators, settings=RunSettings(repeat=2)
    )
    shaky = next(c for c in head.cases[0].claims if c.text == "shaky fact")
    assert "unstable" in shaky.flags

    decision = compare(head, base, rules=GateRules(max_drop=1.0))
    assert [c.claim for c in decision.new_hallucinations] == ["wrong fact"]
    assert [c.claim for c in decision.unstable_claims] == ["shaky fact"]
    assert any("unstable" in n for n in decision.notices)

    counted = compare(head, base, rules=GateRules(max_drop=1.0, count_unstable=True))
    assert [c.claim for c in counted.new_hallucinations] == ["shaky fact", "wrong fact"]


async def test_repeated_verifications_are_cached_apart(tmp_path):
    from ragaliq.judges.cache import CachedJudge

    inner = NoisyJudge({0: [S], 1: [N], 2: [S]}, claims={"a": ["x"]})
    judge = CachedJudge(inner, tmp_path / "c.sqlite", secret=KEY)
    first = await run_suite(
        [make_case(id="a")],
        judge=judge,
        evaluators=[HallucinationEvaluator()],
        settings=RunSettings(repeat=3),
    )
    second = await run_suite(
        [make_case(id="a")],
        judge=judge,
        evaluators=[HallucinationEvaluator()],
        settings=RunSettings(repeat=3),
    )
    await judge.aclose()
    assert sorted(inner.samples) == [0, 1, 2]  # three distinct calls, none served twice
    assert second.usage.cache_hits == 4
    assert first.cases[0].claims == second.cases[0].claims


async def test_unstable_claims_are_listed_in_the_comment():
    from ragaliq.report.markdown import render_comment

    claims = {"a": ["stable fact", "shaky fact"]}
    evaluators = [HallucinationEvaluator()]
    base = record_baseline(
        await run_suite(
            [make_case(id="a")],
            judge=FakeJudge(claims=claims, verdicts={"a": [S, S]}),
            evaluators=evaluators,
        )
    )
    head = await run_suite(
        [make_case(id="a")],
        judge=NoisyJudge({0: [S, N], 1: [S, S]}, claims=claims),
        evaluators=evaluators,
        settings=RunSettings(repeat=2),
    )
    body = render_comment(compare(head, base, rules=GateRules(max_drop=1.0)))
    assert "1 unstable claim" in body
    assert "shaky fact" in body
    assert "agreement 50.0%" in body
    assert body.count("<details>") == body.count("</details>")


class FailingVerify(FakeJudge):
    async def verify_claims(self, case, claims, *, sample=0, facts=()):
        await asyncio.sleep(0)
        raise JudgeError("no valid reply", usage=Usage(calls=2, cost_usd=0.25))


async def test_every_failed_repetition_is_paid_for():
    report = await run_suite(
        [make_case(id="a")],
        judge=FailingVerify(usage_per_call=Usage(calls=1, cost_usd=0.01)),
        evaluators=[HallucinationEvaluator()],
        settings=RunSettings(repeat=3),
    )
    assert report.cases[0].status == "error"
    assert report.usage.calls == 1 + 3 * 2
    assert report.usage.cost_usd == pytest.approx(0.01 + 3 * 0.25)
