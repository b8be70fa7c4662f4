"""The HTML report in a real headless browser: it paints, its script runs, its filters work.

Driven over the DevTools protocol (tests/integration/chromium.py). Needs Chromium (Debian:
``apt-get install chromium``) at /usr/bin/chromium, or ``chromium``, ``chromium-browser`` or
``google-chrome`` on PATH; skipped only when there is none.
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from ragaliq.baseline import record_baseline
from ragaliq.dataset import load_dataset
from ragaliq.gate import GateDecision, GateRules, compare
from ragaliq.models import CaseResult, RunReport, TestCase
from tests.integration.chromium import Browser, find_browser
from tests.unit.report.test_html_report import (
    ESCAPE,
    HOSTILE_CASE,
    QUICKSTART,
    SCRIPT,
    Data,
    judge,
    read_data,
    render_html_report,
    seeded,
)

TITLE = "Browser test"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    found = find_browser()
    if found is None:
        pytest.skip(
            "no headless browser found: install Chromium (Debian: apt-get install chromium) "
            "or put chromium-browser or google-chrome on PATH"
        )
    with Browser(found, width=1280, height=1000) as browser:
        yield browser


@dataclass(frozen=True)
class Page:
    path: Path
    html: str
    head: RunReport
    decision: GateDecision
    cases: list[TestCase]
    data: Data

    @property
    def url(self) -> str:
        return self.path.as_uri()


def write_page(path: Path, head: RunReport, decision: GateDecision, cases: list[TestCase]) -> Page:
    html = render_html_report(head, decision=decision, cases=cases, title=TITLE)
    path.write_text(html, encoding="utf-8")
    return Page(path, html, head, decision, cases, read_data(html))


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


def element_id(case_id: str) -> str:
    """The id of a case's element, as the script writes it (with encodeURIComponent)."""
    return "case=" + quote(case_id, safe="-_.!~*'()")


def find_case(case_id: str) -> str:
    return f"document.getElementById({json.dumps(element_id(case_id))})"


def console_problems(browser: Browser) -> list[str]:
    """Console lines that mean the page's script failed or the CSP blocked something."""
    return [
        line
        for line in browser.console
        if re.search(r"^(error|exception|warning)|Content Security Policy|Refused to", line)
    ]


def shown_ids(browser: Browser) -> list[str]:
    return browser.evaluate(
        "Array.from(document.querySelectorAll('#case-list > details.case'))"
        ".map(function (d) { return d.dataset.caseId; })"
    )


TYPE = r"""
new Promise(function (done) {
  var box = document.getElementById("f-search");
  box.value = %s;
  box.dispatchEvent(new Event("input", { bubbles: true }));
  var want = box.value.trim().toLowerCase().split(/\s+/).join(" ");
  (function look() {
    if (document.body.dataset.query === want) {
      requestAnimationFrame(function () { done(true); });
    } else { setTimeout(look, 5); }
  })();
})
"""


def type_query(browser: Browser, text: str) -> None:
    browser.evaluate(TYPE % json.dumps(text))


def settle(browser: Browser) -> None:
    """Wait for what a click or a hash change scheduled."""
    browser.evaluate(
        "new Promise(function (done) { setTimeout(function () {"
        " requestAnimationFrame(function () { done(true); }); }, 20); })"
    )


def order(data: Data) -> list[str]:
    """The case ids as the page lists them: problems first, then in the report's order."""
    ranked = sorted(enumerate(data.cases), key=lambda item: (item[1]["r"], item[0]))
    return [record["i"] for _, record in ranked]


def haystack(data: Data, record: dict[str, Any]) -> str:
    """What the page's search looks through for a case, lower-cased."""
    parts = [record["i"], record["q"], data.text(record.get("x")) or ""]
    parts += [record.get("p", ""), record.get("a", ""), *record.get("t", [])]
    for claim in data.verdicts(record) + data.verdicts(record, "f"):
        parts += [claim["text"], claim["evidence"] or "", claim["reason"]]
    parts += [data.text(k[1]) or "" for k in record.get("k", [])]
    parts += [r["reasoning"] for r in data.results(record).values()]
    return "\n".join(parts).lower()


# --- PNG, decoded with the standard library ----------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(data: bytes) -> tuple[int, int, list[bytes], int]:
    """Width, height, unfiltered rows and bytes per pixel of an 8-bit RGB(A) PNG."""
    assert data[:8] == PNG_SIGNATURE, "not a PNG"
    pos, ihdr, idat = 8, None, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        assert (
            zlib.crc32(kind + body)
            == struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0]
        )
        pos += 12 + length
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    assert ihdr is not None and idat, "PNG without IHDR or IDAT"
    width, height, depth, colour, _, _, interlace = ihdr
    assert depth == 8 and colour in (2, 6) and interlace == 0, ihdr
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    assert len(raw) == height * (stride + 1)
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind_of_filter = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        if kind_of_filter == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 0xFF
        elif kind_of_filter == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev, strict=True))
        elif kind_of_filter == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 0xFF
        elif kind_of_filter == 4:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                corner = prev[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + _paeth(left, prev[x], corner)) & 0xFF
        else:
            assert kind_of_filter == 0, f"bad filter {kind_of_filter}"
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def colours(rows: list[bytes], bpp: int) -> Counter[tuple[int, int, int]]:
    counts: Counter[tuple[int, int, int]] = Counter()
    for row in rows:
        for x in range(0, len(row), bpp):
            counts[(row[x], row[x + 1], row[x + 2])] += 1
    return counts


def css_colour(html: str, variable: str) -> tuple[int, int, int]:
    """A colour of the light theme, read from the page's own CSS variables."""
    found = re.search(rf"{re.escape(variable)}:\s*#([0-9a-fA-F]{{6}})", html)
    assert found, variable
    value = found.group(1)
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def near(counts: Counter[tuple[int, int, int]], target: tuple[int, int, int], tol: int = 3) -> int:
    return sum(
        n
        for rgb, n in counts.items()
        if all(abs(a - b) <= tol for a, b in zip(rgb, target, strict=True))
    )


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
