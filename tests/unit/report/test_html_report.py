from __future__ import annotations

import asyncio
import base64
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

from ragaliq.baseline import record_baseline
from ragaliq.config import EvaluatorsConfig
from ragaliq.dataset import load_dataset
from ragaliq.evaluators import build_evaluators
from ragaliq.gate import ClaimChange, GateDecision, GateRules, compare
from ragaliq.judges import OfflineJudge
from ragaliq.models import CaseResult, ClaimVerdict, RunReport, TestCase, Verdict
from ragaliq.report.html import locate_claims, render_html_report
from ragaliq.runner import run_suite
from tests.conftest import REPO_ROOT

QUICKSTART = REPO_ROOT / "examples" / "quickstart" / "rag_outputs.jsonl"
SCRIPT = "<script>alert(1)</script>"
SEEDS = {
    "storage-limits-by-plan": ("includes 5 TB per workspace", "includes 8 TB per workspace"),
    "restore-deleted-folder": ("for 180 days on Team", "for 365 days on Team"),
}
HOSTILE_CASE = TestCase(
    id="xss-<b>case</b>",
    query=f"Is {SCRIPT} escaped?",
    context=("Refunds are available within 14 days of purchase.",),
    response=(
        f"Refunds are available within 14 days of purchase. {SCRIPT} is shown as text. "
        'An <img src=x onerror="alert(2)"> stays inert.'
    ),
)
VERDICT_CLASSES = {
    "SUPPORTED": "verdict-supported",
    "PARTIALLY_SUPPORTED": "verdict-partially-supported",
    "NOT_ENOUGH_INFO": "verdict-not-enough-info",
    "CONTRADICTED": "verdict-contradicted",
}


# --- a small DOM over html.parser --------------------------------------------------------------

VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr", "area", "base", "col"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        return [
            node
            for node in self.iter()
            if (tag is None or node.tag == tag)
            and (cls is None or cls in node.classes)
            and all(node.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls} {attrs}>"
        return found[0]


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.current = self.root
        self.start_tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), parent=self.current)
        self.start_tags.append((tag, dict(attrs)))
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.start_tags.append((tag, dict(attrs)))
        self.current.children.append(Node(tag, dict(attrs), parent=self.current))

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"stray </{tag}>"
        self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(html: str) -> TreeBuilder:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder


# --- the runs ----------------------------------------------------------------------------------


def judge(cases: list[TestCase]) -> RunReport:
    evaluators = build_evaluators(EvaluatorsConfig())
    report = asyncio.run(run_suite(cases, judge=OfflineJudge(), evaluators=evaluators))
    errors = [f"{c.id}: {c.error}" for c in report.cases if c.error]
    assert not errors, f"the offline judge failed on {len(errors)} cases, e.g. {errors[0]}"
    return report


def seeded(cases: list[TestCase]) -> list[TestCase]:
    out = []
    for case in cases:
        if case.id in SEEDS:
            old, new = SEEDS[case.id]
            assert old in case.response
            case = case.model_copy(update={"response": case.response.replace(old, new)})
        out.append(case)
    return out


@dataclass(frozen=True)
class Scenario:
    base_cases: list[TestCase]
    head_cases: list[TestCase]
    base: RunReport
    head: RunReport
    decision: GateDecision
    html: str
    dom: TreeBuilder


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    base_cases = load_dataset(QUICKSTART)
    head_cases = [*seeded(base_cases), HOSTILE_CASE]
    base, head = judge(base_cases), judge(head_cases)
    decision = compare(head, record_baseline(base), rules=GateRules())
    html = render_html_report(head, decision=decision, cases=head_cases)
    return Scenario(base_cases, head_cases, base, head, decision, html, parse(html))


def case_node(dom: TreeBuilder, case_id: str) -> Node:
    return dom.root.find("details", cls="case", data_case_id=case_id)


# --- self-contained and safe -------------------------------------------------------------------


def test_the_page_fetches_nothing(scenario: Scenario):
    tags = scenario.dom.start_tags
    assert [t for t, _ in tags if t == "link"] == []
    assert [a for t, a in tags if t == "script" and "src" in a] == []
    for tag, attrs in tags:
        for name, value in attrs.items():
            assert name not in {"src", "srcset", "poster", "data", "action", "background"}, tag
            if name == "href":
                assert value is not None and value.startswith("#"), (tag, value)
    assert re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import|url\(", scenario.html) is None
    csp = scenario.dom.root.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert csp is not None and "default-src 'none'" in csp


def test_the_only_script_is_ours_and_allowed_by_its_hash(scenario: Scenario):
    scripts = scenario.dom.root.find_all("script")
    assert len(scripts) == 1
    source = scripts[0].text()
    digest = base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode()
    csp = scenario.dom.root.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert f"script-src 'sha256-{digest}'" in (csp or "")
    assert "unsafe-inline" not in (csp or "").split("script-src")[1].split(";")[0]


def test_untrusted_text_renders_as_text(scenario: Scenario):
    assert len([t for t, _ in scenario.dom.start_tags if t == "script"]) == 1
    assert not any(t == "img" for t, _ in scenario.dom.start_tags)
    assert not any(name.startswith("on") for _, a in scenario.dom.start_tags for name in a)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in scenario.html
    case = case_node(scenario.dom, HOSTILE_CASE.id)
    assert case.attrs["data-case-id"] == "xss-<b>case</b>"
    assert SCRIPT in case.find(cls="case-query").text()
    response = case.find("div", cls="response")
    assert response.text().startswith("Refunds are available within 14 days")
    assert SCRIPT in response.text()
    claims = [c.find(cls="text").text() for c in case.find_all("details", cls="claim")]
    assert any(SCRIPT in claim for claim in claims)


# --- cases and claims --------------------------------------------------------------------------


def test_every_claim_of_every_case_appears_with_its_verdict(scenario: Scenario):
    dom = scenario.dom
    assert len(dom.root.find_all("details", cls="case")) == len(scenario.head.cases)
    for result in scenario.head.cases:
        case = case_node(dom, result.id)
        items = case.find_all("details", cls="claim")
        assert [item.find(cls="text").text() for item in items] == [c.text for c in result.claims]
        marks = case.find_all("a", cls="claim-mark")
        # the offline judge's claims are the response's sentences: every one is highlighted
        assert len(marks) == len(result.claims), result.id
        for number, (claim, item, mark) in enumerate(zip(result.claims, items, marks, strict=True)):
            css = VERDICT_CLASSES[claim.verdict.value]
            assert css in item.classes and css in mark.classes
            assert item.attrs["data-verdict"] == mark.attrs["data-verdict"] == claim.verdict
            assert mark.attrs["href"] == "#" + item.attrs["id"]
            assert mark.find("sup").text() == str(number + 1)
            assert claim.text.strip() in mark.text()
            body = item.find(cls="claim-body").text()
            assert claim.reason in body
            assert f"{claim.confidence:.2f}" in body
            if claim.evidence:
                assert claim.evidence in item.find("blockquote", cls="evidence").text()


def test_response_text_is_kept_whole_around_the_highlights(scenario: Scenario):
    by_id = {c.id: c for c in scenario.head_cases}
    for result in scenario.head.cases:
        case = case_node(scenario.dom, result.id)
        response = case.find("div", cls="response")
        shown = "".join(
            child if isinstance(child, str) else child.children[0]  # the mark's text, no <sup>
            for child in response.children
        )
        assert shown == by_id[result.id].response


def test_new_hallucinations_are_listed_and_flagged_in_their_cases(scenario: Scenario):
    new = scenario.decision.new_hallucinations
    # the hostile case is not in the baseline, so its unsupported claims are all new
    assert HOSTILE_CASE.id in {c.case_id for c in new}
    changes = scenario.dom.root.find("section", id="changes")
    listed = changes.text()
    for change in new:
        assert change.claim in listed
        case = case_node(scenario.dom, change.case_id)
        assert case.attrs["data-new"] != "0"
        assert "open" in case.attrs
        flagged = [m for m in case.find_all("a", cls="claim-mark") if "is-new" in m.classes]
        assert any(change.claim in m.text() for m in flagged)
        item = next(
            d
            for d in case.find_all("details", cls="claim")
            if d.find(cls="text").text() == change.claim
        )
        assert item.find_all(cls="new") and "open" in item.attrs
    links = {a.attrs["href"] for a in changes.find_all("a", cls="case-link")}
    assert {"#" + case_node(scenario.dom, c.case_id).attrs["id"] for c in new} <= links


def test_cases_carry_what_the_filters_read(scenario: Scenario):
    dom = scenario.dom
    for result in scenario.head.cases:
        case = case_node(dom, result.id)
        verdicts = set((case.attrs["data-verdicts"] or "").split())
        assert verdicts == {c.verdict.value for c in result.claims}
        failing = set((case.attrs["data-failing"] or "").split())
        assert failing == {n for n, r in result.results.items() if r.passed is False}
        assert case.attrs["data-status"] == result.status
    options = {
        o.attrs["value"] for o in dom.root.find("select", id="f-evaluator").find_all("option")
    }
    assert {f"failing:{name}" for name in scenario.head.summary.evaluators} <= options
    verdict_options = {
        o.attrs["value"] for o in dom.root.find("select", id="f-verdict").find_all("option")
    }
    assert set(VERDICT_CLASSES) <= verdict_options
    toggles = [n for n in dom.root.find_all("input") if "data-toggle-verdict" in n.attrs]
    assert {t.attrs["data-toggle-verdict"] for t in toggles} == set(VERDICT_CLASSES)
    # the filters are useless without JavaScript, so they start hidden and the script shows them
    assert "hidden" in dom.root.find(cls="filters").attrs
    assert dom.root.find("body").attrs["data-ready"] == "false"


def test_problem_cases_come_first_and_open(scenario: Scenario):
    cases = scenario.dom.root.find_all("details", cls="case")
    ranks = [int(next(c for c in n.classes if c.startswith("rank-"))[5:]) for n in cases]
    assert ranks == sorted(ranks)
    for node in cases:
        assert ("open" in node.attrs) == ("problem" in node.classes)
    with_new = {c.case_id for c in scenario.decision.new_hallucinations}
    assert {n.attrs["data-case-id"] for n in cases[: len(with_new)]} == with_new


def test_legend_counts_every_claim(scenario: Scenario):
    legend = scenario.dom.root.find(id="legend")
    total = sum(len(c.claims) for c in scenario.head.cases)
    counts = [int(n.text()) for n in legend.find_all(cls="count")]
    assert sum(counts) == total
    for verdict, css in VERDICT_CLASSES.items():
        assert legend.find_all(cls=css), verdict


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
    assert "heuristic" in header
    assert "0 judge calls" in dom.root.find(id="usage").text()
    table = dom.root.find("table", id="score-table").text()
    for name, gate in scenario.decision.evaluators.items():
        assert name in table and f"{gate.threshold:.2f}" in table
    provenance = dom.root.find(id="provenance").text()
    assert all(name in provenance for name in scenario.head.evaluators)


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


# --- without a decision or a dataset, and when they do not match -------------------------------


def test_report_alone_lists_claims_without_responses(scenario: Scenario):
    dom = parse(render_html_report(scenario.base, title="Main <branch>"))
    assert dom.root.find("title").text() == "Main <branch>"
    assert dom.root.find_all("a", cls="claim-mark") == []
    assert dom.root.find_all("div", cls="response") == []
    assert dom.root.find_all("line", cls="baseline") == []
    assert dom.root.find_all(id="changes") == []
    assert dom.root.find_all(id="f-new") == []
    assert "Render the report with the dataset" in dom.root.find(id="notices").text()
    items = dom.root.find_all("details", cls="claim")
    assert len(items) == sum(len(c.claims) for c in scenario.base.cases)
    status = dom.root.find(id="gate-status").text()
    assert status == "All thresholds met"


def test_a_changed_case_does_not_show_a_stale_response(scenario: Scenario):
    changed = [
        c.model_copy(update={"response": c.response + " Changed."})
        if c.id == "billing-refund-window"
        else c
        for c in scenario.base_cases
        if c.id != "sso-setup"
    ]
    dom = parse(render_html_report(scenario.base, cases=changed))
    case = case_node(dom, "billing-refund-window")
    assert case.find_all("div", cls="response") == []
    assert "differs from the one judged" in case.find("p", cls="note").text()
    assert "not in the dataset" in case_node(dom, "sso-setup").find("p", cls="note").text()
    assert "2 of 20 cases" in dom.root.find(id="notices").text()
    assert len(case_node(dom, "api-rate-limits").find_all("a", cls="claim-mark")) > 0


def test_reworded_claims_are_listed_under_the_response(scenario: Scenario):
    result = next(c for c in scenario.base.cases if c.id == "billing-refund-window")
    claims = list(result.claims)
    claims[0] = claims[0].model_copy(update={"text": "Annual Personal plans have a 30-day refund."})
    claims.append(
        ClaimVerdict(text="REFUNDS ARE ISSUED TO THE ORIGINAL PAYMENT METHAD", verdict="SUPPORTED")
    )
    report = scenario.base.model_copy(
        update={"cases": (result.model_copy(update={"claims": tuple(claims)}),)}
    )
    dom = parse(render_html_report(report, cases=scenario.base_cases))
    case = case_node(dom, "billing-refund-window")
    marks = case.find_all("a", cls="claim-mark")
    assert [m.attrs["href"] for m in marks] == [
        f"#{case.attrs['id']}-claim-2",
        f"#{case.attrs['id']}-claim-3",
    ]
    note = case.find("p", cls="unlocated").text()
    assert note.startswith("2 claims could not be found word for word")
    items = case.find_all("details", cls="claim")
    unlocated = [i for i in items if any("not in text" in t.text() for t in i.find_all(cls="tag"))]
    assert [i.attrs["id"] for i in unlocated] == [
        f"{case.attrs['id']}-claim-1",
        f"{case.attrs['id']}-claim-4",
    ]


def test_error_and_skipped_cases(scenario: Scenario):
    first, second, *rest = scenario.head.cases
    broken = first.model_copy(
        update={"status": "error", "error": "judge <timeout>", "claims": (), "results": {}}
    )
    skipped = second.model_copy(update={"status": "skipped", "claims": (), "results": {}})
    report = scenario.head.model_copy(update={"cases": (*rest, broken, skipped)})
    decision = compare(report, record_baseline(scenario.base), rules=GateRules())
    dom = parse(render_html_report(report, decision=decision, cases=scenario.head_cases))
    cases = dom.root.find_all("details", cls="case")
    assert cases[0].attrs["data-case-id"] == first.id
    assert cases[-1].attrs["data-case-id"] == second.id
    assert "judge <timeout>" in cases[0].find("p", cls="error").text()
    assert cases[0].attrs["data-status"] == "error"
    assert "skipped" in cases[-1].find(cls="case-id").text()
    assert "judge <timeout>" in dom.root.find(id="changes").text()


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
    dom = parse(render_html_report(report, decision=decision, cases=scenario.head_cases))
    body = case_node(dom, case.id).find("details", cls="claim").find(cls="claim-body").text()
    assert "67% of the judge's repeated verdicts" in body
    assert "repeated verdicts disagreed" in body
    assert "evidence not found in the context" in body
    unstable = dom.root.find(id="changes").text()
    assert "1 hallucinated claim not counted as new" in unstable
    assert flagged.text in unstable


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


def test_verdicts_have_a_class_each():
    html = render_html_report(
        RunReport.model_validate(
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
                        claims=tuple(ClaimVerdict(text=v.value, verdict=v) for v in Verdict),
                    ).model_dump()
                ],
            }
        )
    )
    dom = parse(html)
    found = {i.attrs["data-verdict"]: i.classes for i in dom.root.find_all("details", cls="claim")}
    assert {v: VERDICT_CLASSES[v] in found[v] for v in VERDICT_CLASSES} == dict.fromkeys(
        VERDICT_CLASSES, True
    )
    assert dom.root.find_all("rect", cls="bar") == []
