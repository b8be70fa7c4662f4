"""What the gate says, word for word: each failure line and notice a reader sees in the comment,
the job summary and the terminal."""

from __future__ import annotations

import pytest

from ragaliq.evaluators import HallucinationEvaluator
from ragaliq.gate import GateRules, compare
from ragaliq.gate.statistics import cases_to_resolve
from ragaliq.models import NOT_SCORED, Verdict
from ragaliq.report.markdown import render_comment
from tests.baselines import record_baseline
from tests.conftest import make_verdict
from tests.unit.gate.runs import SKIPPED, decided, judged, run_of, scored

S, C = Verdict.SUPPORTED, Verdict.CONTRADICTED

ALL_ONE = {f"c{i}": 1.0 for i in range(10)}


def test_a_first_run_says_how_to_record_a_baseline():
    decision = compare(scored({"a": 1.0}), None, rules=GateRules())
    assert (decision.first_run, decision.comparable, decision.passed) == (True, False, True)
    assert decision.notices == (
        "No baseline yet: only thresholds apply, and no hallucinated claim counts as new. Record "
        "one on the main branch with the action's mode: update-baseline, or with ragaliq "
        "baseline record.",
    )
    faith = decision.evaluators["faithfulness"]
    assert (faith.baseline, faith.shared_cases, faith.interval, faith.confidence) == (
        None,
        None,
        None,
        None,
    )


def test_a_baseline_judged_differently_names_each_difference():
    base = record_baseline(scored({"a": 1.0}))
    judged_apart = base.provenance.model_copy(
        update={"judge_model": "other-model", "prompt_version": "p0"}
    )
    other = base.model_copy(update={"provenance": judged_apart})
    decision = compare(scored({"a": 0.5}), other, rules=GateRules())
    assert (decision.comparable, decision.passed) == (False, True)
    assert decision.notices == (
        "The baseline was judged differently (judge model: other-model → fake-1; prompt version: "
        "p0 → p1), so score drops are shown but do not fail the gate; thresholds still apply. "
        "Update the baseline on main to compare like with like.",
    )


def test_a_run_below_its_threshold_says_by_how_much():
    decision = decided({"a": 1.0, "b": 1.0}, {"a": 0.5, "b": 0.3})
    assert decision.failures == ("faithfulness: 0.400 is below the threshold 0.50",)


def test_a_run_at_its_threshold_whose_shared_cases_are_below_it_names_them():
    # The new case lifts the run's mean to the threshold exactly; the shared cases stay below.
    decision = decided({"a": 0.25, "b": 0.25}, {"a": 0.25, "b": 0.25, "new": 1.0})
    assert decision.evaluators["faithfulness"].head == 0.5
    assert decision.failures == (
        "faithfulness: 0.250 over the 2 cases the baseline has is below the threshold 0.50 "
        "(new cases do not lift it)",
    )


def test_a_regression_is_told_over_the_shared_cases_new_ones_left_out():
    decision = decided({"a": 1.0, "b": 1.0}, {"a": 0.5, "b": 0.5, "new": 1.0})
    faith = decision.evaluators["faithfulness"]
    assert (faith.status, faith.head, faith.head_shared) == ("regressed", 0.666667, 0.5)
    assert decision.failures == (
        "faithfulness: 0.500 dropped 0.500 from the baseline 1.000 (max_drop 0.05)",
    )


def test_an_evaluator_that_scored_no_case_fails_as_not_scored():
    run = scored({"a": SKIPPED, "b": SKIPPED})
    decision = compare(run, None, rules=GateRules())
    assert decision.evaluators["faithfulness"].status == "no_score"
    assert decision.failures == (f"faithfulness: {NOT_SCORED}",)


def test_a_drop_on_one_shared_case_is_inconclusive_and_says_why():
    # A new case, so that the drop is on the one case both runs share.
    decision = decided({"a": 1.0}, {"a": 0.5, "new": 1.0})
    faith = decision.evaluators["faithfulness"]
    assert (faith.status, faith.passed, faith.interval, faith.confidence) == (
        "inconclusive",
        True,
        None,
        None,
    )
    assert faith.cases_to_resolve is None
    assert decision.passed is True
    assert (
        "faithfulness dropped 0.500 on the 1 case both runs share, past max_drop 0.05, but one "
        "shared case cannot say how noisy the scores are: the suite cannot tell this drop from "
        "noise. It does not fail the gate (gate.on_inconclusive: pass)."
    ) in decision.notices


def test_an_inconclusive_drop_that_fails_says_so_in_its_notice_and_its_failure_line():
    decision = decided({"a": 1.0}, {"a": 0.5}, rules=GateRules(on_inconclusive="fail"))
    assert decision.passed is False
    assert decision.failures == (
        "faithfulness: dropped 0.500, past max_drop 0.05, but within what the suite can resolve "
        "(gate.on_inconclusive: fail)",
    )
    assert (
        "faithfulness dropped 0.500 on the 1 case both runs share, past max_drop 0.05, but one "
        "shared case cannot say how noisy the scores are: the suite cannot tell this drop from "
        "noise. It fails the gate (gate.on_inconclusive: fail)."
    ) in decision.notices


def test_an_inconclusive_drop_gives_its_interval_and_the_cases_that_would_resolve_it():
    # One case of ten lost everything: a mean drop of 0.1 that nine unchanged cases make noisy.
    # Resampled, the bad case comes up three times or more in over 2.5% of the means (7%) and
    # never in over 2.5% of them (35%): the interval is [-0.3, 0].
    head = {**ALL_ONE, "c0": 0.0}
    rules = GateRules(drops={"faithfulness": 0.02})
    decision = decided(ALL_ONE, head, rules=rules)
    faith = decision.evaluators["faithfulness"]
    assert (faith.status, faith.max_drop, faith.interval) == ("inconclusive", 0.02, (-0.3, 0.0))
    sd = (0.9**2 + 9 * 0.1**2) ** 0.5 / 3  # the per-case changes' sample standard deviation
    to_resolve = cases_to_resolve(sd, max_drop=0.02, confidence=0.95)
    assert faith.cases_to_resolve == to_resolve == 1963
    assert (
        "faithfulness dropped 0.100 on the 10 cases both runs share, past max_drop 0.02, but its "
        "95% interval [-0.300, +0.000] includes no change: the suite cannot tell this drop from "
        "noise; about 1,963 cases would resolve a drop of that size. It does not fail the gate "
        "(gate.on_inconclusive: pass)."
    ) in decision.notices


def test_cases_new_since_the_baseline_are_named_up_to_five():
    one = decided({"a": 1.0}, {"a": 1.0, "z": 1.0})
    assert (
        "1 case is new since the baseline: z. They count towards the thresholds; drops are "
        "measured on the cases both runs share."
    ) in one.notices
    added = {f"n{i}": 1.0 for i in range(1, 6)}
    five = decided({"a": 1.0}, {"a": 1.0, **added})
    assert (
        "5 cases are new since the baseline: n1, n2, n3, n4, n5. They count towards the "
        "thresholds; drops are measured on the cases both runs share."
    ) in five.notices
    seven = decided({"a": 1.0}, {"a": 1.0, **added, "n6": 1.0, "n7": 1.0})
    assert (
        "7 cases are new since the baseline: n1, n2, n3, n4, n5 and 2 more. They count towards "
        "the thresholds; drops are measured on the cases both runs share."
    ) in seven.notices
    assert seven.added_cases == tuple(f"n{i}" for i in range(1, 8))


def test_a_run_that_shares_no_case_with_the_baseline_is_warned_about():
    decision = decided({"a": 1.0}, {"b": 1.0}, rules=GateRules(on_missing_cases="notice"))
    assert decision.passed is True
    assert decision.notices == (
        "No case id is in both the baseline and this run: check that the baseline was recorded "
        "from the same dataset, since the scores compared are of different cases.",
        "1 case is new since the baseline: b. They count towards the thresholds; drops are "
        "measured on the cases both runs share.",
        "1 baseline case is missing from this run: a (gate.on_missing_cases: notice).",
    )


@pytest.mark.parametrize(
    ("missing", "told"),
    [
        (["gone"], "1 baseline case is missing from this run: gone"),
        (["gone", "lost"], "2 baseline cases are missing from this run: gone, lost"),
    ],
)
def test_missing_cases_fail_with_how_to_drop_cases_on_purpose(missing, told):
    decision = decided({"a": 1.0, **dict.fromkeys(missing, 1.0)}, {"a": 1.0})
    assert decision.removed_cases == tuple(missing)
    assert decision.failures == (
        f"{told}; a run must judge every case the baseline has (gate.on_missing_cases: fail). To "
        "drop cases on purpose, record the baseline without them on the base branch first",
    )


@pytest.mark.parametrize(("failed", "told"), [(["b"], "1 case"), (["b", "c"], "2 cases")])
def test_cases_the_judge_failed_on_fail_the_gate_counted(failed, told):
    run = scored({"a": 1.0, **dict.fromkeys(failed)})
    decision = compare(run, None, rules=GateRules())
    assert decision.failures == (f"{told} could not be judged (gate.on_error: fail)",)
    assert [e.error for e in decision.errors] == ["the judge timed out"] * len(failed)
    assert decision.evaluators["faithfulness"].errors == len(failed)


def test_a_case_that_failed_without_a_reason_is_listed_with_an_unknown_error():
    decision = compare(scored({"a": None}, error=None), None, rules=GateRules(on_error="ignore"))
    assert [(e.case_id, e.error) for e in decision.errors] == [("a", "unknown error")]


def test_a_run_that_stopped_early_fails_and_says_why():
    run = scored({"a": 1.0}, stopped_early="the run budget of $0.10 was reached")
    decision = compare(run, None, rules=GateRules())
    assert decision.failures == ("the run stopped early: the run budget of $0.10 was reached",)


@pytest.mark.parametrize(
    ("shaky", "told"),
    [
        (
            1,
            "1 hallucinated claim is unstable (the judge's verdicts disagreed when asked again), "
            "so it is listed apart and not counted as new.",
        ),
        (
            2,
            "2 hallucinated claims are unstable (the judge's verdicts disagreed when asked again), "
            "so they are listed apart and not counted as new.",
        ),
    ],
)
def test_unstable_claims_are_counted_apart_and_said_so(shaky, told):
    evaluators = [HallucinationEvaluator()]
    claims = [make_verdict(S, text=f"Claim {i}.") for i in range(3)]
    unstable = [make_verdict(C, text=c.text, flags=("unstable",)) for c in claims[:shaky]]
    base = record_baseline(run_of([judged("a", evaluators, claims=claims)], evaluators))
    head = run_of([judged("a", evaluators, claims=unstable + claims[shaky:])], evaluators)
    decision = compare(head, base, rules=GateRules(max_drop=1.0))
    assert decision.notices == (told,)
    assert len(decision.unstable_claims) == shaky
    counted = compare(head, base, rules=GateRules(max_drop=1.0, count_unstable=True))
    assert counted.notices == (
        "Newly hallucinated claims are listed but do not fail this gate "
        "(gate.fail_on_new_hallucinations: false); the scores decide.",
    )


def test_evaluators_a_pull_request_turned_off_are_named_and_fail():
    thresholds = {"faithfulness": 0.5, "hallucination": 0.5, "relevance": 0.5}
    base = record_baseline(scored({"a": 0.75}, thresholds=thresholds))
    rules = GateRules(drops={"hallucination": 0.02})
    decision = compare(scored({"a": 0.75}), base, rules=rules)
    hallucination = decision.evaluators["hallucination"]
    assert (hallucination.turned_off, hallucination.baseline, hallucination.max_drop) == (
        True,
        0.75,
        0.02,
    )
    assert decision.failures == (
        "hallucination: turned off, but the baseline has it",
        "relevance: turned off, but the baseline has it",
    )
    assert (
        "This run has no hallucination, relevance score, which the baseline has: a PR cannot turn "
        "an evaluator off until it is merged and the baseline updated."
    ) in decision.notices


RETRIEVAL_TOO = {"faithfulness": 0.5, "recall_at_k": 0.0}


def _both(score: float) -> dict[str, dict[str, float]]:
    return {f"c{i}": {"faithfulness": score, "recall_at_k": score} for i in range(6)}


def test_a_judge_change_sets_apart_only_the_evaluators_that_ask_the_judge():
    base = record_baseline(scored(_both(1.0), thresholds=RETRIEVAL_TOO))
    judged_apart = base.provenance.model_copy(update={"judge_model": "other-model"})
    other = base.model_copy(update={"provenance": judged_apart})
    decision = compare(scored(_both(0.5), thresholds=RETRIEVAL_TOO), other, rules=GateRules())
    faith, recall = decision.evaluators["faithfulness"], decision.evaluators["recall_at_k"]
    assert (faith.comparable, faith.status, faith.delta) == (False, "pass", -0.5)
    assert (recall.comparable, recall.status, recall.delta) == (True, "regressed", -0.5)
    assert (decision.comparable, decision.passed) == (False, False)
    assert decision.failures == (
        "recall_at_k: 0.500 dropped 0.500 from the baseline 1.000 (max_drop 0.05)",
    )
    assert decision.notices == (
        "The baseline was judged differently (judge model: other-model → fake-1), so drops of "
        "faithfulness are shown but do not fail the gate; recall_at_k asks no judge and is still "
        "held to the baseline; thresholds still apply. Update the baseline on main to compare "
        "like with like.",
    )
    assert (
        "_The baseline was judged differently, so score drops are shown but do not fail the "
        "gate, except those of recall&#95;at&#95;k, judged alike and still held to it._"
    ) in render_comment(decision)


def test_a_retrieval_metrics_own_version_change_sets_apart_only_it():
    base = record_baseline(scored(_both(1.0), thresholds=RETRIEVAL_TOO))
    versions = {**base.provenance.evaluator_versions, "recall_at_k": "0"}
    other = base.model_copy(
        update={"provenance": base.provenance.model_copy(update={"evaluator_versions": versions})}
    )
    decision = compare(scored(_both(0.5), thresholds=RETRIEVAL_TOO), other, rules=GateRules())
    assert decision.evaluators["recall_at_k"].status == "pass"
    assert decision.evaluators["faithfulness"].status == "regressed"
    assert decision.notices == (
        "The baseline was judged differently (recall_at_k evaluator version: 0 → 1), so drops of "
        "recall_at_k are shown but do not fail the gate; faithfulness is still held to the "
        "baseline; thresholds still apply. Update the baseline on main to compare like with like.",
    )


def test_a_judge_change_with_only_retrieval_metrics_holds_them_all_and_says_nothing():
    only = {"recall_at_k": 0.0, "mrr": 0.0}
    runs = [{f"c{i}": {"recall_at_k": s, "mrr": s} for i in range(6)} for s in (1.0, 0.5)]
    base = record_baseline(scored(runs[0], thresholds=only))
    offline = base.provenance.model_copy(update={"judge_provider": "claude"})
    decision = compare(
        scored(runs[1], thresholds=only),
        base.model_copy(update={"provenance": offline}),
        rules=GateRules(),
    )
    assert decision.comparable is True
    assert {n: e.status for n, e in decision.evaluators.items()} == {
        "recall_at_k": "regressed",
        "mrr": "regressed",
    }
    assert decision.notices == ()
