"""The relevant chunks a change lost, found or moved, held to the baseline's labels."""

from __future__ import annotations

from typing import Any

import pytest

from ragaliq.evaluators.retrieval import (
    HitRateEvaluator,
    MrrEvaluator,
    NdcgEvaluator,
    RecallAtKEvaluator,
)
from ragaliq.gate import GateRules, compare
from ragaliq.models import ChunkRef, Labels, RunReport, TestCase
from ragaliq.runner import run_suite
from tests.baselines import record_baseline
from tests.fakes.judge import FakeJudge


def case(
    case_id: str,
    ids: list[str],
    labels: dict[str, int] | None,
    *,
    sources: list[str] | None = None,
    level: str = "chunk",
) -> TestCase:
    refs = tuple(
        ChunkRef(id=i, source=(sources[n] if sources else None)) for n, i in enumerate(ids)
    )
    return TestCase(
        id=case_id,
        query=f"What does {case_id} need?",
        context=tuple(f"text of {i}" for i in ids),
        response="",
        chunk_refs=refs,
        labels=None if labels is None else Labels(level=level, grades=labels),  # type: ignore[arg-type]
    )


async def run(cases: list[TestCase], k: int | None = None, **options: Any) -> RunReport:
    evaluators = [
        m(k=k, **options)
        for m in (HitRateEvaluator, RecallAtKEvaluator, MrrEvaluator, NdcgEvaluator)
    ]
    judge = FakeJudge()
    report = await run_suite(cases, judge=judge, evaluators=evaluators)
    assert judge.calls == []
    return report


MAIN = [
    case("refunds", ["r1", "r2", "x"], {"r1": 1, "r2": 3}),
    case("shipping", ["s1", "y", "s2"], {"s1": 2, "s2": 2}),
]


async def test_a_relevant_chunk_pushed_past_k_is_lost_with_its_ranks():
    baseline = record_baseline(await run(MAIN, k=2))
    head = await run([case("refunds", ["r1", "x", "y", "r2"], {"r1": 1, "r2": 3}), MAIN[1]], k=2)
    decision = compare(head, baseline, rules=GateRules())
    (lost,) = decision.listed("lost_chunks")
    assert (lost.case_id, lost.item, lost.relevance, lost.rank_before, lost.rank_after) == (
        "refunds",
        "r2",
        3,
        2,
        4,
    )
    assert lost.text == "chunk r2 (relevance 3): rank 2 → rank 4 (past k=2)"
    assert decision.listed("found_chunks") == () and decision.listed("moved_chunks") == ()
    assert decision.evaluators["recall_at_k"].delta == pytest.approx(-0.25)


async def test_a_chunk_no_longer_retrieved_is_lost_and_the_worst_comes_first():
    baseline = record_baseline(await run(MAIN))
    head = await run(
        [case("refunds", ["x"], {"r1": 1, "r2": 3}), case("shipping", ["y"], {"s1": 2, "s2": 2})]
    )
    lost = compare(head, baseline, rules=GateRules()).listed("lost_chunks")
    assert [(c.case_id, c.item, c.relevance, c.rank_before, c.rank_after) for c in lost] == [
        ("refunds", "r2", 3, 2, None),
        ("shipping", "s1", 2, 1, None),
        ("shipping", "s2", 2, 3, None),
        ("refunds", "r1", 1, 1, None),
    ]
    assert lost[0].text == "chunk r2 (relevance 3): rank 2 → not retrieved"


async def test_a_reordering_within_k_loses_nothing_and_shows_the_moves():
    baseline = record_baseline(await run(MAIN, k=3))
    head = await run([case("refunds", ["r2", "r1", "x"], {"r1": 1, "r2": 3}), MAIN[1]], k=3)
    decision = compare(head, baseline, rules=GateRules())
    assert decision.passed, decision.failures
    assert decision.listed("lost_chunks") == ()
    moved = [
        (c.item, c.rank_before, c.rank_after, c.headline) for c in decision.listed("moved_chunks")
    ]
    assert moved == [("r1", 1, 2, "down"), ("r2", 2, 1, "up")]
    assert decision.evaluators["ndcg"].delta > 0


async def test_a_relevant_chunk_brought_within_k_is_newly_found():
    baseline = record_baseline(await run(MAIN, k=1))
    head = await run([MAIN[0], case("shipping", ["s2", "s1"], {"s1": 2, "s2": 2})], k=1)
    decision = compare(head, baseline, rules=GateRules())
    (found,) = decision.listed("found_chunks")
    (lost,) = decision.listed("lost_chunks")
    assert (found.item, found.rank_before, found.rank_after) == ("s2", 3, 1)
    assert (lost.item, lost.rank_before, lost.rank_after) == ("s1", 1, 2)
    # s2 was retrieved before, past k: its old rank is named, never "not retrieved".
    assert (found.headline, found.text) == (
        "found",
        "chunk s2 (relevance 2): rank 3 (past k=1) → rank 1",
    )
    assert (lost.headline, lost.text) == (
        "lost",
        "chunk s1 (relevance 2): rank 1 → rank 2 (past k=1)",
    )


async def test_a_relevant_chunk_newly_retrieved_at_all_was_not_retrieved_before():
    baseline = record_baseline(await run([case("a", ["x", "y"], {"r": 1})], k=1))
    decision = compare(
        await run([case("a", ["r", "x"], {"r": 1})], k=1), baseline, rules=GateRules()
    )
    (found,) = decision.listed("found_chunks")
    assert found.text == "chunk r (relevance 1): not retrieved → rank 1"


async def test_source_labels_survive_a_re_chunking():
    sources = ["guide", "faq", "blog"]
    main = case("a", ["g1", "f1", "b1"], {"guide": 1, "faq": 2}, sources=sources, level="source")
    rechunked = case(
        "a",
        ["guide#1", "guide#2", "faq#1", "faq#2"],
        {"guide": 1, "faq": 2},
        sources=["guide", "guide", "faq", "faq"],
        level="source",
    )
    baseline = record_baseline(await run([main]))
    decision = compare(await run([rechunked]), baseline, rules=GateRules())
    assert decision.listed("lost_chunks") == ()
    (moved,) = decision.listed("moved_chunks")
    assert (moved.item, moved.level, moved.rank_before, moved.rank_after) == ("faq", "source", 2, 3)
    assert moved.text == "document faq (relevance 2): rank 2 → rank 3"
    assert decision.evaluators["recall_at_k"].delta == 0


async def test_the_change_is_scored_on_the_baselines_labels_and_its_own_are_a_proposal():
    baseline = record_baseline(await run(MAIN))
    edited = case("refunds", ["r1", "r2", "x"], {"r1": 1, "x": 2, "r9": 1})
    head = await run([edited, MAIN[1]])
    assert head.cases[0].results["recall_at_k"].score == pytest.approx(2 / 3)  # its own labels
    decision = compare(head, baseline, rules=GateRules())
    recall = decision.evaluators["recall_at_k"]
    assert (recall.head, recall.baseline, recall.delta) == (1.0, 1.0, 0.0)
    assert recall.judge_score is None
    assert decision.listed("lost_chunks") == ()
    assert (
        "This change proposes new relevance labels for 1 case (refunds: relevant_chunks +x, "
        "+r9, -r2). Labels are part of the bar: until the change is merged and the baseline "
        "updated, its retrieval is scored against the baseline's labels."
    ) in decision.notices


async def test_labels_added_where_the_baseline_had_none_are_a_proposal_too():
    baseline = record_baseline(await run([case("a", ["x", "y"], None)]))
    head = await run([case("a", ["x", "y"], {"y": 1})])
    decision = compare(head, baseline, rules=GateRules())
    assert head.cases[0].results["mrr"].score == 0.5
    assert decision.evaluators["mrr"].head is None  # the baseline's (no labels): not scored
    assert any("(a: none → relevant_chunks)" in n for n in decision.notices)


async def test_a_baseline_without_labels_kept_scores_a_case_on_its_own_and_says_so():
    unlabelled = record_baseline(await run(MAIN)).model_copy()
    for recorded in unlabelled.case_index:
        del recorded.kept["retrieval"]
    decision = compare(
        await run([case("refunds", ["x"], {"r1": 1}), MAIN[1]]), unlabelled, rules=GateRules()
    )
    assert decision.listed("lost_chunks") == ()
    assert any(
        n.startswith("The baseline keeps no relevance labels for 2 cases the retrieval metrics")
        for n in decision.notices
    )


async def test_the_baseline_keeps_labels_and_the_rank_of_each_relevant_chunk_however_deep():
    baseline = record_baseline(await run(MAIN, k=2))
    kept = baseline.by_id["shipping"].kept["retrieval"]
    assert kept.labels == Labels(level="chunk", grades={"s1": 2, "s2": 2})
    assert kept.found == {"s1": 1, "s2": 3}
    assert (
        record_baseline(await run([case("a", ["x"], None)])).by_id["a"].kept["retrieval"].labels
        is None
    )


async def test_a_long_list_keeps_its_worst_and_counts_the_rest():
    from ragaliq.gate import Comparison

    many = [case(f"c{i}", ["a", "b"], {"a": 1 + i % 3, "b": 1}) for i in range(6)]
    baseline = record_baseline(await run(many))
    head = await run([case(f"c{i}", ["x"], {"a": 1 + i % 3, "b": 1}) for i in range(6)])
    comparison = Comparison(baseline, rules=GateRules(), listed=3)
    for judged in head.cases:
        comparison.add(judged)
    decision = comparison.decide(head.head)
    assert [(c.case_id, c.item) for c in decision.listed("lost_chunks")] == [
        ("c2", "a"),
        ("c5", "a"),
        ("c1", "a"),
    ]
    assert decision.count("lost_chunks") == 12


async def test_the_decision_json_lists_lost_chunks_by_name_and_reads_back():
    from ragaliq.gate import GateDecision

    baseline = record_baseline(await run(MAIN))
    decision = compare(
        await run([case("refunds", ["x"], {"r1": 1, "r2": 3}), MAIN[1]]),
        baseline,
        rules=GateRules(),
    )
    data = decision.model_dump(mode="json")
    assert [c["item"] for c in data["lost_chunks"]] == ["r2", "r1"]
    assert data["found_chunks"] == [] and data["new_hallucinations"] == []
    assert "findings" not in data
    assert GateDecision.model_validate_json(decision.model_dump_json()) == decision


async def test_a_retrieval_that_found_nothing_scores_zero_and_loses_every_chunk_main_found():
    baseline = record_baseline(await run(MAIN, k=2))
    head = await run([case("refunds", [], {"r1": 1, "r2": 3}), MAIN[1]], k=2)
    (nothing,) = [c for c in head.cases if c.id == "refunds"]
    assert {n: (r.status, r.score) for n, r in nothing.results.items()} == {
        "hit_rate": ("ok", 0.0),
        "recall_at_k": ("ok", 0.0),
        "mrr": ("ok", 0.0),
        "ndcg": ("ok", 0.0),
    }
    decision = compare(head, baseline, rules=GateRules())
    lost = [
        (c.case_id, c.item, c.rank_before, c.rank_after) for c in decision.listed("lost_chunks")
    ]
    assert lost == [("refunds", "r2", 2, None), ("refunds", "r1", 1, None)]
    assert decision.evaluators["hit_rate"].delta == pytest.approx(-0.5)


async def test_a_long_proposal_spells_out_three_cases_and_five_ids_each_and_counts_the_rest():
    main = [case(f"c{i}", ["a", "b"], {"a": 1}) for i in range(5)]
    baseline = record_baseline(await run(main))
    many = {"a": 1, **{f"new{n}": 1 for n in range(8)}}
    edited = [case("c0", ["a", "b"], many)] + [
        case(f"c{i}", ["a", "b"], {"a": 2}) for i in range(1, 5)
    ]
    decision = compare(await run(edited), baseline, rules=GateRules())
    (notice,) = [n for n in decision.notices if n.startswith("This change proposes")]
    assert notice == (
        "This change proposes new relevance labels for 5 cases (c0: relevant_chunks +new0, "
        "+new1, +new2, +new3, +new4, ... and 3 more ids; c1: relevant_chunks a 1 → 2; "
        "c2: relevant_chunks a 1 → 2; ... and 2 more cases). Labels are part of the bar: until "
        "the change is merged and the baseline updated, its retrieval is scored against the "
        "baseline's labels."
    )


async def run_each(cases: list[TestCase], ks: dict[str, int | None]) -> RunReport:
    """A run of some retrieval metrics, each with its own k."""
    metrics = {m.name: m for m in (HitRateEvaluator, RecallAtKEvaluator, MrrEvaluator)}
    judge = FakeJudge()
    evaluators = [metrics[name](k=k) for name, k in ks.items()]
    return await run_suite(cases, judge=judge, evaluators=evaluators)


THREE = {"r1": 1, "r2": 1, "r3": 1}


async def test_metrics_with_different_k_list_against_the_largest():
    # hit_rate counts rank 1 and recall_at_k the first 3: a listing at 3 shows what moves either.
    ks = {"hit_rate": 1, "recall_at_k": 3}
    baseline = record_baseline(await run_each([case("a", ["r1", "x", "r2", "r3"], THREE)], ks))
    head = await run_each([case("a", ["x", "r1", "y", "r2"], THREE)], ks)
    decision = compare(head, baseline, rules=GateRules())
    assert [c.text for c in decision.listed("lost_chunks")] == [
        "chunk r2 (relevance 1): rank 3 → rank 4 (past k=3)"
    ]
    assert [c.text for c in decision.listed("moved_chunks")] == [
        "chunk r1 (relevance 1): rank 1 → rank 2"
    ]
    assert decision.listed("found_chunks") == ()  # r3 was past 3 and is not retrieved now
    assert decision.evaluators["hit_rate"].delta == -1.0


async def test_a_metric_with_k_unset_lists_against_every_retrieved_chunk():
    ks = {"hit_rate": 1, "mrr": None}
    baseline = record_baseline(await run_each([case("a", ["r1", "x", "r2", "y", "r3"], THREE)], ks))
    head = await run_each([case("a", ["x", "y", "z", "w", "r1", "r3"], THREE)], ks)
    decision = compare(head, baseline, rules=GateRules())
    assert [c.text for c in decision.listed("lost_chunks")] == [
        "chunk r2 (relevance 1): rank 3 → not retrieved"
    ]
    assert [c.text for c in decision.listed("moved_chunks")] == [
        "chunk r1 (relevance 1): rank 1 → rank 5",
        "chunk r3 (relevance 1): rank 5 → rank 6",
    ]
