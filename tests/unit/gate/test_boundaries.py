"""The gate's verdict at its edges: a mean exactly at its threshold, an evaluator with nothing to
score on a shared case, a decision written by another version."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.errors import JudgeError
from ragaliq.evaluators import ContextRecallEvaluator, FaithfulnessEvaluator
from ragaliq.gate import GateRules, compare
from ragaliq.models import NOT_VERIFIABLE
from ragaliq.runner import run_suite
from tests.baselines import record_baseline
from tests.conftest import make_case, make_verdict
from tests.fakes.judge import FakeJudge
from tests.unit.gate.runs import SKIPPED, decided, judged, run_of, scored
from tests.unit.gate.test_compare import C, N, S, held, report_of, suite

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


FOUR = {f"c{i}": 1.0 for i in range(4)}


def test_a_drop_of_exactly_max_drop_passes_on_every_case_and_on_the_mean():
    decision = decided(FOUR, dict.fromkeys(FOUR, 0.95))
    faith = decision.evaluators["faithfulness"]
    assert (faith.delta, faith.status) == (-0.05, "pass")
    assert decision.regressed_cases == ()
    assert decision.passed is True
    just_past = decided(FOUR, {**FOUR, "c0": 0.94})
    assert [(r.case_id, r.head) for r in just_past.regressed_cases] == [("c0", 0.94)]


def test_a_drop_past_max_drop_by_no_more_than_the_rounding_slack_passes_on_the_mean_and_the_case():
    # 0.62 to 0.50 is, in floats, exactly 1e-9 past a max_drop of 0.119999999: the slack the gate
    # leaves for rounding, so neither the mean nor a case has dropped past it.
    rules = GateRules(max_drop=0.119999999)
    decision = decided({"a": 0.62, "b": 0.62}, {"a": 0.5, "b": 0.5}, rules=rules)
    faith = decision.evaluators["faithfulness"]
    assert (faith.delta, faith.status) == (-0.12, "pass")
    assert decision.regressed_cases == ()
    assert (decision.passed, decision.notices) == (True, ())


def test_a_case_within_its_evaluators_own_max_drop_is_no_regressed_case():
    rules = GateRules(max_drop=0.05, drops={"faithfulness": 0.2})
    decision = decided(FOUR, dict.fromkeys(FOUR, 0.85), rules=rules)
    assert decision.evaluators["faithfulness"].status == "pass"
    assert decision.regressed_cases == ()


def test_regressed_cases_are_listed_largest_drop_first_a_case_now_failing_first_of_all():
    decision = decided(
        {"a": 1.0, "b": 1.0, "c": 1.0},
        {"a": 0.9, "b": 0.4, "c": None},
        rules=GateRules(on_error="ignore"),
    )
    assert [(r.case_id, r.head) for r in decision.regressed_cases] == [
        ("c", None),
        ("b", 0.4),
        ("a", 0.9),
    ]


BOTH = {"context_recall": 0.5, "faithfulness": 0.5}


def test_an_evaluator_skipped_on_a_shared_case_leaves_the_case_to_the_others():
    # Recall comes first and has nothing to score on "a" now; faithfulness still compares "a".
    base = {"a": 1.0, "b": 1.0}
    head = {"a": {"context_recall": SKIPPED, "faithfulness": 0.0}, "b": 1.0}
    decision = decided(base, head, thresholds=BOTH, rules=GateRules(max_drop=0.5))
    recall, faith = decision.evaluators["context_recall"], decision.evaluators["faithfulness"]
    assert (recall.shared_cases, recall.delta) == (1, 0.0)
    assert (faith.shared_cases, faith.delta) == (2, -0.5)
    assert [(r.case_id, r.evaluator, r.head) for r in decision.regressed_cases] == [
        ("a", "faithfulness", 0.0)
    ]


def test_a_case_the_baseline_had_nothing_to_score_on_is_no_shared_case_for_that_evaluator():
    # Case "a" named no needed facts when the baseline was recorded; now it does.
    decision = decided(
        {"a": {"context_recall": SKIPPED, "faithfulness": 1.0}, "b": 1.0},
        {"a": {"context_recall": 0.5, "faithfulness": 1.0}, "b": 1.0},
        thresholds=BOTH,
    )
    recall = decision.evaluators["context_recall"]
    assert (recall.head, recall.shared_cases, recall.head_shared, recall.delta) == (
        0.75,
        1,
        1.0,
        0.0,
    )
    assert decision.passed is True


def test_a_case_either_run_could_not_judge_is_no_shared_case_even_for_what_it_scored():
    # The claims of "a" failed; its relevance was scored, but a case judged in part is left out
    # of every comparison, as it is of every mean.
    both = {"faithfulness": 0.5, "relevance": 0.5}
    whole = {"a": 1.0, "b": 1.0}
    in_part = {"a": {"faithfulness": None, "relevance": 0.2}, "b": 1.0}
    rules = GateRules(on_error="ignore")
    for base, head in ((whole, in_part), (in_part, whole)):
        relevance = decided(base, head, thresholds=both, rules=rules).evaluators["relevance"]
        assert (relevance.shared_cases, relevance.delta) == (1, 0.0)


def test_the_shared_means_are_given_to_six_decimals():
    thirds = {"a": 1.0, "b": 1.0, "c": 0.0}
    faith = decided(thirds, thirds).evaluators["faithfulness"]
    assert (faith.baseline, faith.head_shared, faith.delta) == (0.666667, 0.666667, 0.0)


@pytest.mark.parametrize(
    ("was", "now", "interval"), [(1.0, 0.0, (-0.333333, 0.0)), (0.0, 1.0, (0.0, 0.333333))]
)
def test_an_interval_ending_a_third_of_the_way_is_given_to_six_decimals(was, now, interval):
    # One case of nine changed by 1: resampled, it comes up three times or more in 6.9% of the
    # means and four times or more in 1.2%, so the 2.5% end is at 3/9; it is absent from 35%.
    nine = dict.fromkeys((f"c{i}" for i in range(9)), was)
    decision = decided(
        nine, {**nine, "c0": now}, thresholds={"faithfulness": 0.0}, rules=GateRules(max_drop=1.0)
    )
    assert decision.evaluators["faithfulness"].interval == interval


def test_a_baseline_judged_differently_gives_no_interval():
    base = record_baseline(scored(FOUR))
    other = base.model_copy(
        update={"provenance": base.provenance.model_copy(update={"judge_model": "other-model"})}
    )
    decision = compare(scored(dict.fromkeys(FOUR, 0.5)), other, rules=GateRules())
    faith = decision.evaluators["faithfulness"]
    assert (faith.delta, faith.status, faith.interval, faith.confidence) == (
        -0.5,
        "pass",
        None,
        None,
    )
    assert decision.baseline_provenance == base.provenance.model_copy(
        update={"judge_model": "other-model"}
    )


def test_a_fact_the_offline_judge_cannot_check_is_not_lost_and_the_next_one_still_is():
    recall = [ContextRecallEvaluator(enabled=True)]
    held_facts = [make_verdict(S, text="Refunds take 14 days."), make_verdict(S, text="By card.")]
    now = [
        make_verdict(N, text="Refunds take 14 days.", flags=(NOT_VERIFIABLE,)),
        make_verdict(N, text="By card."),
    ]
    base = record_baseline(run_of([judged("a", recall, facts=held_facts)], recall))
    head = run_of([judged("a", recall, facts=now)], recall)
    decision = compare(head, base, rules=GateRules())
    assert [(f.case_id, f.claim) for f in decision.lost_facts] == [("a", "By card.")]
