"""Unstable claims, lost relevant chunks and newly miscited claims in the JUnit and metrics files.

Each decision is the gate's own (:func:`ragaliq.gate.compare` on judged runs), so the files are
read back as CI reads them, with the settings that fail the gate on each finding and without.
"""

from __future__ import annotations

from pathlib import Path

from junitparser import Failure, JUnitXml, TestCase, TestSuite
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ragaliq.evaluators import HallucinationEvaluator
from ragaliq.evaluators.citations import MiscitedClaim
from ragaliq.evaluators.hallucination import UNSTABLE_APART
from ragaliq.evaluators.retrieval import LostChunk
from ragaliq.gate import GateDecision, GateRules, compare
from ragaliq.gate.listed import listed_failures
from ragaliq.models import CaseResult, RunReport, Verdict
from ragaliq.redaction import REDACTED, forget_secrets, register_secret
from ragaliq.report.junit import CASE_FAILURES, NEW_HALLUCINATIONS_RULE, write_junit
from ragaliq.report.openmetrics import render_metrics
from tests.baselines import record_baseline
from tests.conftest import make_verdict
from tests.unit.gate.runs import judged, run_of
from tests.unit.gate.test_listed import LOST, MISCITED, RIGHT, WRONG, cited
from tests.unit.gate.test_listed import judged as cited_run
from tests.unit.gate.test_retrieval_findings import MAIN, case, run
from tests.unit.report.decisions import REFUND_Q, change, realistic_decision

S, C = Verdict.SUPPORTED, Verdict.CONTRADICTED


def read_cases(tmp_path: Path, decision: GateDecision, run: RunReport) -> dict[str, TestCase]:
    path = tmp_path / "gate.xml"
    write_junit(path, decision, run.cases)
    suites = {}
    for suite in JUnitXml.fromfile(str(path)):
        assert isinstance(suite, TestSuite)
        suites[suite.name] = {test.name: test for test in suite}
    assert suites["gate"]["gate"].is_passed is decision.passed
    return suites["cases"]


def failure(test: TestCase) -> Failure:
    (result,) = test.result
    assert isinstance(result, Failure)
    return result


def metrics(decision: GateDecision) -> dict[str, float]:
    text = render_metrics(decision)
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if not sample.labels
    }


# --- unstable claims -----------------------------------------------------------------------------

EVALUATORS = [HallucinationEvaluator()]
SHAKY = "Refunds take 30 days."
BAR = {"hallucination": 0.0}
"""A threshold the unstable claim's score meets, so that the claim alone can fail the case."""


def unstable_runs() -> tuple[RunReport, RunReport]:
    """A baseline whose claims all held, and a head where one is held by the first ask only."""
    claims = [make_verdict(S, text=SHAKY), make_verdict(S, text="Plans renew yearly.")]
    shaky = make_verdict(C, text=SHAKY, reason="the context says 14", flags=("unstable",))
    shaky = shaky.model_copy(update={"asked": (C, S), "agreement": 0.5})
    base = run_of([judged("refunds", EVALUATORS, claims=claims)], EVALUATORS)
    head = run_of([judged("refunds", EVALUATORS, claims=[shaky, claims[1]])], EVALUATORS)
    return base, head


def test_an_unstable_claim_the_gate_does_not_count_passes_its_case_with_both_verdicts(tmp_path):
    base, head = unstable_runs()
    rules = GateRules(max_drop=1.0, fail_on_new_hallucinations=True)
    decision = compare(head, record_baseline(base), rules=rules, thresholds=BAR)
    assert decision.passed is True
    (claim,) = decision.unstable_claims
    test = read_cases(tmp_path, decision, head)["refunds"]
    assert test.is_passed
    assert (
        f"unstable, not counted as new: [{claim.id}] CONTRADICTED: {SHAKY} (the context says 14); "
        "the judge's verdicts: CONTRADICTED, then SUPPORTED"
    ) in test.system_out.splitlines()
    assert metrics(decision)["ragaliq_unstable_claims"] == 1
    assert metrics(decision)["ragaliq_new_hallucinations"] == 0


def test_an_unstable_claim_the_gate_counts_fails_its_case_once_with_both_verdicts(tmp_path):
    base, head = unstable_runs()
    rules = GateRules(max_drop=1.0, fail_on_new_hallucinations=True, count_unstable=True)
    decision = compare(head, record_baseline(base), rules=rules, thresholds=BAR)
    assert decision.passed is False
    (claim,) = decision.unstable_claims
    result = failure(read_cases(tmp_path, decision, head)["refunds"])
    assert result.type == "new_hallucination"
    assert result.text.splitlines() == [
        f"[{claim.id}] CONTRADICTED: {SHAKY} (the context says 14); unstable, the judge's "
        "verdicts: CONTRADICTED, then SUPPORTED"
    ]
    assert result.message.startswith("1 newly hallucinated claim: ")
    values = metrics(decision)
    assert (values["ragaliq_unstable_claims"], values["ragaliq_new_hallucinations"]) == (1, 1)


def test_a_counted_unstable_claim_the_gate_does_not_fail_on_is_told_in_the_case(tmp_path):
    base, head = unstable_runs()
    rules = GateRules(max_drop=1.0, count_unstable=True)
    decision = compare(head, record_baseline(base), rules=rules, thresholds=BAR)
    test = read_cases(tmp_path, decision, head)["refunds"]
    assert test.is_passed
    (claim,) = decision.unstable_claims
    said = [line for line in test.system_out.splitlines() if claim.id in line]
    assert said == [
        f"newly hallucinated, not failing the gate: [{claim.id}] CONTRADICTED: {SHAKY} (the "
        "context says 14); unstable, the judge's verdicts: CONTRADICTED, then SUPPORTED"
    ]


def test_an_unstable_claim_from_repeated_asks_gives_their_agreement(tmp_path):
    repeated = change("billing-refund-window", REFUND_Q, SHAKY, id="5eed", agreement=2 / 3)
    decision = realistic_decision(
        new_hallucinations=(),
        unstable_claims=(repeated,),
        notices=(f"1 hallucinated claim is unstable, so it is {UNSTABLE_APART}",),
    )
    path = tmp_path / "gate.xml"
    refund = CaseResult(id="billing-refund-window", input_hash="h", status="ok")
    write_junit(path, decision, [refund])
    (test,) = next(iter(JUnitXml.fromfile(str(path))))
    assert (
        f"unstable, not counted as new: [5eed] CONTRADICTED: {SHAKY}; the judge's verdicts "
        "agreed 67% of the time"
    ) in test.system_out


# --- lost relevant chunks ------------------------------------------------------------------------


async def lost(rules: GateRules) -> tuple[GateDecision, RunReport]:
    """A change whose refunds case no longer retrieves either of its relevant chunks."""
    baseline = record_baseline(await run(MAIN))
    head = await run([case("refunds", ["x"], {"r1": 1, "r2": 3}), MAIN[1]])
    return compare(head, baseline, rules=rules), head


async def test_lost_relevant_chunks_fail_their_case_with_the_chunk_ids_when_the_gate_does(
    tmp_path,
):
    decision, head = await lost(LOST)
    tests = read_cases(tmp_path, decision, head)
    result = failure(tests["refunds"])
    assert result.type == "lost_chunk"
    assert result.text.splitlines() == [
        "chunk r2 (relevance 3): rank 2 → not retrieved",
        "chunk r1 (relevance 1): rank 1 → not retrieved",
    ]
    assert result.message == (
        "2 lost relevant chunks: chunk r2 (relevance 3): rank 2 → not retrieved; "
        "chunk r1 (relevance 1): rank 1 → not retrieved"
    )
    assert tests["shipping"].is_passed
    assert metrics(decision)["ragaliq_lost_chunks"] == 2


async def test_lost_relevant_chunks_the_gate_does_not_fail_on_are_told_in_their_case(tmp_path):
    decision, head = await lost(GateRules())
    test = read_cases(tmp_path, decision, head)["refunds"]
    assert test.is_passed
    assert [line for line in test.system_out.splitlines() if "lost" in line] == [
        "lost, not failing the gate: relevant chunk r2 (relevance 3): rank 2 → not retrieved",
        "lost, not failing the gate: relevant chunk r1 (relevance 1): rank 1 → not retrieved",
    ]
    assert metrics(decision)["ragaliq_lost_chunks"] == 2


# --- newly miscited claims -----------------------------------------------------------------------


async def test_a_newly_miscited_claim_fails_its_case_with_its_id_before_its_score(tmp_path):
    head = await cited_run(cited(WRONG))
    decision = compare(head, record_baseline(await cited_run(cited(RIGHT))), rules=MISCITED)
    (claim,) = decision.listed("miscited_claims")
    assert isinstance(claim, MiscitedClaim)
    result = failure(read_cases(tmp_path, decision, head)["plot-fee"])
    assert result.type == "miscited_claim"
    line = f"[{claim.id}] {WRONG} (cites chunk water#1; chunk fees#1 backs it)"
    assert result.text.splitlines() == [
        line,
        "citation_accuracy: 0.000 is below the threshold 0.80",
    ]
    assert result.message == (
        f"1 newly miscited claim; 1 score below the threshold: {line}; "
        "citation_accuracy: 0.000 is below the threshold 0.80"
    )
    assert metrics(decision)["ragaliq_new_miscited_claims"] == 1


async def test_a_newly_miscited_claim_the_gate_does_not_fail_on_is_told_in_its_case(tmp_path):
    head = await cited_run(cited(WRONG))
    rules = GateRules()
    bar = {"citation_accuracy": 0.0}
    decision = compare(head, record_baseline(await cited_run(cited(RIGHT))), rules=rules)
    loose = compare(
        head, record_baseline(await cited_run(cited(RIGHT))), rules=rules, thresholds=bar
    )
    (claim,) = decision.listed("miscited_claims")
    assert isinstance(claim, MiscitedClaim)
    told = f"newly miscited, not failing the gate: [{claim.id}] {WRONG} (cites chunk water#1"
    # Below its threshold the case fails on its score, and tells the claim beside it.
    test = read_cases(tmp_path, decision, head)["plot-fee"]
    assert failure(test).type == "below_threshold"
    assert any(line.startswith(told) for line in test.system_out.splitlines())
    test = read_cases(tmp_path, loose, head)["plot-fee"]
    assert test.is_passed
    assert any(line.startswith(told) for line in test.system_out.splitlines())


async def test_a_claim_miscited_on_main_too_is_neither_failed_nor_counted_as_new(tmp_path):
    head = await cited_run(cited(WRONG))
    bar = {"citation_accuracy": 0.0}
    baseline = record_baseline(await cited_run(cited(WRONG)))
    decision = compare(head, baseline, rules=MISCITED, thresholds=bar)
    test = read_cases(tmp_path, decision, head)["plot-fee"]
    assert test.is_passed
    assert "miscited" not in (test.system_out or "")
    assert metrics(decision)["ragaliq_new_miscited_claims"] == 0


def test_newly_miscited_claims_past_the_kept_list_are_not_counted_as_a_number():
    decision = realistic_decision(omitted={"miscited_claims": 4})
    values = metrics(decision)
    assert "ragaliq_new_miscited_claims" not in values
    assert values["ragaliq_lost_chunks"] == 0 and values["ragaliq_unstable_claims"] == 0


# --- one failure a case, typed by its first reason ------------------------------------------------

KEY = "sk-ant-api03-" + "Z3k1" * 20


def test_every_reason_is_listed_in_the_stated_order_and_the_first_types_the_failure(tmp_path):
    register_secret(KEY)
    try:
        lost = LostChunk(
            case_id="billing-refund-window",
            query=REFUND_Q,
            item=f"plans#4 {KEY}\x1b",
            level="chunk",
            relevance=2,
            rank_before=1,
            rank_after=None,
            k=3,
        )
        miscited = MiscitedClaim(
            case_id="billing-refund-window",
            query=REFUND_Q,
            id="c1ted",
            claim="Refunds are instant.",
            verdict="SUPPORTED",
            cited=("2",),
            backed_by=("1",),
            new=True,
        )
        both = GateRules(fail_on_lost_chunks=True, fail_on_miscited_claims=True)
        held, _ = listed_failures(both, [lost], 1, [miscited], 1)
        new = change("billing-refund-window", REFUND_Q, "Refunds take 30 days.", id="0ld")
        decision = realistic_decision(
            new_hallucinations=(new,),
            lost_chunks=(lost,),
            miscited_claims=(miscited,),
            failures=(f"1 newly hallucinated claim {NEW_HALLUCINATIONS_RULE}", *held),
        )
        path = tmp_path / "gate.xml"
        refund = CaseResult(id="billing-refund-window", input_hash="h", status="ok", query=REFUND_Q)
        write_junit(path, decision, [refund])
        raw = path.read_text(encoding="utf-8")
        (test,) = next(iter(JUnitXml.fromfile(str(path))))
    finally:
        forget_secrets()
    assert KEY not in raw and "\x1b" not in raw
    result = failure(test)
    assert result.type == CASE_FAILURES[0] == "new_hallucination"
    assert result.text.splitlines() == [
        "[0ld] CONTRADICTED: Refunds take 30 days.",
        "[c1ted] Refunds are instant. (cites chunk 2; chunk 1 backs it)",
        f"chunk plans#4 {REDACTED}  (relevance 2): rank 1 → not retrieved",
    ]
    assert result.message.startswith(
        "1 newly hallucinated claim; 1 newly miscited claim; 1 lost relevant chunk: "
    )
    assert CASE_FAILURES == (
        "new_hallucination",
        "miscited_claim",
        "lost_chunk",
        "regressed",
        "below_threshold",
        "unchecked_claims",
    )


# --- the page that states the shapes -------------------------------------------------------------

ANY_CI = Path(__file__).resolve().parents[3] / "docs" / "any-ci.md"


def test_the_any_ci_page_states_the_failure_order_and_names_every_metric():
    page = " ".join(ANY_CI.read_text(encoding="utf-8").split())
    order = ", ".join(f"`{kind}`" for kind in CASE_FAILURES)
    assert f"typed by its first reason in this order: {order}." in page
    for kind in CASE_FAILURES:
        assert f'<failure type="{kind}">' in page
    written = {
        family.name
        for family in text_string_to_metric_families(render_metrics(realistic_decision()))
    }
    assert "ragaliq_unstable_claims" in written
    assert {name for name in written if f"| `{name}` |" not in page} == set()
