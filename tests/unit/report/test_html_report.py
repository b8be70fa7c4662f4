from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote

import pytest

from ragaliq.baseline import record_baseline
from ragaliq.config import EvaluatorsConfig
from ragaliq.dataset import load_dataset
from ragaliq.evaluators import build_evaluators
from ragaliq.gate import ClaimChange, GateDecision, GateRules, IrrelevantChunk, compare
from ragaliq.judges import OfflineJudge
from ragaliq.models import (
    NOT_VERIFIABLE,
    CaseResult,
    ClaimVerdict,
    RunReport,
    TestCase,
    Verdict,
)
from ragaliq.report._locate import locate_claims
from ragaliq.report.filters import VERDICT_LABELS
from ragaliq.report.html import write_html_report
from ragaliq.runner import run_suite
from tests.conftest import REPO_ROOT

QUICKSTART = REPO_ROOT / "examples" / "quickstart" / "rag_outputs.jsonl"
SCRIPT = "<script>alert(1)</script>"
ESCAPE = "</script><script>document.title = 'pwned'</script><!-- \u2028 \u2029 &amp;"
"""Text that would end a script element, open a comment or end a JavaScript line if unescaped."""
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
        f'An <img src=x onerror="alert(2)"> stays inert. {ESCAPE} too.'
    ),
)
VERDICT_CLASSES = {
    "SUPPORTED": "verdict-supported",
    "PARTIALLY_SUPPORTED": "verdict-partially-supported",
    "NOT_ENOUGH_INFO": "verdict-not-enough-info",
    "CONTRADICTED": "verdict-contradicted",
}


def render_html_report(
    report: RunReport,
    *,
    decision: GateDecision | None = None,
    cases: Sequence[TestCase] | None = None,
    title: str = "RagaliQ Gate report",
) -> str:
    """The page of a report held whole, with the dataset's ``cases`` matched by id."""
    by_id = None if cases is None else {case.id: case for case in cases}
    out = io.StringIO()
    write_html_report(
        out,
        head=report.head,
        cases=report.cases,
        decision=decision,
        dataset=None if by_id is None else by_id.get,
        title=title,
    )
    return out.getvalue()


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


# --- the page's data, read back ----------------------------------------------------------------

DATA = re.compile(r'<script type="application/json" id="rq-(\w+)">(.*?)</script>', re.DOTALL)


@dataclass(frozen=True)
class Data:
    """The JSON the page holds: its config, one record per case, and the totals."""

    config: dict[str, Any]
    cases: list[dict[str, Any]]
    totals: dict[str, Any]

    def text(self, value: str | int | None) -> str | None:
        return self.totals["strings"][value] if isinstance(value, int) else value

    def record(self, case_id: str) -> dict[str, Any]:
        return next(r for r in self.cases if r["i"] == case_id)

    def verdicts(self, record: dict[str, Any], key: str = "c") -> list[dict[str, Any]]:
        out = []
        for item in record.get(key, []):
            text, verdict, confidence, evidence, reason, span, flags, agreement, new = item + [
                None
            ] * (9 - len(item))
            if text is None:
                text = record["p"][span[0] : span[1]]
            out.append(
                {
                    "text": self.text(text),
                    "verdict": self.config["verdicts"][verdict]["value"],
                    "confidence": confidence,
                    "evidence": self.text(evidence),
                    "reason": self.text(reason) or "",
                    "span": tuple(span) if span else None,
                    "flags": tuple(self.text(f) for f in flags or ()),
                    "agreement": agreement,
                    "new": new == 1,
                }
            )
        return out

    def results(self, record: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out = {}
        for evaluator, result in zip(self.config["evaluators"], record.get("e", []), strict=False):
            if result is None:
                continue
            score, passed, status, reasoning, baseline = result + [None] * (5 - len(result))
            out[evaluator["name"]] = {
                "score": score,
                "passed": None if passed is None else passed == 1,
                "status": ("ok", "error", "skipped")[status],
                "reasoning": self.text(reasoning) or "",
                "baseline": baseline,
            }
        return out


def read_data(html: str) -> Data:
    blocks = {name: json.loads(text) for name, text in DATA.findall(html)}
    assert set(blocks) == {"config", "cases", "totals"}
    return Data(blocks["config"], blocks["cases"], blocks["totals"])


# --- the runs ----------------------------------------------------------------------------------


def judge(cases: list[TestCase], evaluators: EvaluatorsConfig | None = None) -> RunReport:
    built = build_evaluators(evaluators or EvaluatorsConfig())
    report = asyncio.run(run_suite(cases, judge=OfflineJudge(), evaluators=built))
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
    data: Data


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    base_cases = load_dataset(QUICKSTART)
    head_cases = [*seeded(base_cases), HOSTILE_CASE]
    base, head = judge(base_cases), judge(head_cases)
    decision = compare(head, record_baseline(base), rules=GateRules())
    html = render_html_report(head, decision=decision, cases=head_cases)
    return Scenario(
        base_cases, head_cases, base, head, decision, html, parse(html), read_data(html)
    )


def csp(dom: TreeBuilder) -> str:
    content = dom.root.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert content is not None
    return content


def sha256(text: str) -> str:
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"
    )


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
    assert "default-src 'none'" in csp(scenario.dom)


def test_the_only_script_and_style_are_ours_and_allowed_by_their_hashes(scenario: Scenario):
    scripts = scenario.dom.root.find_all("script")
    code = [s for s in scripts if "type" not in s.attrs]
    assert len(code) == 1
    data = [s for s in scripts if "type" in s.attrs]
    assert [s.attrs["type"] for s in data] == ["application/json"] * 3
    assert [s.attrs["id"] for s in data] == ["rq-config", "rq-cases", "rq-totals"]
    policy = csp(scenario.dom)
    assert f"script-src {sha256(code[0].text())}" in policy
    styles = scenario.dom.root.find_all("style")
    assert len(styles) == 1
    assert f"style-src {sha256(styles[0].text())};" in policy
    assert "unsafe-inline" not in policy
    # a style attribute would need 'unsafe-inline'; the script sets styles through the CSSOM
    assert [a for _, a in scenario.dom.start_tags if "style" in a] == []


def test_untrusted_text_cannot_become_markup(scenario: Scenario):
    html = scenario.html
    # the page's own elements are the only ones: no text ends a script or opens a tag
    assert len([t for t, _ in scenario.dom.start_tags if t == "script"]) == 4
    assert html.count("</script>") == 4
    assert not any(t == "img" for t, _ in scenario.dom.start_tags)
    assert not any(name.startswith("on") for _, a in scenario.dom.start_tags for name in a)
    assert SCRIPT not in html and "pwned'</script>" not in html
    # in the JSON, the characters that could end the element or a script line are escapes
    for name, block in DATA.findall(html):
        assert not set(block) & {"<", ">", "&", "\u2028", "\u2029"}, name
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in html
    # and the data reads back as the very text the dataset holds
    record = scenario.data.record(HOSTILE_CASE.id)
    assert record["q"] == HOSTILE_CASE.query
    assert record["p"] == HOSTILE_CASE.response
    texts = [c["text"] for c in scenario.data.verdicts(record)]
    assert any(SCRIPT in t for t in texts)
    assert any("</script><script>" in t for t in texts)
    # in the HTML parts, Jinja escaped it
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    changes = scenario.dom.root.find("section", id="changes").text()
    assert HOSTILE_CASE.id in changes and SCRIPT in changes


def test_the_script_inserts_data_as_text_only():
    script = (REPO_ROOT / "templates" / "report.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script
    assert "new Function" not in script and 'setAttribute("style"' not in script


# --- cases and claims --------------------------------------------------------------------------


def test_every_case_and_claim_is_in_the_data(scenario: Scenario):
    data = scenario.data
    assert [r["i"] for r in data.cases] == [c.id for c in scenario.head.cases]
    for result in scenario.head.cases:
        record = data.record(result.id)
        assert record["q"] == result.query
        claims = data.verdicts(record)
        assert [c["text"] for c in claims] == [c.text for c in result.claims]
        for got, claim in zip(claims, result.claims, strict=True):
            assert got["verdict"] == claim.verdict.value
            assert got["confidence"] == claim.confidence
            assert got["evidence"] == claim.evidence
            assert got["reason"] == claim.reason
            assert got["flags"] == claim.flags
        results = data.results(record)
        assert set(results) == set(result.results)
        for name, got in results.items():
            assert got["score"] == result.results[name].score
            assert got["passed"] == result.results[name].passed
            assert got["reasoning"] == result.results[name].reasoning


def test_responses_and_context_come_from_the_dataset(scenario: Scenario):
    by_id = {c.id: c for c in scenario.head_cases}
    for result in scenario.head.cases:
        record = scenario.data.record(result.id)
        case = by_id[result.id]
        assert record["p"] == case.response
        assert record.get("t", []) == list(case.context)
        # the offline judge's claims are the response's sentences: every one has its place, and
        # its text is written once, as part of the response
        for claim, got, raw in zip(
            result.claims, scenario.data.verdicts(record), record.get("c", []), strict=True
        ):
            assert got["span"] is not None and got["text"] == claim.text
            start, end = got["span"]
            assert (raw[0] is None) == (case.response[start:end] == claim.text)
    written_once = [c[0] is None for r in scenario.data.cases for c in r.get("c", [])]
    assert sum(written_once) > 0.8 * len(written_once)


def test_repeated_strings_are_written_once(scenario: Scenario):
    strings = scenario.data.totals["strings"]
    assert len(strings) == len(set(strings)) > 0
    reasons = Counter(c.reason for case in scenario.head.cases for c in case.claims)
    common, count = reasons.most_common(1)[0]
    assert count > 2 and common in strings
    assert scenario.html.count(json.dumps(common)[1:-1]) == 2  # first sight, then the table


def test_new_hallucinations_are_the_story_and_flagged_in_their_cases(scenario: Scenario):
    new = scenario.decision.new_hallucinations
    # the hostile case is not in the baseline, so its unsupported claims are all new
    assert HOSTILE_CASE.id in {c.case_id for c in new}
    changes = scenario.dom.root.find("section", id="changes")
    listed = changes.text()
    links = {a.attrs["href"] for a in changes.find_all("a", cls="case-link")}
    for change in new:
        assert change.claim in listed
        assert "#case=" + quote(change.case_id, safe="") in links
        record = scenario.data.record(change.case_id)
        assert record["r"] == 1
        flagged = [c["text"] for c in scenario.data.verdicts(record) if c["new"]]
        assert change.claim in flagged
    unflagged = [
        c
        for r in scenario.data.cases
        for c in scenario.data.verdicts(r)
        if c["new"] and r["i"] not in {x.case_id for x in new}
    ]
    assert unflagged == []


def test_ranks_put_problems_first(scenario: Scenario):
    for result in scenario.head.cases:
        record = scenario.data.record(result.id)
        failing = any(r.passed is False for r in result.results.values())
        unsupported = any(c.verdict != Verdict.SUPPORTED for c in result.claims)
        if record["r"] != 1:
            expected = 2 if failing else 3 if unsupported else 4
            dropped = any(r.case_id == result.id for r in scenario.decision.regressed_cases)
            assert record["r"] == (2 if dropped else expected), result.id


def test_filters_and_legend_are_there_for_the_script(scenario: Scenario):
    dom = scenario.dom
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
    assert "allow JavaScript" in dom.root.find("noscript").text()
    assert dom.root.find_all(id="f-retrieval") == []  # three evaluators, none of retrieval
    legend = dom.root.find(id="legend")
    assert {n.attrs["data-total"] for n in legend.find_all(cls="count")} == {
        f"verdict:{v}" for v in VERDICT_CLASSES
    }


def test_totals_count_every_claim(scenario: Scenario):
    totals = scenario.data.totals
    counts = Counter(c.verdict for case in scenario.head.cases for c in case.claims)
    assert totals["cases"] == len(scenario.head.cases)
    assert totals["claims"] == sum(counts.values())
    codes = [v["value"] for v in scenario.data.config["verdicts"]]
    assert dict(zip(codes, totals["verdicts"], strict=True)) == {
        v.value: counts[v] for v in Verdict
    }
    assert totals["missing"] == 0


def test_every_verdict_has_one_label_and_a_class(scenario: Scenario):
    verdicts = scenario.data.config["verdicts"]
    assert [v["value"] for v in verdicts] == [v.value for v in Verdict]
    for v in verdicts:
        assert v["label"] == VERDICT_LABELS[v["value"]]
        assert v["css"] == VERDICT_CLASSES[v["value"]]
        assert f".pill.{v['css']}" in scenario.html
    import ragaliq.report.html as html_module

    assert not hasattr(html_module, "_VERDICT_LABELS")


# --- streaming ---------------------------------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


class Null:
    def write(self, text: str) -> int:
        return len(text)


def test_each_case_is_written_before_the_next_is_read(scenario: Scenario):
    sink = Sink()
    seen: list[str] = []

    def cases() -> Iterator[CaseResult]:
        for case in scenario.head.cases:
            if seen:
                assert (
                    json.dumps(seen[-1])[1:-1].replace("<", "\\u003c").replace(">", "\\u003e")
                    in sink.text()
                ), "the previous case is not written yet"
            seen.append(case.id)
            yield case

    write_html_report(
        sink,
        head=scenario.head.head,
        cases=cases(),
        decision=scenario.decision,
        dataset={c.id: c for c in scenario.head_cases}.get,
    )
    assert seen == [c.id for c in scenario.head.cases]
    assert sink.text() == scenario.html


def test_the_writer_holds_no_case_views(scenario: Scenario):
    """Writing many cases keeps memory flat: the writer keeps nothing per case but counts."""
    import tracemalloc

    case = scenario.head.cases[0]

    def many(n: int) -> Iterator[CaseResult]:
        for i in range(n):
            yield case.model_copy(update={"id": f"{case.id}-{i}"})

    def peak(n: int) -> int:
        tracemalloc.start()
        write_html_report(Null(), head=scenario.head.head, cases=many(n))
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(200), peak(2_000)
    assert large < small + 400_000, (small, large)


def test_the_page_ends_with_its_document(scenario: Scenario):
    out = io.StringIO()
    write_html_report(out, head=scenario.base.head, cases=scenario.base.cases, title="t")
    assert out.getvalue().startswith("<!DOCTYPE html>")
    assert out.getvalue().endswith("</html>\n")


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
    assert "claims not verifiable offline" in parse(html).root.find(id="gate").text()


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
            (f.text, f.verdict.value, f.reason) for f in result.facts
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
