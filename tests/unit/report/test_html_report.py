from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from ragaliq.models import (
    CaseResult,
    Verdict,
)
from ragaliq.report._html_data import PACK_FLUSH
from ragaliq.report.filters import VERDICT_LABELS
from ragaliq.report.html import write_html_report
from tests.conftest import REPO_ROOT
from tests.unit.report.html_pages import (
    DATA,
    HOSTILE_CASE,
    SCRIPT,
    VERDICT_CLASSES,
    Null,
    Scenario,
    Sink,
    build_scenario,
    csp,
    data_texts,
    kind_of,
    read_data,
    render_html_report,
    sha256,
    unpacked_so_far,
)


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return build_scenario()


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
    assert [s.attrs["type"] for s in data] == [
        "application/json",
        "application/octet-stream",
        "application/json",
    ]
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
    # the case records are base64; in the JSON, the characters that could end the element or a
    # script line are escapes
    for name, block in DATA.findall(html):
        assert not set(block) & {"<", ">", "&", "\u2028", "\u2029"}, name
    for name, block in data_texts(html).items():
        assert not set(block) & {"<", ">", "&", "\u2028", "\u2029"}, name
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in data_texts(html)["cases"]
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


def test_the_page_shows_a_confidence_exactly_where_the_comment_does(scenario: Scenario):
    from ragaliq.report.markdown import render_comment

    def shown(head, decision):
        data = read_data(render_html_report(head, decision=decision, cases=scenario.head_cases))
        page = [c["confidence"] for r in data.cases for c in data.verdicts(r)]
        return page, "(confidence " in render_comment(decision)

    assert scenario.head.judge.heuristic
    page, in_comment = shown(scenario.head, scenario.decision)
    assert page and all(confidence is None for confidence in page) and not in_comment

    # The same verdicts from a language model: their confidence is shown, on the page and in
    # the comment.
    judge = scenario.head.judge.model_copy(update={"heuristic": False})
    head = scenario.head.model_copy(update={"judge": judge})
    page, in_comment = shown(head, scenario.decision.model_copy(update={"judge": judge}))
    assert page == [claim.confidence for case in head.cases for claim in case.claims]
    assert in_comment


def test_every_case_and_claim_is_in_the_data(scenario: Scenario):
    data = scenario.data
    assert [r["i"] for r in data.cases] == [c.id for c in scenario.head.cases]
    for result in scenario.head.cases:
        record = data.record(result.id)
        assert record["q"] == result.query
        claims = data.verdicts(record)
        assert [c["text"] for c in claims] == [c.text for c in result.claims]
        for got, claim in zip(claims, result.claims, strict=True):
            assert got["verdict"] == kind_of(claim)
            assert got["confidence"] is None  # the offline judge's figure measures nothing
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
    written = "".join(data_texts(scenario.html).values())
    assert written.count(json.dumps(common)[1:-1]) == 2  # first sight, then the table


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
    counts = Counter(kind_of(c) for case in scenario.head.cases for c in case.claims)
    assert totals["cases"] == len(scenario.head.cases)
    assert totals["claims"] == sum(counts.values())
    codes = [v["value"] for v in scenario.data.config["verdicts"]]
    assert dict(zip(codes, totals["verdicts"], strict=True)) == {
        kind: counts[kind] for kind in VERDICT_CLASSES
    }
    unverifiable = sum(not c.verifiable for case in scenario.head.cases for c in case.claims)
    assert counts["NOT_VERIFIABLE_OFFLINE"] == totals["unverifiable"] == unverifiable
    assert totals["missing"] == 0


def test_every_verdict_has_one_label_and_a_class(scenario: Scenario):
    verdicts = scenario.data.config["verdicts"]
    assert [v["value"] for v in verdicts] == [*(v.value for v in Verdict), "NOT_VERIFIABLE_OFFLINE"]
    labels = {**VERDICT_LABELS, "NOT_VERIFIABLE_OFFLINE": "not verifiable offline"}
    assert len(set(labels.values())) == len(labels), "two kinds of claim under one label"
    for v in verdicts:
        assert v["label"] == labels[v["value"]]
        assert v["css"] == VERDICT_CLASSES[v["value"]]
        assert f".pill.{v['css']}" in scenario.html
    import ragaliq.report.html as html_module

    assert not hasattr(html_module, "_VERDICT_LABELS")


# --- streaming ---------------------------------------------------------------------------------


def test_the_page_is_written_as_the_cases_are_read(scenario: Scenario):
    template = scenario.head.cases[0]
    ids = [f"{template.id}-{i}" for i in range(7_000)]
    sink = Sink()
    behind: dict[int, int] = {}

    def cases() -> Iterator[CaseResult]:
        for i, case_id in enumerate(ids):
            if i % 100 == 0:
                behind[i] = len(unpacked_so_far(sink.text()))
            yield template.model_copy(update={"id": case_id})

    write_html_report(sink, head=scenario.head.head, cases=cases())
    records = data_texts(sink.text())["cases"]
    assert [r["i"] for r in json.loads(records)] == ids
    # when a case is read, every record before it is in the page but at most the last PACK_FLUSH
    # bytes of them, which the compressor holds
    assert len(records) > 3 * PACK_FLUSH
    for i, written in behind.items():
        assert written >= records.index(json.dumps(ids[i])) - PACK_FLUSH - 2_000
    assert behind[len(ids) - 100] > 2 * PACK_FLUSH
    assert unpacked_so_far(sink.text()) == records


def test_the_same_run_writes_the_same_page(scenario: Scenario):
    sink = Sink()
    write_html_report(
        sink,
        head=scenario.head.head,
        cases=iter(scenario.head.cases),
        decision=scenario.decision,
        dataset={c.id: c for c in scenario.head_cases}.get,
    )
    marker = re.compile(r"ragaliq-data-[0-9a-f]{32}")
    assert sink.text() == scenario.html
    assert not marker.search(scenario.html)


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
