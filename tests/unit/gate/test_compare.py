from __future__ import annotations

import json

import pytest

from ragaliq.baseline import (
    Baseline,
    Provenance,
    load_baseline,
    parse_baseline,
    write_baseline,
)
from ragaliq.errors import BaselineError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.gate import Comparison, GateRules, compare
from ragaliq.gate.acceptance import claim_id
from ragaliq.models import Verdict
from ragaliq.runner import run_suite
from ragaliq.trust import hold_to_baseline
from tests.baselines import record_baseline
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge

S, N, C = Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO, Verdict.CONTRADICTED


def held(head, base, *, rules):
    """The gate's decision with the bar held to the baseline first, as a gate holds it."""
    thresholds = {name: s.threshold for name, s in head.summary.evaluators.items()}
    floor = hold_to_baseline(thresholds, rules, base)
    return compare(
        head, base, rules=floor.rules, thresholds=floor.thresholds, notices=floor.notices
    )


CLAIMS = ["Refunds take 14 days.", "The Business plan includes 2 TB.", "Support is 24/7."]


def suite(**thresholds):
    return [
        FaithfulnessEvaluator(threshold=thresholds.get("faithfulness")),
        HallucinationEvaluator(threshold=thresholds.get("hallucination")),
        RelevanceEvaluator(threshold=thresholds.get("relevance")),
    ]


async def report_of(verdicts: dict[str, list[Verdict]], claims=None, evaluators=None, **judge_kw):
    judge = FakeJudge(
        claims={cid: list(claims or CLAIMS) for cid in verdicts},
        verdicts=verdicts,
        **judge_kw,
    )
    cases = [make_case(id=cid, query=f"question {cid}?") for cid in verdicts]
    return await run_suite(cases, judge=judge, evaluators=evaluators or suite(hallucination=0.5))


async def test_first_run_applies_thresholds_only_and_says_so():
    head = await report_of({"a": [S, S, N], "b": [S, S, S]})
    decision = compare(head, None, rules=GateRules())
    assert decision.first_run is True
    assert decision.passed is True
    assert decision.new_hallucinations == ()
    assert any("No baseline yet" in n for n in decision.notices)
    assert decision.evaluators["faithfulness"].baseline is None
    # Listed for the reader, but nothing is "new" without a baseline, even when new ones fail.
    assert [(c.case_id, c.claim) for c in decision.hallucinations] == [("a", "Support is 24/7.")]
    assert compare(head, None, rules=GateRules(fail_on_new_hallucinations=True)).passed is True


async def test_with_a_baseline_only_new_claims_are_listed():
    head = await report_of({"a": [S, S, N]})
    decision = compare(head, record_baseline(head), rules=GateRules())
    assert decision.hallucinations == ()
    assert decision.new_hallucinations == ()


async def test_new_and_fixed_hallucinations_are_found_per_case():
    base = record_baseline(await report_of({"a": [S, S, N], "b": [S, S, S]}))
    head = await report_of({"a": [S, S, S], "b": [S, C, S]})
    decision = held(head, base, rules=GateRules())
    assert [(c.case_id, c.claim, c.verdict) for c in decision.new_hallucinations] == [
        ("b", "The Business plan includes 2 TB.", "CONTRADICTED")
    ]
    assert decision.new_hallucinations[0].query == "question b?"
    assert [(c.case_id, c.claim, c.id) for c in decision.fixed_hallucinations] == [
        ("a", "Support is 24/7.", claim_id("a", "Support is 24/7."))
    ]


async def test_a_reworded_hallucination_is_not_new():
    base = record_baseline(await report_of({"a": [S, S, N]}))
    reworded = ["Refunds take 14 days.", "The Business plan includes 2 TB.", "Support is 24/7!"]
    head = await report_of({"a": [S, S, N]}, claims=reworded)
    decision = held(head, base, rules=GateRules())
    assert decision.new_hallucinations == ()
    assert decision.fixed_hallucinations == ()


async def test_a_hallucination_in_a_new_case_is_new():
    base = record_baseline(await report_of({"a": [S, S, S]}))
    head = await report_of({"a": [S, S, S], "z": [S, N, S]})
    decision = held(head, base, rules=GateRules())
    assert [c.case_id for c in decision.new_hallucinations] == ["z"]
    assert decision.added_cases == ("z",)
    assert any("new since the baseline" in n for n in decision.notices)


async def test_baseline_cases_missing_from_the_run_fail_the_gate_by_default():
    base = record_baseline(await report_of({"a": [S, S, S], "gone": [S, N, S]}))
    head = await report_of({"a": [S, S, S]})
    decision = held(head, base, rules=GateRules())
    assert decision.removed_cases == ("gone",)
    assert not decision.passed
    assert any("missing from this run: gone" in f for f in decision.failures)


async def test_missing_cases_are_a_notice_when_the_policy_says_so():
    base = record_baseline(await report_of({"a": [S, S, S], "gone": [S, N, S]}))
    head = await report_of({"a": [S, S, S]})
    decision = held(head, base, rules=GateRules(on_missing_cases="notice"))
    assert decision.passed
    assert any("missing from this run: gone" in n for n in decision.notices)


async def test_a_pr_cannot_loosen_the_missing_cases_policy_of_the_baseline():
    policy = GateRules().recorded(["faithfulness", "hallucination", "relevance"])
    base = record_baseline(await report_of({"a": [S, S, S], "gone": [S, S, S]}), policy=policy)
    head = await report_of({"a": [S, S, S]})
    decision = held(head, base, rules=GateRules(on_missing_cases="notice"))
    assert not decision.passed
    assert any("on_missing_cases fail → notice" in n for n in decision.notices)


async def test_new_perfect_cases_do_not_dilute_a_drop_on_the_shared_cases():
    shared = {f"c{i}": [S, S, S] for i in range(4)}
    base = record_baseline(await report_of(shared))
    worse = {**shared, "c0": [N, N, N], "c1": [N, N, S]}
    copies = {f"copy{i}": [S, S, S] for i in range(60)}
    decision = compare(await report_of({**worse, **copies}), base, rules=GateRules())
    faith = decision.evaluators["faithfulness"]
    assert faith.head is not None and faith.head > 0.9  # the whole run looks fine
    assert faith.shared_cases == 4
    assert faith.delta == pytest.approx(-5 / 12)
    assert faith.status in ("regressed", "below_threshold")
    assert not decision.passed


async def test_a_broad_drop_past_max_drop_fails_even_above_the_threshold():
    base = record_baseline(await report_of({f"c{i}": [S, S, S] for i in range(12)}))
    head = await report_of({f"c{i}": [S, S, N] if i < 9 else [S, S, S] for i in range(12)})
    decision = held(head, base, rules=GateRules(max_drop=0.05))
    faith = decision.evaluators["faithfulness"]
    assert faith.head == pytest.approx(1 - 9 / 36)
    assert faith.head >= faith.threshold
    assert faith.status == "regressed"
    assert faith.interval is not None and faith.interval[1] < 0
    assert decision.passed is False
    assert any("dropped" in f for f in decision.failures)
    assert [(r.case_id, r.evaluator) for r in decision.regressed_cases][:1] == [
        ("c0", "faithfulness")
    ]
    tolerant = held(head, base, rules=GateRules(max_drop=0.3))
    assert tolerant.passed is True


async def test_a_drop_the_suite_cannot_resolve_is_inconclusive_not_a_failure():
    # Ten cases; one claim of one case flips: the mean moves by 0.1/3, past max_drop 0.02.
    base = record_baseline(await report_of({f"c{i}": [S, S, S] for i in range(10)}))
    head = await report_of({f"c{i}": [S, S, C] if i == 0 else [S, S, S] for i in range(10)})
    decision = held(head, base, rules=GateRules(max_drop=0.02))
    faith = decision.evaluators["faithfulness"]
    assert faith.status == "inconclusive"
    assert faith.passed is True
    assert faith.interval is not None and faith.interval[0] < 0 <= faith.interval[1]
    assert faith.cases_to_resolve is not None and faith.cases_to_resolve > 10
    assert decision.passed is True
    notice = next(n for n in decision.notices if "cannot tell this drop from noise" in n)
    assert f"about {faith.cases_to_resolve} cases would resolve" in notice
    # The per-case guard: the case whose claim became contradicted is listed however the mean
    # moves, and its claim is newly hallucinated.
    assert ("c0", "faithfulness") in [(r.case_id, r.evaluator) for r in decision.regressed_cases]
    assert [(c.case_id, c.verdict) for c in decision.new_hallucinations] == [("c0", "CONTRADICTED")]
    # The same inputs always give the same decision (the bootstrap is seeded by the inputs).
    again = held(head, base, rules=GateRules(max_drop=0.02))
    assert again == decision
    strict = held(head, base, rules=GateRules(max_drop=0.02, on_inconclusive="fail"))
    assert strict.passed is False
    assert any("within what the suite can resolve" in f for f in strict.failures)


async def test_a_pr_cannot_loosen_the_noise_policy_of_the_baseline():
    policy = GateRules(on_inconclusive="fail", confidence=0.9).recorded(["faithfulness"])
    base = record_baseline(await report_of({f"c{i}": [S, S, S] for i in range(10)}), policy=policy)
    head = await report_of({f"c{i}": [S, S, C] if i == 0 else [S, S, S] for i in range(10)})
    decision = held(head, base, rules=GateRules(max_drop=0.02))
    assert decision.passed is False
    loosened = next(n for n in decision.notices if "loosens" in n)
    assert "confidence 0.9 → 0.95" in loosened
    assert "on_inconclusive fail → pass" in loosened


async def test_per_evaluator_max_drop():
    base = record_baseline(await report_of({f"c{i}": [S, S, S] for i in range(4)}))
    head = await report_of({"c0": [S, S, N], "c1": [S, S, S], "c2": [S, S, S], "c3": [S, S, S]})
    rules = GateRules(max_drop=0.0, drops={"faithfulness": 0.2, "hallucination": 0.2})
    assert held(head, base, rules=rules).passed is True


async def test_below_threshold_fails():
    head = await report_of({"a": [N, N, S]}, evaluators=suite())
    decision = compare(head, None, rules=GateRules())
    assert decision.passed is False
    assert decision.evaluators["faithfulness"].status == "below_threshold"
    assert "below the threshold 0.70" in decision.failures[0]


async def test_different_provenance_turns_regressions_into_a_notice():
    base = record_baseline(await report_of({f"c{i}": [S, S, S] for i in range(4)}))
    changed = base.model_copy(
        update={"provenance": base.provenance.model_copy(update={"judge_model": "other-model"})}
    )
    head = await report_of({"c0": [S, S, N], "c1": [S, S, S], "c2": [S, S, S], "c3": [S, S, S]})
    decision = compare(head, changed, rules=GateRules())
    assert decision.comparable is False
    assert decision.passed is True
    assert decision.evaluators["faithfulness"].delta is not None
    assert any("judge model: other-model → fake-1" in n for n in decision.notices)


async def test_a_pr_cannot_lower_its_own_threshold():
    base = record_baseline(await report_of({"a": [S, S, N]}, evaluators=suite(faithfulness=0.7)))
    head = await report_of({"a": [S, N, N]}, evaluators=suite(faithfulness=0.3))
    decision = held(head, base, rules=GateRules(max_drop=1.0))
    assert decision.evaluators["faithfulness"].threshold == 0.7
    assert decision.passed is False
    assert any("changes thresholds (faithfulness 0.7 → 0.3)" in n for n in decision.notices)


async def test_errors_fail_the_gate_unless_ignored():
    from ragaliq.errors import JudgeError

    head = await report_of({"a": [S, S, S], "b": [S, S, S]}, fail={"b": JudgeError("no verdict")})
    decision = compare(head, None, rules=GateRules())
    assert [e.case_id for e in decision.errors] == ["b"]
    assert decision.passed is False
    assert compare(head, None, rules=GateRules(on_error="ignore")).passed is True


async def test_fail_on_new_hallucinations():
    base = record_baseline(await report_of({"a": [S, S, S], "b": [S, S, S]}))
    head = await report_of({"a": [S, S, N], "b": [S, S, S]})
    lenient = GateRules(max_drop=1.0)
    assert held(head, base, rules=lenient).passed is True
    strict = GateRules(max_drop=1.0, fail_on_new_hallucinations=True)
    decision = held(head, base, rules=strict)
    assert decision.passed is False
    assert decision.failures[-1].startswith("1 newly hallucinated claim (gate.")


async def test_min_confidence_is_respected_through_the_hallucination_details():
    judge_claims = {"a": [S, S, S]}
    head = await report_of(judge_claims, evaluators=[HallucinationEvaluator(min_confidence=0.95)])
    base = record_baseline(await report_of(judge_claims, evaluators=[HallucinationEvaluator()]))
    decision = held(head, base, rules=GateRules(max_drop=1.0))
    assert len(decision.new_hallucinations) == 3  # confidence 0.9 < 0.95


async def test_baseline_round_trip_and_refusals(tmp_path):
    report = await report_of({"a": [S, S, S]})
    path = tmp_path / "sub" / "baseline.json"
    write_baseline(path, head=report.head, cases=iter(report.cases), commit="abc123")
    loaded = load_baseline(path)
    assert loaded is not None and loaded.commit == "abc123"
    assert loaded.case_index == record_baseline(report).case_index
    assert loaded.thresholds == {"faithfulness": 0.7, "hallucination": 0.5, "relevance": 0.7}
    assert loaded.provenance == Provenance.of(report)
    assert [p.name for p in path.parent.iterdir()] == ["baseline.json"]  # no temp file left
    assert load_baseline(tmp_path / "missing.json") is None


async def test_a_run_with_errors_is_refused_as_baseline_unless_allowed():
    from ragaliq.errors import JudgeError

    report = await report_of({"a": [S, S, S], "b": [S]}, fail={"b": JudgeError("x")})
    with pytest.raises(BaselineError, match="--allow-errors"):
        record_baseline(report)
    recorded = record_baseline(report, allow_errors=True)
    assert [c.status for c in recorded.case_index] == ["ok", "error"]


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("{not json", "not valid JSON"),
        ('{"hello": 1}', "not a RagaliQ baseline"),
        ('{"schema_version": 99}', "schema_version 99 is not one this version reads (1 to 3)"),
        ('{"schema_version": 1, "report": {}}', "corrupt baseline"),
    ],
)
def test_bad_baselines_say_how_to_regenerate(text, phrase):
    with pytest.raises(BaselineError) as info:
        parse_baseline(text, source="b.json")
    assert phrase in str(info.value)
    assert "ragaliq baseline record" in str(info.value)


async def test_decision_serialises():
    base = record_baseline(await report_of({"a": [S, S, N]}))
    decision = compare(await report_of({"a": [S, C, N]}), base, rules=GateRules())
    data = json.loads(decision.model_dump_json())
    assert data["new_hallucinations"][0]["verdict"] == "CONTRADICTED"
    assert Baseline.model_validate_json(base.model_dump_json()) == base


async def test_a_changed_figure_is_new_and_one_old_claim_matches_one_new_claim():
    two_years = ["The warranty lasts 2 years."]
    base = record_baseline(await report_of({"a": [N]}, claims=two_years))
    head = await report_of(
        {"a": [N, N, N]},
        claims=["The warranty lasts 5 years.", "The warranty lasts 2 years.", *two_years],
    )
    decision = held(head, base, rules=GateRules(fail_on_new_hallucinations=True))
    assert [c.claim for c in decision.new_hallucinations] == [
        "The warranty lasts 5 years.",
        "The warranty lasts 2 years.",
    ]
    assert decision.passed is False


async def test_a_pr_cannot_loosen_the_policy_the_baseline_was_recorded_with():
    strict = GateRules(max_drop={"faithfulness": 0.05}, fail_on_new_hallucinations=True)
    base_report = await report_of({"a": [S, S, S], "b": [S, S, S]})
    base = record_baseline(base_report, policy=strict.recorded(base_report.evaluators))
    head = await report_of({"a": [S, S, N], "b": [S, S, S]})
    loose = GateRules(max_drop=0.9, fail_on_new_hallucinations=False)
    decision = held(head, base, rules=loose)
    assert decision.passed is False
    assert decision.evaluators["faithfulness"].max_drop == 0.05
    assert any("newly hallucinated" in f for f in decision.failures)
    (notice,) = [n for n in decision.notices if "loosens the gate" in n]
    assert "faithfulness max_drop 0.05 → 0.9" in notice
    assert "fail_on_new_hallucinations true → false" in notice
    # A baseline recorded before policies were recorded leaves the PR's rules alone.
    assert held(head, record_baseline(base_report), rules=loose).passed is True


async def test_an_evaluator_the_baseline_has_cannot_vanish_from_the_comparison():
    base = record_baseline(await report_of({"a": [S, S, N]}))
    head = await report_of(
        {"a": [S, S, N]},
        evaluators=[FaithfulnessEvaluator(threshold=0.5), RelevanceEvaluator(threshold=0.5)],
    )
    decision = held(head, base, rules=GateRules())
    assert decision.passed is False
    assert decision.evaluators["hallucination"].turned_off is True
    assert "hallucination: turned off, but the baseline has it" in decision.failures
    assert any("cannot turn an evaluator off" in n for n in decision.notices)


async def test_a_lost_needed_fact_and_irrelevant_chunks_are_listed_in_the_comment():
    from ragaliq.evaluators import ContextPrecisionEvaluator, ContextRecallEvaluator
    from ragaliq.report.markdown import render_comment

    evaluators = [
        FaithfulnessEvaluator(),
        ContextPrecisionEvaluator(enabled=True),
        ContextRecallEvaluator(enabled=True),
    ]
    context = ("Refunds take 14 days.", "The office is in Berlin.")
    facts = ("Refunds take 14 days.", "Refunds go to the card.")
    cases = [make_case(id="c", context=context, expected_facts=facts)]
    before = FakeJudge(chunks={"c": [True, True]}, fact_verdicts={"c": [S, S]})
    after = FakeJudge(chunks={"c": [True, False]}, fact_verdicts={"c": [S, N]})
    base = record_baseline(await run_suite(cases, judge=before, evaluators=evaluators))
    head = await run_suite(cases, judge=after, evaluators=evaluators)
    decision = held(head, base, rules=GateRules())
    assert [(f.case_id, f.claim, f.verdict) for f in decision.lost_facts] == [
        ("c", "Refunds go to the card.", "NOT_ENOUGH_INFO")
    ]
    assert [(c.case_id, c.rank, c.reason) for c in decision.irrelevant_chunks] == [
        ("c", 2, "scripted")
    ]
    comment = render_comment(decision)
    assert (
        "🔎 Retrieval: 1 needed fact lost since the baseline · 1 chunk judged irrelevant" in comment
    )
    assert "Refunds go to the card. (now not in the context)" in comment


async def test_a_baseline_of_the_earlier_layout_reads_as_the_same_index(tmp_path):
    report = await report_of({"a": [S, N, S], "b": [S, S, S]})
    recorded = record_baseline(report, commit="abc123")
    old = {
        **recorded.model_dump(mode="json", exclude={"case_index", "case_count"}),
        "schema_version": 1,
        "report": json.loads(report.model_dump_json()),
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old, indent=2), encoding="utf-8")
    assert load_baseline(path) == recorded
    assert [c.id for c in recorded.case_index] == ["a", "b"]
    assert [h.text for h in recorded.by_id["a"].kept["hallucinated"]] == [CLAIMS[1]]


async def test_a_baseline_of_schema_version_2_reads_as_the_same_index(tmp_path):
    report = await report_of({"a": [S, N, S], "b": [S, S, S]})
    recorded = record_baseline(report, commit="abc123")
    path = tmp_path / "baseline.json"
    write_baseline(path, head=report.head, cases=iter(report.cases), commit="abc123")
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["schema_version"] == 3
    first, second = written.pop("cases")
    hallucinated = [{"text": CLAIMS[1], "verdict": "NOT_ENOUGH_INFO", "flags": []}]
    assert (first["kept"], second["kept"]) == ({"hallucinated": hallucinated}, {})
    version_2 = [
        {**{k: v for k, v in case.items() if k != "kept"}, "hallucinated": held, "held_facts": []}
        for case, held in ((first, hallucinated), (second, []))
    ]
    path.write_text(
        json.dumps({**written, "schema_version": 2, "cases": version_2}), encoding="utf-8"
    )
    # Recorded and written a moment apart: the stamps may differ by a second.
    expected = recorded.model_copy(
        update={"schema_version": 2, "recorded_at": written["recorded_at"]}
    )
    assert load_baseline(path) == expected
    decision = compare(report, load_baseline(path), rules=GateRules())
    assert decision.new_hallucinations == () and decision.fixed_hallucinations == ()


async def test_a_baseline_cut_short_is_refused(tmp_path):
    report = await report_of({"a": [S, S, S], "b": [S, S, S], "c": [S, S, S]})
    path = tmp_path / "baseline.json"
    write_baseline(path, head=report.head, cases=iter(report.cases))
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines[:2], *lines[3:]]) + "\n", encoding="utf-8")
    with pytest.raises(BaselineError, match="holds 2 cases where its header says 3"):
        load_baseline(path)


async def test_long_lists_keep_their_first_entries_and_count_the_rest():
    head = await report_of({f"c{i}": [S, N, S] for i in range(5)})
    comparison = Comparison(None, rules=GateRules(), listed=2)
    for case in head.cases:
        comparison.add(case)
    decision = comparison.decide(head.head)
    assert [c.case_id for c in decision.hallucinations] == ["c0", "c1"]
    assert decision.omitted == {"hallucinations": 3}
    assert decision.count("hallucinations") == 5
    assert decision == compare(head, None, rules=GateRules()).model_copy(
        update={"findings": decision.findings, "omitted": decision.omitted}
    )


async def test_a_baseline_that_holds_a_case_twice_is_refused(tmp_path):
    from ragaliq.baseline import write_baseline

    report = await report_of({"a": [S, C, N], "b": [S, S, S]})
    first, _ = report.cases
    perfect_a = report.cases[1].model_copy(update={"id": "a"})
    path = tmp_path / "baseline.json"
    # A second, perfect "a" after the real one: the drop on "a" would disappear.
    write_baseline(path, head=report.head, cases=iter([first, perfect_a]))
    with pytest.raises(BaselineError, match="case 'a' comes twice"):
        parse_baseline(path.read_text(encoding="utf-8"), source="b.json")


KETTLE = ("The Solano kettle holds 1.7 litres and boils water in 4 minutes.",)


async def offline_report(responses: dict[str, str]):
    from ragaliq.judges import OfflineJudge

    cases = [
        make_case(id=cid, query="Tell me about the kettle.", context=KETTLE, response=response)
        for cid, response in responses.items()
    ]
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    return await run_suite(cases, judge=OfflineJudge(), evaluators=evaluators)


async def test_a_claim_not_verifiable_offline_is_listed_apart_never_as_newly_hallucinated():
    base = record_baseline(
        await offline_report({"a": "The kettle holds 1.7 litres.", "b": "It boils in 4 minutes."})
    )
    head = await offline_report(
        {"a": "The kettle makes excellent tea.", "b": "It boils in 4 minutes."}
    )
    decision = held(head, base, rules=GateRules(fail_on_new_hallucinations=True))
    assert decision.passed is True
    assert decision.new_hallucinations == ()
    assert [(c.case_id, c.claim) for c in decision.unverifiable_claims] == [
        ("a", "The kettle makes excellent tea.")
    ]
    assert decision.regressed_cases == ()  # nothing to score is no drop
    assert head.cases[0].results["hallucination"].status == "skipped"


async def test_an_unchanged_case_does_not_list_its_unverifiable_claims_again():
    report = await offline_report({"a": "The kettle makes excellent tea."})
    decision = compare(report, record_baseline(report), rules=GateRules())
    assert decision.unverifiable_claims == ()
    assert [c.case_id for c in compare(report, None, rules=GateRules()).unverifiable_claims] == [
        "a"
    ]


def test_a_decision_recorded_before_the_unverifiable_list_still_loads():
    from ragaliq.gate import GateDecision

    data = {
        "passed": True,
        "failures": [],
        "first_run": True,
        "comparable": False,
        "evaluators": {},
        "cases": 0,
        "usage": {},
        "judge": {"provider": "offline", "model": "offline-heuristic", "prompt_version": "x"},
    }
    assert GateDecision.model_validate(data).unverifiable_claims == ()


HELD = "The kettle holds 1.7 litres. The kettle makes excellent tea."


async def test_a_claim_unchecked_on_the_baseline_is_still_unchecked_whatever_changed_in_its_case():
    from ragaliq.judges import OfflineJudge

    def case(context: tuple[str, ...], response: str):
        return make_case(
            id="a", query="Tell me about the kettle.", context=context, response=response
        )

    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    before = await run_suite(
        [case(KETTLE, HELD)],
        judge=OfflineJudge(),
        evaluators=evaluators,
    )
    grown = (*KETTLE, "The Solano kettle has a blue handle.")
    head = await run_suite(
        [case(grown, f"{HELD} It has a cheerful whistle.")],
        judge=OfflineJudge(),
        evaluators=evaluators,
    )
    decision = held(head, record_baseline(before), rules=GateRules(fail_on_unchecked_claims=True))
    assert [c.claim for c in decision.listed("still_unchecked_claims")] == [
        "The kettle makes excellent tea."
    ]
    assert [c.claim for c in decision.unverifiable_claims] == ["It has a cheerful whistle."]
    assert decision.passed is False  # on the newly unchecked claim alone
    assert any("1 new claim could not be checked offline" in f for f in decision.failures)

    only_old = await run_suite(
        [case(grown, HELD)],
        judge=OfflineJudge(),
        evaluators=evaluators,
    )
    decision = held(
        only_old, record_baseline(before), rules=GateRules(fail_on_unchecked_claims=True)
    )
    assert decision.passed is True
    assert decision.unverifiable_claims == ()
    assert decision.count("still_unchecked_claims") == 1
