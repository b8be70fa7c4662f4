"""The gate's verdict at its edges: a mean exactly at its threshold, an evaluator with nothing to
score on a shared case, a decision written by another version."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.errors import JudgeError
from ragaliq.evaluators import ContextRecallEvaluator, FaithfulnessEvaluator
from ragaliq.gate import GateRules, compare
from ragaliq.runner import run_suite
from tests.baselines import record_baseline
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge
from tests.unit.gate.test_compare import C, S, held, report_of, suite

TWO = ["Refunds take 14 days.", "Support is 24/7."]


async def test_a_mean_exactly_at_its_threshold_passes_on_every_case_and_on_the_shared_ones():
    # Each case scores 0.5 (one of two claims supported): the mean is the threshold exactly.
    at_half = suite(faithfulness=0.5, hallucination=0.5)
    base = record_baseline(
        await report_of({"a": [S, C], "b": [S, C]}, claims=TWO, evaluators=at_half)
    )
    head = await report_of({"a": [S, C], "b": [S, C]}, claims=TWO, evaluators=at_half)
    decision = held(head, base, rules=GateRules())
    faith = decision.evaluators["faithfulness"]
    assert (faith.head, faith.head_shared, faith.threshold) == (0.5, 0.5, 0.5)
    assert faith.status == "pass"
    assert decision.passed is True


async def test_a_mean_just_under_its_threshold_on_the_shared_cases_fails():
    # A new case scoring 1.0 lifts the run's mean over the threshold; the shared cases still fail.
    lenient = suite(faithfulness=0.5, hallucination=0.5)
    base = record_baseline(
        await report_of({"a": [S, C], "b": [S, C]}, claims=TWO, evaluators=lenient)
    )
    head = await report_of(
        {"a": [S, C], "b": [S, C], "new": [S, S]},
        claims=TWO,
        evaluators=suite(faithfulness=0.55, hallucination=0.5),
    )
    decision = held(head, base, rules=GateRules())
    faith = decision.evaluators["faithfulness"]
    assert faith.head is not None and faith.head > 0.55
    assert faith.head_shared == 0.5
    assert faith.status == "below_threshold"
    assert decision.passed is False
    assert any("faithfulness: 0.500 over the 2 cases" in f for f in decision.failures), (
        decision.failures
    )


async def test_a_drop_over_two_shared_cases_that_agree_is_a_regression():
    base = record_baseline(await report_of({"a": [S, S], "b": [S, S]}, claims=TWO))
    head = await report_of({"a": [S, C], "b": [S, C]}, claims=TWO)
    decision = held(head, base, rules=GateRules(max_drop=0.05))
    hallucination = decision.evaluators["hallucination"]
    assert hallucination.shared_cases == 2
    assert hallucination.status == "regressed"
    assert hallucination.interval == (-0.5, -0.5)
    assert decision.passed is False


async def test_a_shared_case_with_nothing_to_score_now_is_left_out_of_the_comparison():
    # Case "a" had needed facts in the baseline and has none now: recall is skipped there, so the
    # comparison is over case "b" alone and nothing regressed.
    evaluators = [FaithfulnessEvaluator(), ContextRecallEvaluator(enabled=True)]
    facts = ("Refunds are available within 14 days of purchase.",)
    before = [make_case(id=i, expected_facts=facts) for i in ("a", "b")]
    after = [make_case(id="a"), make_case(id="b", expected_facts=facts)]
    judge = FakeJudge(fact_verdicts={"a": [S], "b": [S]})
    base = record_baseline(await run_suite(before, judge=judge, evaluators=evaluators))
    head = await run_suite(after, judge=judge, evaluators=evaluators)
    assert head.cases[0].results["context_recall"].status == "skipped"
    decision = held(head, base, rules=GateRules())
    recall = decision.evaluators["context_recall"]
    assert (recall.shared_cases, recall.baseline, recall.head_shared) == (1, 1.0, 1.0)
    assert decision.regressed_cases == ()
    assert decision.passed is True


async def test_a_shared_case_the_judge_failed_on_counts_as_regressed_not_as_a_score():
    base = record_baseline(await report_of({"a": [S, S], "b": [S, S]}, claims=TWO))
    head = await report_of(
        {"a": [S, S], "b": [S, S]}, claims=TWO, fail={"b": JudgeError("the judge timed out")}
    )
    decision = compare(head, base, rules=GateRules(on_error="ignore"))
    faith = decision.evaluators["faithfulness"]
    assert faith.shared_cases == 1  # case "b" has no score to compare
    assert ("b", "faithfulness", None) in [
        (r.case_id, r.evaluator, r.head) for r in decision.regressed_cases
    ]


def test_a_decision_written_by_another_version_is_refused_with_the_fix(tmp_path):
    decision = tmp_path / "decision.json"
    decision.write_text(json.dumps({"schema_version": 99}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["render", "--decision", str(decision)])
    assert result.exit_code == 2
    assert "schema_version 99 is not the supported 1" in result.output
    assert "decide the gate again with this version" in result.output
