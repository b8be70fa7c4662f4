"""The JUnit XML and OpenMetrics files, read back with the parsers CI hosts and tools use."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ragaliq.gate import RegressedCase
from ragaliq.models import CaseResult, EvaluationResult, Usage
from ragaliq.redaction import REDACTED, forget_secrets, register_secret
from ragaliq.report.junit import NEW_HALLUCINATIONS_RULE, UNCHECKED_CLAIMS_RULE, write_junit
from ragaliq.report.openmetrics import render_metrics, write_metrics
from tests.unit.report.decisions import (
    API_Q,
    REFUND_Q,
    RESTORE_Q,
    change,
    realistic_decision,
    realistic_new_claims,
)

KEY = "sk-ant-api03-" + "Q7x9" * 20
HOSTILE_CLAIM = (
    "Refunds &amp; credits <b>take</b> 30 days ]]> <![CDATA[x]]> \x00\x07\x1b[31m\x7f"
    f"\u202eevil\u202c \ufffe \"quoted\" 'single' key {KEY} end"
)


@pytest.fixture
def key() -> Iterator[str]:
    register_secret(KEY)
    yield KEY
    forget_secrets()


def case(case_id: str, query: str, **scores: float) -> CaseResult:
    return CaseResult(
        id=case_id,
        input_hash=case_id,
        status="ok",
        query=query,
        results={
            name: EvaluationResult(evaluator=name, score=score, passed=score >= 0.7)
            for name, score in scores.items()
        },
    )


def cases() -> list[CaseResult]:
    return [
        case("billing-refund-window", REFUND_Q, faithfulness=0.5, hallucination=0.5),
        case("restore-deleted-folder", RESTORE_Q, faithfulness=1.0, hallucination=0.333333),
        CaseResult(
            id="api-rate-limits",
            input_hash="h",
            status="error",
            query=API_Q,
            error="the judge replied twice without a verdict for claim 2",
        ),
        CaseResult(
            id="sso-okta-scim",
            input_hash="h",
            status="skipped",
            query="SSO?",
            error="the run's budget of $0.50 was spent",
        ),
        case("mobile-offline-files", "Offline?", faithfulness=1.0, hallucination=1.0),
    ]


def counted(*extra: str) -> tuple[str, ...]:
    return (*realistic_decision().failures, *extra)


def read_junit(tmp_path: Path, decision, results) -> dict[str, dict[str, TestCase]]:
    path = tmp_path / "gate.xml"
    write_junit(path, decision, results)
    xml = JUnitXml.fromfile(str(path))
    suites: dict[str, dict[str, TestCase]] = {}
    for suite in xml:
        assert isinstance(suite, TestSuite)
        suites[suite.name] = {test.name: test for test in suite}
    return suites


def only(test: TestCase):
    assert len(test.result) == 1, test.result
    return test.result[0]


def test_each_case_is_a_test_case_failing_with_its_new_claims_and_their_ids(tmp_path):
    decision = realistic_decision(
        failures=counted(f"3 newly hallucinated claims {NEW_HALLUCINATIONS_RULE}")
    )
    suites = read_junit(tmp_path, decision, cases())
    tests = suites["cases"]
    assert list(tests) == [
        "billing-refund-window",
        "restore-deleted-folder",
        "api-rate-limits",
        "sso-okta-scim",
        "mobile-offline-files",
    ]
    refund = only(tests["billing-refund-window"])
    assert isinstance(refund, Failure)
    assert refund.type == "new_hallucination"
    first, second, third = realistic_new_claims()
    assert f"[{first.id}] CONTRADICTED: {first.claim}" in refund.message
    assert f"[{first.id}] CONTRADICTED: {first.claim} ({first.reason})" in refund.text
    restore = only(tests["restore-deleted-folder"])
    assert restore.type == "new_hallucination"
    assert restore.message.startswith("2 newly hallucinated claims")
    assert f"[{second.id}]" in restore.message and f"[{third.id}]" in restore.message
    # The hallucination evaluator fails below its threshold: the case below it says so too.
    assert "hallucination: 0.333 is below the threshold 0.75" in restore.text
    assert tests["mobile-offline-files"].is_passed


def test_errors_are_errors_and_skipped_cases_skipped(tmp_path):
    suites = read_junit(tmp_path, realistic_decision(), cases())
    error = suites["cases"]["api-rate-limits"].result[0]
    assert isinstance(error, Error)
    assert error.type == "judge_error"
    assert error.message == "the judge replied twice without a verdict for claim 2"
    skipped = only(suites["cases"]["sso-okta-scim"])
    assert isinstance(skipped, Skipped)
    assert skipped.message == "the run's budget of $0.50 was spent"


def test_each_evaluator_and_the_gate_are_test_cases_typed_by_their_failure(tmp_path):
    decision = realistic_decision()
    suites = read_junit(tmp_path, decision, cases())
    evaluators = suites["evaluators"]
    faithfulness = only(evaluators["faithfulness"])
    assert (faithfulness.type, faithfulness.message) == (
        "regressed",
        "faithfulness: 0.812 dropped 0.071 from the baseline 0.883 (max_drop 0.05)",
    )
    hallucination = only(evaluators["hallucination"])
    assert hallucination.type == "below_threshold"
    assert evaluators["relevance"].is_passed
    assert "head: 0.9745\nbaseline: 0.962\ndelta: 0.0125" in evaluators["relevance"].system_out
    gate = only(suites["gate"]["gate"])
    assert gate.type == "gate"
    assert gate.text.splitlines() == list(decision.failures)


def test_regressed_cases_fail_when_their_evaluator_fails_on_its_drop(tmp_path):
    decision = realistic_decision()
    tests = read_junit(tmp_path, decision, cases())["cases"]
    # Not counted (gate.fail_on_new_hallucinations: false): the claims are told, not failed.
    assert "newly hallucinated, not failing the gate" in tests["billing-refund-window"].system_out
    refund = only(tests["billing-refund-window"])
    assert refund.type == "below_threshold"
    # A case that could not be judged is an error, not also a failure on the score it lacks.
    errored = tests["api-rate-limits"]
    assert [type(r) for r in errored.result] == [Error]
    assert "no score now: faithfulness: no score, from 1.000" in errored.system_out
    dropped = realistic_decision(
        regressed_cases=(
            RegressedCase(
                case_id="mobile-offline-files",
                query="Offline?",
                evaluator="faithfulness",
                baseline=1.0,
                head=0.5,
            ),
        )
    )
    result = only(read_junit(tmp_path, dropped, cases())["cases"]["mobile-offline-files"])
    assert (result.type, result.message) == (
        "regressed",
        "1 score dropped past max_drop: faithfulness: 0.500, from 1.000 in the baseline",
    )


def test_unchecked_claims_fail_their_case_only_when_the_gate_fails_on_them(tmp_path):
    unchecked = change("mobile-offline-files", "Offline?", "Offline files sync hourly.", id="abc")
    failing = realistic_decision(
        unverifiable_claims=(unchecked,),
        failures=counted(f"1 claim not verifiable offline {UNCHECKED_CLAIMS_RULE}"),
    )
    result = only(read_junit(tmp_path, failing, cases())["cases"]["mobile-offline-files"])
    assert result.type == "unchecked_claims"
    assert "[abc] not verifiable offline: Offline files sync hourly." in result.message
    told = realistic_decision(unverifiable_claims=(unchecked,))
    test = read_junit(tmp_path, told, cases())["cases"]["mobile-offline-files"]
    assert test.is_passed
    assert "[abc] not verifiable offline" in test.system_out


def test_an_accepted_claim_does_not_fail_its_case(tmp_path):
    first, *_ = realistic_new_claims()
    decision = realistic_decision(
        new_hallucinations=(first.model_copy(update={"accepted_by": "alice"}),),
        failures=("relevance: 0.100 is below the threshold 0.60",),
        evaluators={
            name: e.model_copy(update={"passed": True, "status": "pass"})
            for name, e in realistic_decision().evaluators.items()
        },
    )
    test = read_junit(tmp_path, decision, cases())["cases"]["billing-refund-window"]
    assert test.is_passed
    assert f"accepted by alice: [{first.id}]" in test.system_out


def test_hostile_claim_text_parses_back_without_its_key_or_controls(tmp_path, key):
    claim = change("billing-refund-window", REFUND_Q + " " + key, HOSTILE_CLAIM, id="0123abcd")
    decision = realistic_decision(
        new_hallucinations=(claim,),
        failures=(f"1 newly hallucinated claim {NEW_HALLUCINATIONS_RULE}",),
    )
    hostile = case("billing-refund-window", f"q ]]> &lt; {key}\x01", faithfulness=1.0)
    path = tmp_path / "gate.xml"
    write_junit(path, decision, [hostile])
    raw = path.read_text(encoding="utf-8")
    assert key not in raw
    assert "\x00" not in raw and "\x1b" not in raw and "\u202e" not in raw
    test = next(iter(next(iter(JUnitXml.fromfile(str(path))))))
    failure = only(test)
    assert failure.type == "new_hallucination"
    # XML text is given back as written: entities, a CDATA end and quotes are text, not markup.
    assert "Refunds &amp; credits <b>take</b> 30 days ]]> <![CDATA[x]]>" in failure.message
    assert "\"quoted\" 'single'" in failure.text
    assert f"key {REDACTED} end" in failure.message
    assert f"key {REDACTED} end" in failure.text
    assert "evil" in failure.text and "\u202e" not in failure.text
    assert test.system_out == f"query: q ]]> &lt; {REDACTED} "  # the control is a space


def metric_values(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_metrics_parse_back_to_each_evaluators_scores_and_the_judges_cost(tmp_path):
    path = tmp_path / "metrics.txt"
    write_metrics(path, realistic_decision())
    text = path.read_text(encoding="utf-8")
    assert text.endswith("# EOF\n")
    values = metric_values(text)
    score = "ragaliq_evaluator_score"
    assert values[(score, (("evaluator", "faithfulness"), ("run", "head")))] == 0.8125
    assert values[(score, (("evaluator", "faithfulness"), ("run", "baseline")))] == 0.883333
    assert values[("ragaliq_evaluator_delta", (("evaluator", "hallucination"),))] == -0.141667
    assert values[("ragaliq_evaluator_passed", (("evaluator", "relevance"),))] == 1
    assert values[("ragaliq_evaluator_threshold", (("evaluator", "hallucination"),))] == 0.75
    assert values[("ragaliq_gate_passed", ())] == 0
    assert values[("ragaliq_new_hallucinations", ())] == 3
    assert values[("ragaliq_case_errors", ())] == 1
    assert values[("ragaliq_judge_calls", ())] == 42
    assert values[("ragaliq_judge_tokens", (("kind", "input"),))] == 61_480
    assert values[("ragaliq_judge_tokens", (("kind", "cache_write"),))] == 4_096
    assert values[("ragaliq_judge_cost_usd", ())] == 0.3217
    assert {family.type for family in text_string_to_metric_families(text)} == {"gauge"}


def test_a_first_run_has_no_baseline_or_delta_samples_rather_than_zeros():
    first = realistic_decision(
        first_run=True,
        evaluators={
            name: e.model_copy(update={"baseline": None, "delta": None})
            for name, e in realistic_decision().evaluators.items()
        },
        usage=Usage(),
    )
    values = metric_values(render_metrics(first))
    assert not [key for key in values if key[0] == "ragaliq_evaluator_delta"]
    assert not [key for key in values if ("run", "baseline") in key[1]]
    assert values[("ragaliq_judge_cost_usd", ())] == 0


def test_hostile_evaluator_names_are_escaped_and_redacted_in_labels(key):
    hostile = f'faith"ful\\ness\n{key}\x07'
    evaluators = realistic_decision().evaluators
    decision = realistic_decision(evaluators={hostile: evaluators["faithfulness"]})
    text = render_metrics(decision)
    assert key not in text
    labels = {
        dict(key_labels).get("evaluator")
        for (name, key_labels), _ in metric_values(text).items()
        if name == "ragaliq_evaluator_delta"
    }
    assert labels == {f'faith"ful\\ness\n{REDACTED} '}
