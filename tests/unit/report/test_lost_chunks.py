"""Lost, found and moved relevant chunks in the comment, the summary, the console and the HTML."""

from __future__ import annotations

import pytest

from ragaliq.evaluators.retrieval import (
    HitRateEvaluator,
    MrrEvaluator,
    NdcgEvaluator,
    RecallAtKEvaluator,
)
from ragaliq.gate import GateDecision, GateRules, compare
from ragaliq.models import ChunkRef, Labels, RunReport, TestCase
from ragaliq.report.console import format_decision
from ragaliq.report.markdown import escape_markdown, render_comment, render_summary
from ragaliq.runner import run_suite
from tests.baselines import record_baseline
from tests.fakes.judge import FakeJudge
from tests.unit.report.html_pages import parse, render_html_report


def case(case_id: str, ids: list[str], grades: dict[str, int]) -> TestCase:
    return TestCase(
        id=case_id,
        query=f"Where is {case_id} documented?",
        context=tuple(f"text of {i}" for i in ids),
        response="",
        chunk_refs=tuple(ChunkRef(id=i) for i in ids),
        labels=Labels(level="chunk", grades=grades),
    )


async def run(cases: list[TestCase]) -> RunReport:
    metrics = (HitRateEvaluator, RecallAtKEvaluator, MrrEvaluator, NdcgEvaluator)
    return await run_suite(cases, judge=FakeJudge(), evaluators=[m(k=3) for m in metrics])


GRADES = {"pricing#2": 3, "pricing#5": 1, "faq#1": 2}
LOST = "chunk pricing#2 (relevance 3): rank 1 → rank 4 (past k=3)"


@pytest.fixture
async def narrowed() -> tuple[GateDecision, RunReport]:
    main = [
        case("pricing", ["pricing#2", "pricing#5", "faq#1", "blog#9"], GRADES),
        case("stable", ["s#1"], {"s#1": 1}),
    ]
    head = [
        case("pricing", ["blog#9", "faq#1", "pricing#5", "pricing#2"], GRADES),
        case("stable", ["s#1"], {"s#1": 1}),
    ]
    report = await run(head)
    return compare(report, record_baseline(await run(main)), rules=GateRules()), report


def test_the_comment_lists_lost_chunks_by_case_worst_first_then_the_moves(narrowed):
    decision, _ = narrowed
    comment = render_comment(decision)
    assert "#### Relevant chunks lost (1)" in comment
    assert "<code>pricing</code> · Where is pricing documented? · 1 lost relevant chunk" in comment
    assert f"- **lost**: {escape_markdown(LOST)}" in comment
    assert "#### Relevant chunks at another rank (2)" in comment
    down = "- **down**: " + escape_markdown("chunk pricing#5 (relevance 1): rank 2 → rank 3")
    up = "- **up**: " + escape_markdown("chunk faq#1 (relevance 2): rank 3 → rank 2")
    assert comment.index(down) < comment.index(up)
    assert comment.index("Relevant chunks lost") < comment.index("Relevant chunks at another rank")
    assert "stable" not in comment.split("Relevant chunks lost")[1].split("How to update")[0]


def test_a_long_comment_drops_the_moves_before_the_lost_chunks(narrowed):
    decision = narrowed[0].model_copy(update={"regressed_cases": (), "notices": ()})
    full = render_comment(decision)
    shorter = render_comment(decision, limit=len(full) - 100)
    assert f"- **lost**: {escape_markdown(LOST)}" in shorter
    assert "- **down**" not in shorter and "- **up**" not in shorter
    assert "… and 2 more moved relevant chunks in the job summary." in shorter


def test_the_summary_the_console_and_the_html_show_them_too(narrowed):
    decision, report = narrowed
    summary = render_summary(decision, report=report)
    assert f"- **lost**: {escape_markdown(LOST)}" in summary
    console = format_decision(decision)
    assert "relevant chunks lost: 1 lost relevant chunk" in console
    assert f"  pricing: lost {LOST}" in console
    assert "relevant chunks at another rank: 2 moved relevant chunks" in console
    html = render_html_report(report, decision=decision)
    assert 'id="lost_chunks"' in html
    assert f"<strong>lost</strong> {LOST}" in html


def test_chunk_ids_are_escaped_where_they_are_shown(narrowed):
    decision, report = narrowed
    (lost,) = decision.listed("lost_chunks")
    hostile = decision.model_copy(
        update={"lost_chunks": (lost.model_copy(update={"item": "<img src=x> @octocat | x"}),)}
    )
    comment = render_comment(hostile)
    assert "<img" not in comment and "@octocat" not in comment
    html = render_html_report(report, decision=hostile)
    shown = parse(html).root.find(id="lost_chunks").text()
    assert "chunk <img src=x> @octocat | x (relevance 3)" in shown  # as text, not as markup
    assert "<img src=x>" not in html
