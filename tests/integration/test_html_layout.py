"""The HTML report's layout in headless Chromium, for a run with many evaluators.

A run whose answers cite their chunks, whose chunks have ids and whose cases name the chunks
retrieval should find is scored by nine evaluators: each case's summary holds nine scores beside
its question. At 1280 px the question keeps a readable width however many scores there are; at
400 px the newly hallucinated claims come first, before the cards and tables that count them;
and a claim a reviewer accepted is marked accepted wherever it is shown.

The tests print what they measured (``pytest -rP`` shows it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragaliq.config import EvaluatorsConfig
from ragaliq.dataset import load_dataset
from ragaliq.gate import ClaimChange, GateRules, compare
from ragaliq.gate.acceptance import Acceptance
from ragaliq.models import TestCase
from tests.baselines import record_baseline
from tests.integration.chromium import Browser
from tests.integration.report_pages import (
    Page,
    console_problems,
    css_colour,
    settle,
    write_page,
)
from tests.unit.report.html_pages import QUICKSTART, judge, seeded

REVIEWER = "maintainer"
RETRIEVAL = ("context_precision", "citation_accuracy", "hit_rate", "recall_at_k", "mrr", "ndcg")


def cited_dataset(path: Path) -> list[TestCase]:
    """The quick start's cases with chunk ids, the first chunk labelled relevant and cited."""
    records = []
    for line in QUICKSTART.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        ids = [f"{record['id']}/{n}" for n in range(1, len(record["context"]) + 1)]
        if ids:
            record["context"] = [
                {"id": i, "text": t} for i, t in zip(ids, record["context"], strict=True)
            ]
            record["relevant_chunks"] = ids[:1]
            first, stop, rest = record["response"].partition(". ")
            record["response"] = f"{first} [{ids[0]}]{stop}{rest}"
        records.append(json.dumps(record))
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    return list(load_dataset(path))


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Page, ClaimChange, ClaimChange]:
    """The page of a pull request with two newly hallucinated claims, the first accepted."""
    folder = tmp_path_factory.mktemp("layout")
    base_cases = cited_dataset(folder / "rag_outputs.jsonl")
    evaluators = EvaluatorsConfig.model_validate({n: {"enabled": True} for n in RETRIEVAL})
    head_cases = seeded(base_cases)
    base, head = judge(base_cases, evaluators), judge(head_cases, evaluators)
    baseline = record_baseline(base)
    first, other, *_ = compare(head, baseline, rules=GateRules()).new_hallucinations
    acceptance = Acceptance(by=REVIEWER, claims=(first.id,))
    decision = compare(head, baseline, rules=GateRules(), acceptances=(acceptance,))
    assert [c.accepted_by for c in decision.new_hallucinations] == [REVIEWER, None]
    assert len(head.summary.evaluators) == 9
    page = write_page(folder / "report.html", head, decision, head_cases)
    return page, first, other


WIDTHS = """(function () {
  var cases = Array.from(document.querySelectorAll('#case-list > details.case'));
  cases.forEach(function (d) { d.style.contentVisibility = 'visible'; });
  return cases.map(function (d) {
    var summary = d.querySelector('summary');
    var style = getComputedStyle(summary);
    var row = summary.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    var query = d.querySelector('.case-query');
    var side = d.querySelector('.case-side').getBoundingClientRect();
    var chips = Array.from(d.querySelectorAll('.chip')).map(function (c) {
      return c.getBoundingClientRect();
    });
    return {
      id: d.dataset.caseId,
      row: row,
      query: query.getBoundingClientRect().width,
      clipped: query.scrollWidth > query.clientWidth + 1,
      side: side.width,
      chips: chips.length,
      inside: chips.every(function (c) {
        return c.left >= side.left - 0.5 && c.right <= side.right + 0.5;
      })
    };
  });
})()"""


def test_the_question_keeps_a_readable_width_beside_nine_scores(chromium: Browser, accepted):
    page, _, _ = accepted
    chromium.resize(1280, 1000)
    chromium.open(page.url)
    rows = chromium.evaluate(WIDTHS)
    assert len(rows) == len(page.head.cases) and all(r["chips"] == 9 for r in rows), rows
    narrowest = min(rows, key=lambda r: r["query"])
    print(
        f"1280 px: the question {narrowest['query']:.0f} px wide (narrowest of {len(rows)}) of "
        f"a {narrowest['row']:.0f} px row; the nine scores beside it "
        f"{max(r['side'] for r in rows):.0f} px at most"
    )
    for row in rows:
        # more than half the row, and at least 30 em: about 60 characters of the question a line
        assert row["query"] >= 0.55 * row["row"] and row["query"] >= 480, row
        assert not row["clipped"] and row["inside"], row
    assert console_problems(chromium) == []


ORDER = """(function () {
  function top(node) { return node.getBoundingClientRect().top + scrollY; }
  var first = document.querySelector('#changes .new-claim');
  return {
    claim: top(first),
    claimBottom: first.getBoundingClientRect().bottom + scrollY,
    header: document.querySelector('header.top').getBoundingClientRect().bottom + scrollY,
    gate: top(document.getElementById('gate')),
    scores: top(document.getElementById('scores')),
    table: top(document.getElementById('evaluators')),
    cases: top(document.getElementById('cases')),
    sideways: document.documentElement.scrollWidth > innerWidth + 1
  };
})()"""


def test_a_phone_shows_the_new_claims_first(chromium: Browser, accepted):
    page, _, _ = accepted
    chromium.resize(400, 800)
    try:
        chromium.open(page.url)
        at = chromium.evaluate(ORDER)
        chromium.resize(1280, 1000)
        settle(chromium)
        wide = chromium.evaluate(ORDER)
    finally:
        chromium.resize(1280, 1000)
    print(
        f"400 px: the first newly hallucinated claim at {at['claim']:.0f} to "
        f"{at['claimBottom']:.0f} px, the header ending at {at['header']:.0f} px; the gate card "
        f"at {at['gate']:.0f} px, the scores at {at['scores']:.0f} px, the score table at "
        f"{at['table']:.0f} px; at 1280 px the first new claim at {wide['claim']:.0f} px"
    )
    # first after the header, on the phone's first screen, before everything that counts it
    assert at["header"] < at["claim"] < min(at["gate"], at["scores"], at["table"], at["cases"])
    assert at["claim"] <= 0.75 * 800, at
    assert not at["sideways"]
    # a laptop keeps the gate and the scores side by side at the top
    assert wide["gate"] == wide["scores"] < wide["claim"], wide


MARKS = """(function (caseId, other) {
  function tags(root, selector) {
    return Array.from(root.querySelectorAll(selector)).map(function (t) {
      var box = t.getBoundingClientRect();
      return {text: t.textContent, shown: box.width > 0 && box.height > 0};
    });
  }
  var story = Array.from(document.querySelectorAll('#changes .new-claim'));
  var node = document.getElementById('case=' + encodeURIComponent(caseId));
  var otherNode = document.getElementById('case=' + encodeURIComponent(other));
  node.scrollIntoView();
  var mark = node.querySelector('a.claim-mark.is-new');
  var otherMark = otherNode.querySelector('a.claim-mark.is-new');
  return {
    story: story.map(function (row) { return tags(row, '.tag.accepted'); }),
    head: tags(node.querySelector('summary'), '.tag.accepted'),
    claims: Array.from(node.querySelectorAll('details.claim')).map(function (d) {
      return tags(d.querySelector('summary'), '.tag.accepted');
    }),
    mark: [mark.classList.contains('is-accepted'), getComputedStyle(mark).outlineColor, mark.title],
    other: [otherMark.classList.contains('is-accepted'), getComputedStyle(otherMark).outlineColor],
    otherTags: tags(otherNode, '.tag.accepted')
  };
})"""


def rgb(colour: tuple[int, int, int]) -> str:
    return "rgb({}, {}, {})".format(*colour)


@pytest.mark.parametrize("width", [1280, 400])
def test_the_accepted_claim_is_marked_accepted(chromium: Browser, accepted, width: int):
    page, first, other = accepted
    shown = f"\u2713 accepted by @{REVIEWER}"
    chromium.resize(width, 1000)
    try:
        chromium.open(page.url)
        seen = chromium.evaluate(
            f"{MARKS}({json.dumps(first.case_id)}, {json.dumps(other.case_id)})"
        )
        sideways = chromium.evaluate("document.documentElement.scrollWidth > innerWidth + 1")
    finally:
        chromium.resize(1280, 1000)
    # the story: the accepted claim says who accepted it; the other new claim says nothing
    assert seen["story"] == [[{"text": shown, "shown": True}], []]
    # its case: the count in its summary, the mark on its claim, and on its place in the response
    assert seen["head"] == [{"text": "\u2713 1 accepted", "shown": True}]
    accepted_claims = [tags for tags in seen["claims"] if tags]
    assert accepted_claims == [[{"text": shown, "shown": True}]]
    assert seen["mark"][:2] == [True, rgb(css_colour(page.html, "--pass"))]
    assert f"accepted by @{REVIEWER}" in seen["mark"][2]
    assert seen["other"] == [False, rgb(css_colour(page.html, "--new"))]
    assert seen["otherTags"] == []
    assert not sideways
    assert console_problems(chromium) == []
