from __future__ import annotations

import pytest

from ragaliq.config import EvaluatorsConfig
from ragaliq.gate import ClaimChange, GateRules, IrrelevantChunk, compare
from ragaliq.gate.acceptance import Acceptance
from ragaliq.models import (
    NOT_VERIFIABLE,
    CaseResult,
    ClaimVerdict,
    RunReport,
    TestCase,
    Verdict,
)
from ragaliq.report._locate import locate_claims
from tests.baselines import record_baseline
from tests.unit.report.html_pages import (
    HOSTILE_CASE,
    VERDICT_CLASSES,
    Scenario,
    build_scenario,
    judge,
    kind_of,
    parse,
    read_data,
    render_html_report,
)


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return build_scenario()


# --- the summary -------------------------------------------------------------------------------


def test_chart_has_a_bar_and_markers_per_evaluator(scenario: Scenario):
    svg = scenario.dom.root.find("svg", id="score-chart")
    assert "xmlns" not in svg.attrs or svg.attrs["xmlns"] == "http://www.w3.org/2000/svg"
    names = list(scenario.decision.evaluators)
    bars = svg.find_all("rect", cls="bar")
    assert [b.attrs["data-evaluator"] for b in bars] == names
    thresholds = svg.find_all("line", cls="threshold")
    baselines = svg.find_all("line", cls="baseline")
    assert [t.attrs["data-evaluator"] for t in thresholds] == names
    assert [b.attrs["data-evaluator"] for b in baselines] == names
    track = svg.find("rect", cls="track")
    x0, width = float(track.attrs["x"] or 0), float(track.attrs["width"] or 0)
    for bar, threshold, baseline in zip(bars, thresholds, baselines, strict=True):
        gate = scenario.decision.evaluators[bar.attrs["data-evaluator"] or ""]
        assert gate.head is not None and gate.baseline is not None
        assert float(bar.attrs["width"] or 0) == pytest.approx(gate.head * width, abs=0.05)
        assert float(threshold.attrs["x1"] or 0) == pytest.approx(
            x0 + gate.threshold * width, abs=0.05
        )
        assert float(baseline.attrs["x1"] or 0) == pytest.approx(
            x0 + gate.baseline * width, abs=0.05
        )
        assert ("pass" in bar.classes) == gate.passed
        assert f"{gate.head:.3f}" in svg.text()


def test_header_shows_gate_judge_usage_and_notices(scenario: Scenario):
    dom = scenario.dom
    status = dom.root.find(id="gate-status").text()
    assert status == ("Gate passed" if scenario.decision.passed else "Gate failed")
    header = dom.root.find("header").text()
    judge = scenario.head.judge
    assert judge.provider in header and judge.model in header and judge.prompt_version in header
    assert "heuristic" in header and f"{len(scenario.head.cases)} cases" in header
    assert "0 judge calls" in dom.root.find(id="usage").text()
    table = dom.root.find("table", id="score-table")
    for name, gate in scenario.decision.evaluators.items():
        row = table.find("tr", data_evaluator=name).text()
        assert f"{gate.threshold:.2f}" in row and f"{gate.head:.3f}" in row
    provenance = dom.root.find(id="provenance").text()
    assert all(name in provenance for name in scenario.head.evaluators)


@pytest.mark.parametrize(
    ("status", "label"),
    [
        ("regressed", "dropped from the baseline"),
        ("below_threshold", "below threshold"),
        ("inconclusive", "inconclusive: within noise"),
        ("no_score", "no score"),
    ],
)
def test_score_table_says_each_status(scenario: Scenario, status: str, label: str):
    evaluators = {
        name: e.model_copy(update={"status": status, "passed": False})
        for name, e in scenario.decision.evaluators.items()
    }
    decision = scenario.decision.model_copy(update={"evaluators": evaluators})
    dom = parse(render_html_report(scenario.head, decision=decision))
    tags = dom.root.find("table", id="score-table").find_all("span", cls="tag")
    assert [t.text() for t in tags] == [label] * len(evaluators)


def test_failures_and_notices_are_shown():
    case = HOSTILE_CASE.model_copy(update={"id": "only"})
    report = judge([case])
    report = report.model_copy(update={"notices": ("Used the <offline> judge.",)})
    decision = compare(report, None, rules=GateRules())
    failures = (*decision.failures, "faithfulness: <b>0.1</b> is below the threshold 0.70")
    decision = decision.model_copy(update={"passed": False, "failures": failures})
    dom = parse(render_html_report(report, decision=decision, cases=[case]))
    gate = dom.root.find(id="gate").text()
    for line in decision.failures:
        assert line in gate
    assert dom.root.find(id="gate-status").text() == "Gate failed"
    notices = dom.root.find(id="notices").text()
    assert "Used the <offline> judge." in notices
    assert "No baseline yet" in notices
    assert dom.root.find_all("line", cls="baseline") == []
    assert "First run" in gate


def test_the_story_is_bounded_and_points_to_the_filter(scenario: Scenario):
    change = scenario.decision.new_hallucinations[0]
    many = tuple(change.model_copy(update={"claim": f"claim {i}"}) for i in range(120))
    decision = scenario.decision.model_copy(update={"new_hallucinations": many})
    dom = parse(render_html_report(scenario.head, decision=decision))
    changes = dom.root.find("section", id="changes")
    assert "Newly hallucinated claims (120)" in changes.text()
    assert len(changes.find_all(cls="new-claim")) == 50
    assert "70 more newly hallucinated claims" in changes.text()
    assert changes.find("button", data_action="only-new")


def test_an_accepted_claim_is_marked_accepted_in_the_story_and_in_its_case(scenario: Scenario):
    first, *others = scenario.decision.new_hallucinations
    assert others, "the scenario has a claim nobody accepted"
    acceptance = Acceptance(by="a-<reviewer>", claims=(first.id,))
    decision = compare(
        scenario.head, record_baseline(scenario.base), rules=GateRules(), acceptances=(acceptance,)
    )
    html = render_html_report(scenario.head, decision=decision, cases=scenario.head_cases)
    dom, data = parse(html), read_data(html)
    changes = dom.root.find("section", id="changes")
    assert "has-new" in changes.classes  # what a phone shows first
    rows = changes.find_all(cls="new-claim")
    marks = [[t.text() for t in row.find_all("span", cls="accepted")] for row in rows]
    assert marks[0] == ["✓ accepted by @a-<reviewer>"] and not any(marks[1:])
    assert "accepted" in rows[0].classes and "accepted" not in rows[1].classes
    assert "1 of them accepted by a reviewer" in dom.root.find(id="gate").text()
    assert "accepted by a reviewer: counts as supported" in dom.root.find(id="legend").text()
    # in the data, the claim carries its reviewer; no other claim does
    marked = {
        (record["i"], claim["text"]): claim["accepted_by"]
        for record in data.cases
        for claim in data.verdicts(record)
        if claim["accepted_by"] is not None
    }
    assert marked == {(first.case_id, first.claim): "a-<reviewer>"}


def test_without_an_acceptance_nothing_is_marked_accepted(scenario: Scenario):
    dom = scenario.dom
    assert dom.root.find_all(cls="accepted") == []
    assert "accepted" not in dom.root.find(id="legend").text()
    assert all(
        claim["accepted_by"] is None
        for record in scenario.data.cases
        for claim in scenario.data.verdicts(record)
    )


# --- without a decision or a dataset, and when they do not match -------------------------------


def test_report_alone_has_claims_without_responses(scenario: Scenario):
    html = render_html_report(scenario.base, title="Main <branch>")
    dom, data = parse(html), read_data(html)
    assert dom.root.find("title").text() == "Main <branch>"
    assert dom.root.find_all(id="changes") == []
    assert dom.root.find_all(id="f-new") == []
    assert dom.root.find_all("line", cls="baseline") == []
    assert "Render the report with the dataset" in dom.root.find(id="notices").text()
    assert not any("p" in r or "t" in r or "n" in r for r in data.cases)
    assert data.config["dataset"] is False and data.config["decision"] is False
    for result in scenario.base.cases:
        claims = data.verdicts(data.record(result.id))
        assert [c["text"] for c in claims] == [c.text for c in result.claims]
        assert all(c["span"] is None for c in claims)
    assert dom.root.find(id="gate-status").text() == "All thresholds met"
    stats = dom.root.find(id="gate").find_all(cls="n")
    unverifiable = {"unverifiable"} if scenario.base.judge.heuristic else set()
    assert {s.attrs["data-total"] for s in stats} == {
        f"verdict:{v}" for v in VERDICT_CLASSES
    } | unverifiable


def test_a_changed_case_does_not_show_a_stale_response(scenario: Scenario):
    changed = [
        c.model_copy(update={"response": c.response + " Changed."})
        if c.id == "billing-refund-window"
        else c
        for c in scenario.base_cases
        if c.id != "sso-setup"
    ]
    data = read_data(render_html_report(scenario.base, cases=changed))
    stale = data.record("billing-refund-window")
    assert stale["n"] == 2 and "p" not in stale and "t" not in stale
    assert data.record("sso-setup")["n"] == 1
    assert data.totals["missing"] == 2
    assert data.record("api-rate-limits")["p"]


def test_reworded_claims_have_no_place_in_the_response(scenario: Scenario):
    result = next(c for c in scenario.base.cases if c.id == "billing-refund-window")
    claims = list(result.claims)
    claims[0] = claims[0].model_copy(update={"text": "Annual Personal plans have a 30-day refund."})
    claims.append(
        ClaimVerdict(text="REFUNDS ARE ISSUED TO THE ORIGINAL PAYMENT METHAD", verdict="SUPPORTED")
    )
    report = scenario.base.model_copy(
        update={"cases": (result.model_copy(update={"claims": tuple(claims)}),)}
    )
    data = read_data(render_html_report(report, cases=scenario.base_cases))
    record = data.record("billing-refund-window")
    got = data.verdicts(record)
    assert [c["span"] is None for c in got] == [True, False, False, True]
    assert [c["text"] for c in got] == [c.text for c in claims]
    assert record["c"][0][0] == claims[0].text  # a claim not in the response keeps its text


def test_error_and_skipped_cases(scenario: Scenario):
    first, second, *rest = scenario.head.cases
    broken = first.model_copy(
        update={"status": "error", "error": "judge <timeout>", "claims": (), "results": {}}
    )
    skipped = second.model_copy(update={"status": "skipped", "claims": (), "results": {}})
    report = scenario.head.model_copy(update={"cases": (*rest, broken, skipped)})
    decision = compare(report, record_baseline(scenario.base), rules=GateRules())
    html = render_html_report(report, decision=decision, cases=scenario.head_cases)
    data = read_data(html)
    error = data.record(first.id)
    assert (error["s"], error["x"], error["r"]) == ("error", "judge <timeout>", 0)
    assert "c" not in error and "e" not in error
    assert (data.record(second.id)["s"], data.record(second.id)["r"]) == ("skipped", 5)
    assert "judge <timeout>" in parse(html).root.find(id="changes").text()


def test_flags_agreement_and_unstable_claims(scenario: Scenario):
    result = next(c for c in scenario.head.cases if c.id == "billing-refund-window")
    flagged = result.claims[0].model_copy(
        update={"flags": ("unstable", "unverified_evidence"), "agreement": 2 / 3}
    )
    case = result.model_copy(update={"claims": (flagged, *result.claims[1:])})
    report = scenario.head.model_copy(update={"cases": (case,)})
    change = ClaimChange(
        case_id=case.id,
        query=case.query,
        claim=flagged.text,
        verdict=flagged.verdict.value,
        agreement=2 / 3,
    )
    decision = scenario.decision.model_copy(update={"unstable_claims": (change,)})
    html = render_html_report(report, decision=decision, cases=scenario.head_cases)
    data = read_data(html)
    got = data.verdicts(data.record(case.id))[0]
    assert got["flags"] == ("unstable", "unverified_evidence")
    assert got["agreement"] == pytest.approx(2 / 3)
    assert data.config["flags"]["unverified_evidence"] == "evidence not found in the context"
    unstable = parse(html).root.find(id="changes").text()
    assert "1 hallucinated claim not counted as new" in unstable
    assert flagged.text in unstable and "agreement 67%" in unstable


def test_claims_not_verifiable_offline_are_labelled_counted_and_shown(scenario: Scenario):
    result = next(c for c in scenario.head.cases if c.id == "billing-refund-window")
    unsure = result.claims[0].model_copy(
        update={"verdict": Verdict.NOT_ENOUGH_INFO, "flags": (NOT_VERIFIABLE,)}
    )
    case = result.model_copy(update={"claims": (unsure, *result.claims[1:])})
    report = scenario.head.model_copy(update={"cases": (case,)})
    change = ClaimChange(
        case_id=case.id, query=case.query, claim=unsure.text, verdict=unsure.verdict.value
    )
    decision = scenario.decision.model_copy(update={"unverifiable_claims": (change,)})
    html = render_html_report(report, decision=decision, cases=scenario.head_cases)
    data = read_data(html)
    assert data.verdicts(data.record(case.id))[0]["flags"] == (NOT_VERIFIABLE,)
    assert data.config["flags"][NOT_VERIFIABLE].startswith("not verifiable offline")
    assert data.totals["unverifiable"] == 1
    assert "claims that could not be checked offline" in parse(html).root.find(id="gate").text()


# --- retrieval: needed facts and chunk ratings -------------------------------------------------


def test_needed_facts_and_chunk_ratings_are_in_each_case(scenario: Scenario):
    cases = [
        c.model_copy(update={"expected_facts": (c.response.split(". ")[0], "The sky is green.")})
        for c in scenario.base_cases[:6]
    ]
    config = EvaluatorsConfig.model_validate(
        {"context_recall": {"enabled": True}, "context_precision": {"enabled": True}}
    )
    report = judge(cases, config)
    chunk = IrrelevantChunk(case_id=cases[0].id, query=cases[0].query, rank=2, reason="<off>")
    decision = compare(report, None, rules=GateRules()).model_copy(
        update={"irrelevant_chunks": (chunk,)}
    )
    html = render_html_report(report, decision=decision, cases=cases)
    dom, data = parse(html), read_data(html)
    assert dom.root.find("select", id="f-retrieval")
    assert data.totals["facts"] == 12 and data.totals["chunks"] == sum(
        len(c.context) for c in cases
    )
    for result in report.cases:
        record = data.record(result.id)
        facts = data.verdicts(record, "f")
        assert [(f["text"], f["verdict"], f["reason"]) for f in facts] == [
            (f.text, kind_of(f), f.reason) for f in result.facts
        ]
        assert facts[1]["verdict"] != "SUPPORTED"
        ratings = [
            (bool(k[0]), data.text(k[1]), bool(k[2]) if len(k) > 2 else False) for k in record["k"]
        ]
        assert ratings == [(c.relevant, c.reason, c.heuristic) for c in result.chunks]
        assert all(heuristic for _, _, heuristic in ratings)  # the offline judge says so
        results = data.results(record)
        assert {"context_recall", "context_precision"} <= set(results)
    retrieval = dom.root.find(id="retrieval").text()
    assert "1 chunk judged irrelevant" in retrieval and "chunk 2" in retrieval
    assert "<off>" in retrieval


# --- locating claims ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "claims", "expected"),
    [
        ("A b. C d.", ["A b.", "C d."], [(0, 4), (5, 9)]),
        ("A  b\nc. D.", ["a b c.", "D"], [(0, 7), (8, 9)]),
        ("It\u2019s \u201cfine\u201d \u2014 ok.", ['it\'s "fine" - ok'], [(0, 16)]),
        ("Same. Same.", ["Same.", "Same.", "Same."], [(0, 5), (6, 11), None]),
        ("B then A.", ["A.", "B"], [(7, 9), (0, 1)]),
        ("Nothing here.", ["A rewrite of the claim.", "", "   "], [None, None, None]),
        ("Overlap here.", ["Overlap here.", "here."], [(0, 13), None]),
    ],
)
def test_locate_claims(response, claims, expected):
    assert locate_claims(response, claims) == expected


def test_locate_claims_finds_every_offline_claim(scenario: Scenario):
    by_id: dict[str, TestCase] = {c.id: c for c in scenario.head_cases}
    for result in scenario.head.cases:
        spans = locate_claims(by_id[result.id].response, [c.text for c in result.claims])
        assert None not in spans, result.id


def test_every_verdict_round_trips():
    report = RunReport.model_validate(
        {
            "judge": {"provider": "p", "model": "m", "prompt_version": "v"},
            "evaluators": {},
            "summary": {"cases": 1, "errors": 0, "evaluators": {}},
            "usage": {},
            "cases": [
                CaseResult(
                    id="one",
                    input_hash="x",
                    status="ok",
                    claims=tuple(
                        ClaimVerdict(text=v.value, verdict=v, confidence=0.0) for v in Verdict
                    ),
                ).model_dump()
            ],
        }
    )
    html = render_html_report(report)
    data = read_data(html)
    got = data.verdicts(data.record("one"))
    assert [(c["text"], c["verdict"], c["confidence"]) for c in got] == [
        (v.value, v.value, 0.0) for v in Verdict
    ]
    assert parse(html).root.find_all("rect", cls="bar") == []


def test_a_claim_unconfirmed_when_asked_again_shows_both_verdicts_and_is_counted(
    scenario: Scenario,
):
    result = next(c for c in scenario.head.cases if c.id == "billing-refund-window")
    change = ClaimChange(
        case_id=result.id,
        query=result.query,
        claim=result.claims[0].text,
        verdict="NOT_ENOUGH_INFO",
        agreement=0.5,
        verdicts=("NOT_ENOUGH_INFO", "SUPPORTED"),
    )
    decision = scenario.decision.model_copy(update={"unstable_claims": (change,)})
    html = render_html_report(scenario.head, decision=decision, cases=scenario.head_cases)
    changes = parse(html).root.find(id="changes").text()
    assert "(not in the context; asked again: supported)" in changes
    assert "unstable claims" in parse(html).root.text()
