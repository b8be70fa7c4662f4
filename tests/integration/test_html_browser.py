"""The HTML report in a real headless browser: it paints, its script runs, its filters work.

Driven over the DevTools protocol (tests/integration/chromium.py). Needs Chromium (Debian:
``apt-get install chromium``) at /usr/bin/chromium, or ``chromium``, ``chromium-browser`` or
``google-chrome`` on PATH; skipped only when there is none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragaliq.dataset import load_dataset
from ragaliq.gate import GateRules, compare
from ragaliq.models import CaseResult, RunReport, TestCase
from tests.baselines import record_baseline
from tests.integration.chromium import Browser
from tests.integration.report_pages import (
    PNG_SIGNATURE,
    TITLE,
    Page,
    colours,
    console_problems,
    css_colour,
    decode_png,
    element_id,
    find_case,
    haystack,
    near,
    order,
    settle,
    shown_ids,
    type_query,
    write_page,
)
from tests.unit.report.html_pages import (
    ESCAPE,
    HOSTILE_CASE,
    QUICKSTART,
    SCRIPT,
    judge,
    seeded,
)


@pytest.fixture(scope="module")
def runs() -> tuple[list[TestCase], RunReport, list[TestCase], RunReport]:
    base_cases = load_dataset(QUICKSTART)
    head_cases: list[TestCase] = [*seeded(base_cases), HOSTILE_CASE]
    return base_cases, judge(base_cases), head_cases, judge(head_cases)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, runs) -> Page:
    _, base, head_cases, head = runs
    decision = compare(head, record_baseline(base), rules=GateRules())
    return write_page(tmp_path_factory.mktemp("html") / "report.html", head, decision, head_cases)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory, runs) -> Page:
    """130 cases: three pages of cases."""
    _, base, head_cases, head = runs
    by_id = {c.id: c for c in head_cases}
    results: list[CaseResult] = []
    cases: list[TestCase] = []
    for n in range(130):
        result = head.cases[n % len(head.cases)]
        new_id = f"{n:03d}-{result.id}"
        results.append(result.model_copy(update={"id": new_id}))
        cases.append(by_id[result.id].model_copy(update={"id": new_id}))
    report = head.model_copy(update={"cases": tuple(results)})
    decision = compare(report, record_baseline(base), rules=GateRules())
    return write_page(tmp_path_factory.mktemp("html") / "big.html", report, decision, cases)


# --- the tests ---------------------------------------------------------------------------------


def test_screenshot_paints_the_report(chromium: Browser, page: Page, tmp_path: Path):
    chromium.resize(1280, 3000)
    try:
        chromium.open(page.url)
        shot = tmp_path / "shot.png"
        chromium.screenshot(shot)
    finally:
        chromium.resize(1280, 1000)
    data = shot.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 50_000, f"{len(data)} bytes: a blank page is a few kB"
    width, height, rows, bpp = decode_png(data)
    assert (width, height) == (1280, 3000)
    counts = colours(rows, bpp)
    assert len(counts) > 100, "the screenshot is (almost) one colour"
    assert counts.most_common(1)[0][1] < 0.9 * width * height
    # the verdict highlights are painted: supported claims and at least one problem claim
    assert near(counts, css_colour(page.html, "--sup-bg")) > 1000
    problem = sum(
        near(counts, css_colour(page.html, name)) for name in ("--con-bg", "--nei-bg", "--par-bg")
    )
    assert problem > 500
    assert console_problems(chromium) == []


@pytest.mark.parametrize(
    ("query", "keep"),
    [
        ("", lambda case: True),
        ("?verdict=unsupported", lambda case: any(c.verdict != "SUPPORTED" for c in case.claims)),
        (
            "?evaluator=failing:hallucination",
            lambda case: case.results["hallucination"].passed is False,
        ),
        (
            "?verdict=CONTRADICTED",
            lambda case: any(c.verdict == "CONTRADICTED" for c in case.claims),
        ),
        ("?new=1", None),
    ],
    ids=["no-filter", "unsupported", "failing-hallucination", "contradicted", "new-only"],
)
def test_script_runs_and_filters(chromium: Browser, page: Page, query: str, keep):
    chromium.open(page.url + query)
    assert console_problems(chromium) == []
    assert chromium.evaluate("document.querySelector('.filters').hidden") is False
    if keep is None:
        expected = {c.case_id for c in page.decision.new_hallucinations}
    else:
        expected = {c.id for c in page.head.cases if keep(c)}
    shown = shown_ids(chromium)
    assert set(shown) == expected and len(shown) == len(expected)
    assert shown == [i for i in order(page.data) if i in expected]
    total = len(page.head.cases)
    assert chromium.evaluate("document.getElementById('f-shown').textContent") == (
        f"Showing {len(expected)} of {total} cases"
    )
    assert chromium.evaluate("document.getElementById('f-empty').hidden") == bool(expected)
    # the totals gathered while writing are filled in
    claims = sum(len(c.claims) for c in page.head.cases)
    assert chromium.evaluate("document.querySelector('[data-total=claims]').textContent") == (
        f", {claims} claims"
    )


def test_filters_change_without_reloading(chromium: Browser, page: Page):
    chromium.open(page.url)
    chromium.evaluate(
        "(function () { var s = document.getElementById('f-evaluator');"
        " s.value = 'failing:faithfulness'; s.dispatchEvent(new Event('change')); })()"
    )
    settle(chromium)
    expected = [
        i
        for i in order(page.data)
        if page.data.results(page.data.record(i))["faithfulness"]["passed"] is False
    ]
    assert shown_ids(chromium) == expected
    assert "evaluator=failing%3Afaithfulness" in chromium.evaluate("location.search")


def test_hidden_verdicts_are_unhighlighted(chromium: Browser, page: Page):
    chromium.open(page.url + "?hide=SUPPORTED,NOT_ENOUGH_INFO")
    classes = set(chromium.evaluate("document.body.className").split())
    assert {"hide-SUPPORTED", "hide-NOT_ENOUGH_INFO"} <= classes
    assert "hide-CONTRADICTED" not in classes
    toggles = chromium.evaluate(
        "Array.from(document.querySelectorAll('input[data-toggle-verdict]'))"
        ".map(function (b) { return [b.dataset.toggleVerdict, b.checked, b.hidden]; })"
    )
    assert sorted(toggles) == sorted(
        [
            ["SUPPORTED", False, False],
            ["NOT_ENOUGH_INFO", False, False],
            ["PARTIALLY_SUPPORTED", True, False],
            ["CONTRADICTED", True, False],
            ["NOT_VERIFIABLE_OFFLINE", True, False],
        ]
    )
    displays = chromium.evaluate(
        "Array.from(document.querySelectorAll('ol.claims > li'))"
        ".map(function (li) { return [li.dataset.verdict, getComputedStyle(li).display]; })"
    )
    assert displays and all(
        (display == "none") == (verdict in {"SUPPORTED", "NOT_ENOUGH_INFO"})
        for verdict, display in displays
    )


def test_search_runs_over_the_data(chromium: Browser, page: Page):
    chromium.open(page.url)
    # evidence of a case the page shows closed: its claims are not in the DOM, only in the data
    closed = next(r for r in page.data.cases if r["r"] >= 4 and r.get("c"))
    claim = page.data.verdicts(closed)[0]
    quote_text = (claim["evidence"] or claim["text"])[:40]
    assert chromium.evaluate(f"{find_case(closed['i'])}.querySelector('.case-body')") is None
    for query in (quote_text, "TRASH restore", "refund 14 days", "no such words anywhere"):
        type_query(chromium, query)
        terms = query.lower().split()
        expected = [
            i
            for i in order(page.data)
            if all(t in haystack(page.data, page.data.record(i)) for t in terms)
        ]
        assert shown_ids(chromium) == expected, query
        assert chromium.evaluate("document.getElementById('f-empty').hidden") == bool(expected)
        if query == quote_text:
            assert closed["i"] in expected
    assert "q=no+such+words+anywhere" in chromium.evaluate("location.search")
    type_query(chromium, "")
    assert shown_ids(chromium) == order(page.data)
    assert console_problems(chromium) == []


def test_paging_shows_further_cases(chromium: Browser, big: Page):
    everything = order(big.data)
    assert len(everything) == 130
    chromium.open(big.url)
    assert shown_ids(chromium) == everything[:50]
    where = "document.querySelector('#pager-top .where').textContent"
    assert chromium.evaluate(where) == "Cases 1\u201350 of 130 \u00b7 page 1 of 3"
    chromium.evaluate("document.querySelector('#pager-top button[data-page=next]').click()")
    settle(chromium)
    assert shown_ids(chromium) == everything[50:100]
    assert "page=2" in chromium.evaluate("location.search")
    chromium.evaluate("document.querySelector('#pager-bottom button[data-page=last]').click()")
    settle(chromium)
    assert shown_ids(chromium) == everything[100:]
    assert chromium.evaluate(where) == "Cases 101\u2013130 of 130 \u00b7 page 3 of 3"
    chromium.open(big.url + "?page=2")
    assert shown_ids(chromium) == everything[50:100]
    # a search resets to the first page of its results
    type_query(chromium, "trash")
    matching = [i for i in everything if "trash" in haystack(big.data, big.data.record(i))]
    assert shown_ids(chromium) == matching[:50]
    assert console_problems(chromium) == []


def test_a_link_to_a_case_opens_it_on_its_page(chromium: Browser, big: Page):
    everything = order(big.data)
    target = everything[120]
    chromium.open(big.url + "?verdict=no-claims")
    chromium.evaluate(f"location.hash = {json.dumps('#' + element_id(target))}")
    settle(chromium)
    settle(chromium)
    assert target in shown_ids(chromium)  # the filters gave way, the third page is shown
    state = chromium.evaluate(
        f"(function () {{ var d = {find_case(target)}; var r = d.getBoundingClientRect();"
        " return [d.open, !!d.querySelector('.case-body'),"
        " r.top < innerHeight && r.bottom > 0]; })()"
    )
    assert state == [True, True, True]
    # a claim's mark in the response opens the claim's details
    claim = len(big.data.record(target)["c"])
    chromium.evaluate(
        f"{find_case(target)}.querySelector('a.claim-mark[href$=\"claim={claim}\"]').click()"
    )
    settle(chromium)
    opened = chromium.evaluate(
        f"Array.from({find_case(target)}.querySelectorAll('details.claim'))"
        ".map(function (d) { return d.open; })"
    )
    assert opened[claim - 1] is True
    assert console_problems(chromium) == []


def test_hostile_text_stays_inert(chromium: Browser, page: Page):
    chromium.open(page.url + "?q=" + "xss")
    assert shown_ids(chromium) == [HOSTILE_CASE.id]
    assert chromium.evaluate("document.title") == TITLE
    assert chromium.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert chromium.evaluate("document.querySelectorAll('script').length") == 4
    assert list(chromium.events("Page.javascriptDialogOpening")) == []
    case = find_case(HOSTILE_CASE.id)
    assert chromium.evaluate(case + ".querySelector('.case-query').textContent") == (
        HOSTILE_CASE.query
    )
    assert chromium.evaluate(case + ".querySelector('.case-id span').textContent") == (
        HOSTILE_CASE.id
    )
    response = chromium.evaluate(
        case + ".querySelector('.response').textContent.replace(/\\d+(?=\\s|$)/g, '')"
    )
    assert SCRIPT in response and "</script><script>" in response
    assert chromium.evaluate(case + ".querySelectorAll('.response *:not(a):not(sup)').length") == 0
    assert ESCAPE[:20] in chromium.evaluate(case + ".querySelector('.response').textContent")
    assert console_problems(chromium) == []


def regressed_page(page: Page, tmp_path: Path) -> Page:
    """The page, with every evaluator regressed: its status is the longest there is."""
    evaluators = {
        name: e.model_copy(update={"status": "regressed", "passed": False})
        for name, e in page.decision.evaluators.items()
    }
    decision = page.decision.model_copy(update={"evaluators": evaluators})
    return write_page(tmp_path / "regressed.html", page.head, decision, page.cases)


@pytest.mark.parametrize(("width", "lines"), [(1280, 1), (1400, 1), (1900, 1), (800, 2)])
def test_the_score_status_is_not_clipped(
    chromium: Browser, page: Page, tmp_path: Path, width: int, lines: int
):
    """At desktop widths the status reads on one line; on a narrow screen it wraps, whole."""
    regressed = regressed_page(page, tmp_path)
    evaluators = regressed.decision.evaluators
    chromium.resize(width, 1000)
    try:
        chromium.open(regressed.url)
        tags = chromium.evaluate(
            """Array.from(document.querySelectorAll('#score-table .tag')).map(function (tag) {
              var box = tag.getBoundingClientRect();
              var cell = tag.closest('td').getBoundingClientRect();
              var card = tag.closest('.card').getBoundingClientRect();
              var scroller = tag.closest('.table-scroll');
              return {
                text: tag.textContent,
                fits: box.left >= cell.left - 0.5 && box.right <= cell.right + 0.5 &&
                      box.right <= card.right - 1 && tag.scrollWidth <= tag.clientWidth + 1,
                lines: tag.getClientRects().length,
                scrolls: scroller.scrollWidth > scroller.clientWidth + 1
              };
            })"""
        )
    finally:
        chromium.resize(1280, 1000)
    assert len(tags) == len(evaluators)
    for tag in tags:
        assert tag["lines"] <= lines, tag
        assert tag | {"lines": 0} == {
            "text": "dropped from the baseline",
            "fits": True,
            "lines": 0,
            "scrolls": False,
        }


@pytest.mark.parametrize("width", [420, 360])
def test_the_score_table_reads_whole_on_a_phone(
    chromium: Browser, page: Page, tmp_path: Path, width: int
):
    """On a phone every column of the score tables is on screen, threshold and status included,
    each value named by its column, and nothing makes the page scroll sideways."""
    regressed = regressed_page(page, tmp_path)
    evaluators = regressed.decision.evaluators
    chromium.resize(width, 1000)
    try:
        chromium.open(regressed.url)
        seen = chromium.evaluate(
            """(function () {
              var card = document.querySelector('#evaluators').getBoundingClientRect();
              var scroller = document.querySelector('#evaluators .table-scroll');
              var heads = Array.from(document.querySelectorAll('#score-table thead th'))
                .map(function (th) { return th.textContent; });
              var rows = Array.from(document.querySelectorAll('#score-table tbody tr'));
              return {
                scrolls: scroller.scrollWidth > scroller.clientWidth + 1,
                viewport: document.documentElement.scrollWidth <= window.innerWidth + 1,
                heads: heads,
                cells: rows.map(function (tr) {
                  return Array.from(tr.children).map(function (td) {
                    var box = td.getBoundingClientRect();
                    return {
                      label: td.getAttribute('data-label'),
                      shown: getComputedStyle(td, '::before').content,
                      inside: box.left >= card.left - 0.5 && box.right <= card.right + 0.5 &&
                              box.width > 0
                    };
                  });
                })
              };
            })()"""
        )
        scores = chromium.evaluate(
            """(function () {
              var box = document.querySelector('details.case');
              box.open = true;
              box.querySelector('details.extra').open = true;
              var edge = box.getBoundingClientRect();
              return Array.from(box.querySelectorAll('details.extra table td')).map(function (td) {
                var cell = td.getBoundingClientRect();
                return {label: td.getAttribute('data-label'),
                        inside: cell.left >= edge.left - 0.5 && cell.right <= edge.right + 0.5};
              });
            })()"""
        )
        viewport = chromium.evaluate(
            "document.documentElement.scrollWidth <= window.innerWidth + 1"
        )
    finally:
        chromium.resize(1280, 1000)
    assert seen["scrolls"] is False and seen["viewport"] is True and viewport is True
    assert {"threshold", "result"} <= {cell["label"] for cell in scores}
    assert all(cell["inside"] for cell in scores), scores
    assert "threshold" in seen["heads"] and "status" in seen["heads"]
    assert len(seen["cells"]) == len(evaluators)
    for row in seen["cells"]:
        assert [cell["label"] for cell in row] == seen["heads"]
        assert all(cell["inside"] for cell in row), row
        # Stacked, each value carries its column's name (the header row is not shown).
        assert all(cell["shown"] == f'"{cell["label"]}"' for cell in row[1:]), row


def test_data_that_cannot_be_unpacked_is_said_not_hidden(
    chromium: Browser, page: Page, tmp_path: Path
):
    start = page.html.index('id="rq-cases">') + len('id="rq-cases">')
    broken = tmp_path / "broken.html"
    broken.write_text(page.html[:start] + "AAAA" + page.html[start + 4 :], encoding="utf-8")
    chromium.open(broken.as_uri(), ready="error")
    note = chromium.evaluate(
        "(function () { var n = document.getElementById('f-empty');"
        " return [n.hidden, n.textContent]; })()"
    )
    assert note[0] is False and note[1].startswith("The cases could not be read: ")
    assert shown_ids(chromium) == []


@pytest.mark.parametrize("kind", ["NOT_ENOUGH_INFO", "NOT_VERIFIABLE_OFFLINE"])
def test_the_two_kinds_of_unknown_claim_are_two_filter_values(chromium: Browser, page: Page, kind):
    chromium.open(page.url + f"?verdict={kind}")
    settle(chromium)
    expected = [
        i
        for i in order(page.data)
        if any(c["verdict"] == kind for c in page.data.verdicts(page.data.record(i)))
    ]
    assert expected, f"the page's cases have a claim of each kind ({kind})"
    assert shown_ids(chromium) == expected
    labels = chromium.evaluate(
        "Array.from(document.querySelectorAll('#f-verdict option')).map(function (o) {"
        " return o.value + '=' + o.textContent; })"
    )
    assert "NOT_ENOUGH_INFO=with a claim: not in the context" in labels
    assert "NOT_VERIFIABLE_OFFLINE=with a claim: not verifiable offline" in labels


@pytest.mark.parametrize("width", [400, 1280])
def test_the_new_claims_pill_keeps_clear_of_the_claim_and_the_chart_labels_read(
    chromium: Browser, page: Page, width: int
):
    """The verdict pill never runs into the claim beside it, and the chart's names and values
    stay at a readable size, on a phone as on a laptop."""
    chromium.resize(width, 1000)
    try:
        chromium.open(page.url)
        pills = chromium.evaluate(
            """Array.from(document.querySelectorAll('.new-claim')).map(function (row) {
              var pill = row.querySelector('.pill').getBoundingClientRect();
              var text = row.querySelector('.pill + span').getClientRects()[0];
              return {gap: text.left - pill.right, fits: row.querySelector('.pill').scrollWidth
                      <= row.querySelector('.pill').clientWidth + 1};
            })"""
        )
        labels = chromium.evaluate(
            """Array.from(document.querySelectorAll('svg.chart text.name, svg.chart text.value'))
              .filter(function (t) { return t.getClientRects().length > 0; })
              .map(function (t) { return parseFloat(getComputedStyle(t).fontSize) *
                t.ownerSVGElement.getBoundingClientRect().width /
                t.ownerSVGElement.viewBox.baseVal.width; })"""
        )
    finally:
        chromium.resize(1280, 1000)
    assert pills, "the page lists newly hallucinated claims"
    assert all(p["gap"] >= 6 and p["fits"] for p in pills), pills
    assert len(labels) == 2 * len(page.head.summary.evaluators)  # one chart shown, not both
    assert min(labels) >= 10, labels
