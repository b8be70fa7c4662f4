"""The one policy model and its ratchet: a pull request tightens at once and loosens nothing."""

from __future__ import annotations

import pytest

from ragaliq.baseline import parse_baseline
from ragaliq.config import parse_config
from ragaliq.errors import ConfigError
from ragaliq.policy import HIGHER, SMALLER, Budget, GatePolicy, GateRules, Ratchet, ratchet
from ragaliq.tightening import tighten


@pytest.mark.parametrize(
    ("rule", "a", "b", "stricter"),
    [
        (HIGHER, 0.7, 0.8, 0.8),
        (HIGHER, 0.8, 0.7, 0.8),
        (HIGHER, None, 0.5, 0.5),  # no limit is the loosest
        (HIGHER, 0.5, None, 0.5),
        (SMALLER, 0.05, 0.02, 0.02),
        (SMALLER, None, 0.1, 0.1),
        (Ratchet(("pass", "fail")), "fail", "pass", "fail"),
    ],
)
def test_one_rule_says_which_of_two_values_is_stricter(rule, a, b, stricter):
    assert rule.stricter(a, b) == stricter
    assert rule.tightens(a, b) is (b == stricter and a != b)
    assert not rule.tightens(a, a)


def test_the_ratchet_reads_which_way_is_stricter_from_each_setting():
    base = GatePolicy()
    proposed = GatePolicy(
        fail_on_new_hallucinations=True,  # stricter
        on_error="ignore",  # looser
        max_drop=0.01,  # stricter: smaller
        accept_from=["alice"],  # no direction: only once merged
        budget=Budget(run_usd=5.0, case_tokens=900_000),  # one stricter, one looser
    )
    update, stricter, looser, unmarked = ratchet(base, proposed)
    assert update["fail_on_new_hallucinations"] is True
    assert update["max_drop"] == 0.01
    assert update["budget"] == Budget(run_usd=5.0)
    assert "on_error" not in update and "accept_from" not in update
    assert sorted(stricter) == [
        "budget.run_usd 25 → 5",
        "fail_on_new_hallucinations false → true",
        "max_drop 0.05 → 0.01",
    ]
    assert sorted(looser) == ["budget.case_tokens 250000 → 900000", "on_error fail → ignore"]
    assert unmarked == ["accept_from write → ['alice']"]


def test_a_pr_config_tightens_the_policy_at_once_and_proposes_the_rest():
    trusted = parse_config("gate:\n  on_error: fail\n")
    proposed = parse_config(
        "gate:\n  on_error: ignore\n  count_unstable: true\n  budget: {run_usd: 2.5}\n"
    )
    config, notices = tighten(trusted, proposed)
    assert config.gate.count_unstable is True
    assert config.gate.budget.run_usd == 2.5
    assert config.gate.on_error == "fail"
    assert any("gate.on_error fail → ignore" in n for n in notices)


def test_a_run_is_never_held_to_less_than_its_baseline_recorded():
    # As a baseline records it: every setting of the policy in force, and each evaluator's drop.
    recorded = GateRules.of(GatePolicy(fail_on_new_hallucinations=True), {"faithfulness": 0.02})
    mine = GateRules(max_drop=0.1, budget=Budget(run_usd=100.0))
    rules, loosened = mine.at_least(recorded)
    assert rules.fail_on_new_hallucinations is True
    assert rules.drop_for("faithfulness") == 0.02
    assert rules.budget.run_usd == 25.0  # the recorded (default) budget is the ceiling
    assert "fail_on_new_hallucinations true → false" in loosened
    assert "faithfulness max_drop 0.02 → 0.1" in loosened


def test_an_older_baseline_holds_a_run_only_to_what_it_recorded():
    older = {
        "max_drop": {"faithfulness": 0.05},
        "fail_on_new_hallucinations": False,
        "on_error": "fail",
        "count_unstable": False,
    }
    recorded = GateRules.model_validate(older)
    assert recorded.drops == {"faithfulness": 0.05}
    mine = GateRules(on_missing_key="offline", budget=Budget(run_usd=100.0))
    rules, loosened = mine.at_least(recorded)
    assert loosened == []  # on_missing_key and the budget were never recorded
    assert rules.on_missing_key == "offline" and rules.budget.run_usd == 100.0


def test_a_baseline_read_back_keeps_what_it_recorded(tmp_path):
    text = (
        '{"schema_version": 1, "recorded_at": "2026-01-01T00:00:00Z", "provenance": '
        '{"judge_provider": "offline", "judge_model": "m", "prompt_version": "p", '
        '"evaluator_versions": {}}, "thresholds": {}, "policy": {"max_drop": {}, '
        '"fail_on_new_hallucinations": false, "on_error": "fail", "count_unstable": false}, '
        '"report": {"judge": {"provider": "offline", "model": "m", "prompt_version": "p"}, '
        '"evaluators": {}, "summary": {"cases": 0, "errors": 0, "evaluators": {}}, '
        '"usage": {}, "cases": []}}'
    )
    baseline = parse_baseline(text, source="b.json")
    assert baseline.policy is not None
    assert "on_missing_key" not in baseline.policy.model_fields_set


@pytest.mark.parametrize("confidence", [0.5, 0.999])
def test_a_confidence_at_either_end_of_its_range_is_accepted(confidence):
    assert parse_config(f"gate: {{confidence: {confidence}}}\n").gate.confidence == confidence


@pytest.mark.parametrize(("confidence", "shown"), [(0.499, "0.499"), (1.0, "1")])
def test_a_confidence_outside_its_range_says_the_range(confidence, shown):
    with pytest.raises(ConfigError) as caught:
        parse_config(f"gate: {{confidence: {confidence}}}\n")
    assert str(caught.value) == (
        f"ragaliq.yaml: gate.confidence: must be between 0.5 and 0.999 (got {shown})"
    )


def test_every_setting_a_run_loosens_from_its_baseline_is_named_once():
    recorded = GateRules.of(GatePolicy(fail_on_new_hallucinations=True), {"faithfulness": 0.02})
    mine = GateRules(max_drop=0.1, budget=Budget(run_usd=100.0))
    rules, loosened = mine.at_least(recorded)
    assert loosened == [
        "fail_on_new_hallucinations true → false",
        "budget.run_usd 25 → 100",
        "faithfulness max_drop 0.02 → 0.1",
    ]
    assert rules.max_drop == 0.1  # an evaluator the baseline never scored has no drop to hold


@pytest.mark.parametrize(
    ("own", "loosened", "held"),
    [
        (0.01, [], 0.01),  # stricter than recorded: kept, though max_drop is looser
        (0.08, ["faithfulness max_drop 0.02 → 0.08"], 0.02),
    ],
)
def test_a_run_s_own_drop_for_an_evaluator_is_held_to_the_recorded_one(own, loosened, held):
    recorded = GateRules.of(GatePolicy(), {"faithfulness": 0.02})
    mine = GateRules(max_drop=0.1, drops={"faithfulness": own})
    rules, said = mine.at_least(recorded)
    assert said == loosened
    assert rules.drop_for("faithfulness") == held
