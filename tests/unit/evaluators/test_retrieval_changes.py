"""The pieces of retrieval's findings, one rule at a time: entries, ranks, cuts, proposals."""

from __future__ import annotations

from typing import Any

import pytest

from ragaliq.evaluators.findings import Before
from ragaliq.evaluators.retrieval import (
    FoundChunk,
    HitRateEvaluator,
    LostChunk,
    MovedChunk,
    MrrEvaluator,
    NdcgEvaluator,
    RecallAtKEvaluator,
    RetrievalKept,
    RetrievedRelevant,
)
from ragaliq.models import CaseResult, ChunkRef, EvaluationResult, Labels


def entry(kind: type[Any] = LostChunk, **fields: Any) -> Any:
    values: dict[str, Any] = {
        "case_id": "refunds",
        "query": "q",
        "item": "r2",
        "level": "chunk",
        "relevance": 2,
        "rank_before": 2,
        "rank_after": None,
        "k": None,
    }
    return kind(**(values | fields))


def test_an_entry_names_its_item_its_grade_and_both_ranks():
    assert entry().text == "chunk r2 (relevance 2): rank 2 → not retrieved"
    assert entry(level="source").text == "document r2 (relevance 2): rank 2 → not retrieved"
    assert entry(rank_after=5, k=3).text == "chunk r2 (relevance 2): rank 2 → rank 5 (past k=3)"
    assert entry(rank_before=3, rank_after=4, k=3).text == (
        "chunk r2 (relevance 2): rank 3 → rank 4 (past k=3)"
    )


@pytest.mark.parametrize(
    ("before", "after", "k", "headline"),
    [
        (2, None, None, "lost"),
        (3, 4, 3, "lost"),  # rank k is within, k + 1 is past
        (None, 1, None, "found"),
        (4, 3, 3, "found"),
        (1, 3, 3, "down"),
        (3, 1, None, "up"),
    ],
)
def test_the_headline_is_lost_found_or_the_way_it_moved(before, after, k, headline):
    assert entry(rank_before=before, rank_after=after, k=k).headline == headline


def test_the_lists_are_titled_counted_and_the_worst_kept_first():
    assert (LostChunk.title, LostChunk.noun) == ("Relevant chunks lost", "lost relevant chunk")
    assert (LostChunk.worst_first, LostChunk.weight) == (True, 2)
    assert (FoundChunk.title, FoundChunk.noun) == (
        "Relevant chunks newly found",
        "newly found relevant chunk",
    )
    assert (FoundChunk.worst_first, FoundChunk.weight) == (False, 1)
    assert (MovedChunk.title, MovedChunk.noun) == (
        "Relevant chunks at another rank",
        "moved relevant chunk",
    )
    assert (MovedChunk.worst_first, MovedChunk.weight) == (True, 1)
    lost = [
        entry(relevance=1, rank_before=1),
        entry(relevance=3, rank_before=4),
        entry(relevance=3, rank_before=2, item="b"),
        entry(relevance=3, rank_before=2, item="a"),
        entry(relevance=3, rank_before=None, item="z"),
        entry(relevance=3, rank_before=1, item="m"),
    ]
    ordered = sorted(lost, key=lambda e: e.severity())
    assert [(e.relevance, e.rank_before, e.item) for e in ordered] == [
        (3, None, "z"),
        (3, 1, "m"),
        (3, 2, "a"),
        (3, 2, "b"),
        (3, 4, "r2"),
        (1, 1, "r2"),
    ]
    moved = [
        entry(MovedChunk, rank_before=1, rank_after=2),
        entry(MovedChunk, rank_before=1, rank_after=5, item="b"),
        entry(MovedChunk, rank_before=4, rank_after=1, item="c"),
        entry(MovedChunk, rank_before=1, rank_after=5, item="a"),
        entry(MovedChunk, rank_before=2, rank_after=3, item="d"),
    ]
    ordered = [e.item for e in sorted(moved, key=lambda e: e.severity())]
    assert ordered == ["a", "b", "d", "r2", "c"]  # the farthest down first
    assert entry(MovedChunk, rank_before=None, rank_after=None).severity()[0] == 0


LABELS = Labels(level="chunk", grades={"a": 1, "b": 3, "c": 0})


def result(name: str, k: int | None, status: str = "ok") -> EvaluationResult:
    return EvaluationResult(
        evaluator=name,
        score=None if status != "ok" else 1.0,
        passed=None,
        status=status,  # type: ignore[arg-type]
        details={"k": k},
    )


def judged(
    *results: EvaluationResult, labels: Labels | None = LABELS, ids=("x", "b", "a")
) -> CaseResult:
    return CaseResult(
        id="refunds",
        input_hash="h",
        status="ok",
        query="q",
        retrieved=tuple(ChunkRef(id=i) for i in ids),
        labels=labels,
        results={r.evaluator: r for r in results},
    )


def test_the_baseline_keeps_nothing_of_a_case_no_metric_scored_and_the_ranks_however_deep():
    assert RetrievedRelevant.keep(judged()) is None
    assert RetrievedRelevant.keep(judged(result("faithfulness", None))) is None
    assert RetrievedRelevant.keep(judged(result("hit_rate", 1, status="error"))) is None
    kept = RetrievedRelevant.keep(judged(result("hit_rate", 1)))
    assert kept == RetrievalKept(labels=LABELS, found={"b": 2, "a": 3})
    assert RetrievedRelevant.keep(judged(result("mrr", None), labels=None)) == RetrievalKept()


def findings(case: CaseResult, kept: Any, *, status: str = "ok") -> tuple[RetrievedRelevant, list]:
    kind = RetrievedRelevant()
    found: list = []
    before = Before(input_hash="h", status=status, kept=kept)  # type: ignore[arg-type]
    kind.find(case, before, first_run=False, emit=lambda name, f: found.append((name, f)))
    return kind, found


def test_the_largest_k_of_the_metrics_cuts_the_lists_and_an_unset_k_counts_every_rank():
    kept = RetrievalKept(labels=LABELS, found={"a": 1, "b": 2})
    case = judged(result("hit_rate", 1), result("recall_at_k", 2), result("mrr", 9, "error"))
    _, found = findings(case, kept)  # now b at 2 (within 2), a at 3 (past 2)
    assert [(n, f.item, f.k) for n, f in found] == [("lost_chunks", "a", 2)]
    _, found = findings(judged(result("hit_rate", 1), result("ndcg", None)), kept)
    assert [(n, f.item, f.rank_before, f.rank_after, f.k) for n, f in found] == [
        ("moved_chunks", "a", 1, 3, None)
    ]


def test_a_case_not_scored_new_or_without_kept_labels_lists_nothing():
    kind = RetrievedRelevant()
    seen: list = []
    kind.find(judged(), None, first_run=False, emit=lambda *a: seen.append(a))
    kind.find(
        judged(result("hit_rate", None)), None, first_run=False, emit=lambda *a: seen.append(a)
    )
    assert seen == [] and kind.notices() == []
    kind, found = findings(judged(result("hit_rate", None)), RetrievalKept(labels=None))
    assert found == []
    (notice,) = kind.notices()
    assert notice.startswith(
        "This change proposes new relevance labels for 1 case (refunds: none → relevant_chunks)"
    )
    graded_out = Labels(level="chunk", grades={"a": 0})
    kind, found = findings(
        judged(result("hit_rate", None), labels=graded_out), RetrievalKept(labels=graded_out)
    )
    assert found == [] and kind.notices() == []


def test_a_baseline_that_kept_nothing_of_a_case_is_counted_and_said():
    kind, found = findings(judged(result("hit_rate", None)), None)
    unkept = Before(input_hash="h", status="ok", kept=None)
    kind.find(judged(result("hit_rate", None)), unkept, first_run=False, emit=found.append)
    assert found == []
    (notice,) = kind.notices()
    assert notice.startswith("The baseline keeps no relevance labels for 2 cases the retrieval")


def test_a_proposal_names_a_change_of_level_and_labels_taken_away():
    sources = Labels(level="source", grades={"doc": 1})
    kind, _ = findings(
        judged(result("hit_rate", None), labels=sources), RetrievalKept(labels=LABELS)
    )
    kind.find(
        judged(result("hit_rate", None), labels=None),
        Before(input_hash="h", status="ok", kept=RetrievalKept(labels=LABELS)),
        first_run=False,
        emit=lambda *a: None,
    )
    (notice,) = kind.notices()
    assert (
        "(refunds: relevant_chunks → relevant_sources; refunds: relevant_chunks → none)" in notice
    )


def test_a_proposal_lists_added_removed_and_regraded_ids_in_that_order():
    after = Labels(level="chunk", grades={"b": 2, "a": 1, "d": 1})
    kind, _ = findings(judged(result("hit_rate", None), labels=after), RetrievalKept(labels=LABELS))
    (notice,) = kind.notices()
    assert "(refunds: relevant_chunks +d, -c, b 3 → 2)." in notice


def test_the_case_is_scored_on_the_baselines_labels_with_the_threshold_in_force():
    kind = RetrievedRelevant()
    mine = Labels(level="chunk", grades={"x": 1})
    case = judged(
        result("mrr", None, "error"),
        result("faithfulness", None),
        result("hit_rate", 1),
        labels=mine,
    )
    before = Before(input_hash="h", status="ok", kept=RetrievalKept(labels=LABELS))
    decided = kind.as_decided(case, before, {"hit_rate": 0.5})
    assert decided.labels == LABELS
    hit = decided.results["hit_rate"]
    assert (hit.score, hit.passed, hit.details["k"]) == (0.0, False, 1)  # b is at rank 2, past k=1
    assert decided.results["mrr"] is case.results["mrr"]
    assert decided.results["faithfulness"] is case.results["faithfulness"]
    same = Before(input_hash="h", status="ok", kept=RetrievalKept(labels=mine))
    assert kind.as_decided(case, same, {}) is case
    assert kind.as_decided(case, Before(input_hash="h", status="ok", kept=None), {}) is case


def test_each_metric_is_a_class_of_its_own_name_version_and_summary():
    metrics = (HitRateEvaluator, RecallAtKEvaluator, MrrEvaluator, NdcgEvaluator)
    assert [(m.__name__, m.name, m.version) for m in metrics] == [
        ("HitRateEvaluator", "hit_rate", "1"),
        ("RecallAtKEvaluator", "recall_at_k", "1"),
        ("MrrEvaluator", "mrr", "1"),
        ("NdcgEvaluator", "ndcg", "2"),
    ]
    assert all(m.__module__ == "ragaliq.evaluators.retrieval" for m in metrics)
    assert MrrEvaluator.__qualname__ == "MrrEvaluator"
    assert HitRateEvaluator.__doc__ == (
        "1 when a relevant chunk (or document) is among the first k retrieved."
    )


def test_the_reasoning_counts_ranks_in_the_plural_and_names_documents():
    sources = Labels(level="source", grades={"d1": 1, "d2": 1, "d3": 1})
    refs = (ChunkRef(source="d1"), ChunkRef(source="x"), ChunkRef(source="d3"))
    scored = RecallAtKEvaluator().score(refs, sources)
    assert scored.reasoning == (
        "2 of 3 relevant documents are among the retrieved chunks (ranks 1, 3)."
    )
    missed = HitRateEvaluator(k=1).score((ChunkRef(source="x"),), sources)
    assert (
        missed.reasoning
        == "None of the 3 relevant documents is among the first 1 retrieved chunks."
    )
    assert missed.details == {"k": 1, "relevant": 3}
    skipped = HitRateEvaluator(k=4).score(refs, None)
    assert skipped.details == {"k": 4}


def test_the_shortfall_names_the_missed_items_most_relevant_first():
    labels = Labels(level="chunk", grades={"a": 1, "b": 3, "c": 2, "x": 1})
    case = judged(labels=labels, ids=("x",))
    assert RecallAtKEvaluator().describe_shortfall(case, label=str) == [
        "relevant chunk b (relevance 3) is not among the retrieved chunks",
        "relevant chunk c (relevance 2) is not among the retrieved chunks",
        "relevant chunk a (relevance 1) is not among the retrieved chunks",
    ]
    assert RecallAtKEvaluator().describe_shortfall(judged(labels=None), label=str) == []
    empty = Labels(level="chunk", grades={"a": 0})
    assert RecallAtKEvaluator().describe_shortfall(judged(labels=empty), label=str) == []


@pytest.mark.parametrize(
    ("added", "shown"),
    [
        (5, "+n0, +n1, +n2, +n3, +n4)"),
        (6, "+n0, +n1, +n2, +n3, +n4, ... and 1 more id)"),
    ],
)
def test_a_proposal_spells_out_five_ids_and_counts_the_rest(added, shown):
    after = Labels(level="chunk", grades={**LABELS.grades, **{f"n{i}": 1 for i in range(added)}})
    kind, _ = findings(judged(result("hit_rate", None), labels=after), RetrievalKept(labels=LABELS))
    (notice,) = kind.notices()
    assert f"(refunds: relevant_chunks {shown}." in notice


@pytest.mark.parametrize(
    ("labels", "reasoning"),
    [
        (
            None,
            "The case names no relevant_chunks or relevant_sources, so there is nothing its "
            "retrieval had to find.",
        ),
        (
            Labels(level="chunk", grades={}),
            "The case's relevant_chunks is empty, so there is nothing its retrieval had to find.",
        ),
        (
            Labels(level="source", grades={"a": 0}),
            "The case's relevant_sources grades every id 0 (not relevant), so there is nothing "
            "its retrieval had to find.",
        ),
    ],
)
def test_a_case_without_relevant_labels_says_so_in_a_sentence(labels, reasoning):
    assert MrrEvaluator().score((ChunkRef(id="a"),), labels).reasoning == reasoning
