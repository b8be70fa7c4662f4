"""Hit rate, recall at k, MRR and nDCG: hand-computed values, skips, and what they never do."""

from __future__ import annotations

from math import log2

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragaliq.evaluators import CaseJudgement
from ragaliq.evaluators.retrieval import (
    HitRateEvaluator,
    MrrEvaluator,
    NdcgEvaluator,
    RecallAtKEvaluator,
)
from ragaliq.models import CaseResult, ChunkRef, Labels
from ragaliq.preflight import preflight
from ragaliq.runner import run_suite
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge

METRICS = (HitRateEvaluator, RecallAtKEvaluator, MrrEvaluator, NdcgEvaluator)


def chunks(*ids: str | None) -> tuple[ChunkRef, ...]:
    return tuple(ChunkRef(id=i) for i in ids)


def scores(
    retrieved: tuple[ChunkRef, ...], labels: Labels | None, k: int | None = None
) -> dict[str, float | None]:
    return {m.name: m(k=k).score(retrieved, labels).score for m in METRICS}


def relevant(*ids: str, **graded: int) -> Labels:
    return Labels(level="chunk", grades={**dict.fromkeys(ids, 1), **graded})


def approx(values: dict[str, float]) -> dict[str, object]:
    return {name: pytest.approx(value, abs=1e-6) for name, value in values.items()}


def test_binary_labels_with_a_miss_a_repeat_and_an_unlabelled_chunk():
    # a at 1, b at 3; the a at 4 is a repeat (irrelevant); d is labelled but never retrieved.
    got = scores(chunks("a", "x", "b", "a", "c"), relevant("a", "b", "d"))
    assert got == approx(
        {
            "hit_rate": 1.0,
            "recall_at_k": 2 / 3,
            "mrr": 1.0,
            "ndcg": (1 / log2(2) + 1 / log2(4)) / (1 / log2(2) + 1 / log2(3) + 1 / log2(4)),
        }
    )


def test_a_duplicate_counts_once_where_it_first_comes():
    got = scores(chunks("x", "a", "a"), relevant("a"), k=3)
    assert got == approx({"hit_rate": 1.0, "recall_at_k": 1.0, "mrr": 1 / 2, "ndcg": 1 / log2(3)})


def test_k_larger_than_the_list_counts_what_there_is_and_the_ideal_up_to_k():
    # Retrieved: a (grade 3). Ideal: a (3), b (2): IDCG = 7/log2(2) + 3/log2(3).
    got = scores(chunks("a"), relevant(a=3, b=2), k=10)
    assert got == approx(
        {"hit_rate": 1.0, "recall_at_k": 1 / 2, "mrr": 1.0, "ndcg": 7 / (7 + 3 / log2(3))}
    )


def test_nothing_relevant_retrieved_scores_zero_everywhere():
    zero = approx({"hit_rate": 0.0, "recall_at_k": 0.0, "mrr": 0.0, "ndcg": 0.0})
    assert scores(chunks("x", "y"), relevant("a")) == zero
    assert scores(chunks(None, None), relevant("a")) == zero  # chunks without ids
    assert scores(chunks(), relevant("a")) == zero  # nothing retrieved at all


def test_a_relevant_chunk_past_k_does_not_count():
    assert scores(chunks("x", "a"), relevant("a"), k=1) == approx(
        {"hit_rate": 0.0, "recall_at_k": 0.0, "mrr": 0.0, "ndcg": 0.0}
    )
    assert scores(chunks("x", "a"), relevant("a"), k=2) == approx(
        {"hit_rate": 1.0, "recall_at_k": 1.0, "mrr": 1 / 2, "ndcg": 1 / log2(3)}
    )


def test_graded_relevance_gains_two_to_the_grade_minus_one():
    # b (1) at rank 1, a (3) at rank 2; ideal a, b.
    got = scores(chunks("b", "a"), relevant(a=3, b=1))
    dcg = (2**1 - 1) / log2(2) + (2**3 - 1) / log2(3)
    ideal = (2**3 - 1) / log2(2) + (2**1 - 1) / log2(3)
    assert got == approx({"hit_rate": 1.0, "recall_at_k": 1.0, "mrr": 1.0, "ndcg": dcg / ideal})


def test_ties_in_grade_score_alike_in_either_order():
    labels = relevant(a=2, b=2, c=1)
    assert scores(chunks("a", "b"), labels) == scores(chunks("b", "a"), labels)
    assert scores(chunks("a", "b"), labels, k=2)["ndcg"] == pytest.approx(1.0)  # ideal cut at 2


def test_with_k_unset_the_ideal_is_every_labelled_item_so_a_short_list_scores_below_one():
    # a (2) and b (2) at ranks 1 and 2; c (1) is labelled but not retrieved.
    # DCG = 3/log2(2) + 3/log2(3); IDCG = 3/log2(2) + 3/log2(3) + 1/log2(4).
    got = scores(chunks("a", "b"), relevant(a=2, b=2, c=1))
    dcg = 3 + 3 / log2(3)
    assert got == approx(
        {"hit_rate": 1.0, "recall_at_k": 2 / 3, "mrr": 1.0, "ndcg": dcg / (dcg + 1 / 2)}
    )


def test_with_k_unset_one_of_three_relevant_items_retrieved_is_scored_against_all_three():
    # Only a retrieved: DCG = 1; IDCG = 1 + 1/log2(3) + 1/log2(4) = 1 + 0.6309 + 0.5.
    got = scores(chunks("a"), relevant("a", "b", "c"))
    assert got["ndcg"] == pytest.approx(1 / (1 + 1 / log2(3) + 0.5))
    assert got["ndcg"] == pytest.approx(0.4693, abs=1e-4)
    sources = Labels(level="source", grades={"guide": 3, "faq": 1})
    # One chunk of guide: DCG = 7; IDCG = 7 + 1/log2(3).
    assert scores((ChunkRef(id="g1", source="guide"),), sources)["ndcg"] == pytest.approx(
        7 / (7 + 1 / log2(3))
    )


def test_a_grade_of_zero_is_not_relevant():
    got = scores(chunks("z", "a"), relevant(a=1, z=0))
    assert got == approx({"hit_rate": 1.0, "recall_at_k": 1.0, "mrr": 1 / 2, "ndcg": 1 / log2(3)})


def test_source_labels_count_a_document_once_however_many_of_its_chunks_come():
    retrieved = (
        ChunkRef(id="c1", source="guide.md"),
        ChunkRef(id="c2", source="guide.md"),
        ChunkRef(id="c3", source="faq.md"),
    )
    labels = Labels(level="source", grades={"faq.md": 1, "guide.md": 1})
    got = scores(retrieved, labels)
    # guide.md at 1, its second chunk a repeat, faq.md at 3; the ideal has both in the first 2.
    assert got == approx(
        {
            "hit_rate": 1.0,
            "recall_at_k": 1.0,
            "mrr": 1.0,
            "ndcg": (1 + 1 / log2(4)) / (1 + 1 / log2(3)),
        }
    )


@pytest.mark.parametrize(
    ("labels", "reason"),
    [
        (None, "The case names no relevant_chunks or relevant_sources"),
        (Labels(level="chunk", grades={}), "The case's relevant_chunks is empty"),
        (Labels(level="source", grades={"a": 0}), "relevant_sources grades every id 0"),
    ],
)
def test_a_case_without_relevant_labels_is_skipped_with_its_reason(labels, reason):
    for metric in METRICS:
        result = metric().score(chunks("a"), labels)
        assert result.status == "skipped" and result.score is None
        assert reason in result.reasoning


def test_the_reasoning_names_the_ranks_found_and_the_shortfall_names_what_was_missed():
    case = make_case(
        context=("one", "two", "three"),
        chunk_refs=chunks("x", "a", "y"),
        labels=relevant("a", b=3),
    )
    result = RecallAtKEvaluator(k=2).evaluate(CaseJudgement(case=case))
    assert result.reasoning == (
        "1 of 2 relevant chunks is among the first 2 retrieved chunks (rank 2)."
    )
    assert result.details == {"k": 2, "relevant": 2}
    judged = CaseResult(
        id=case.id,
        input_hash=case.input_hash,
        status="ok",
        retrieved=case.chunk_refs,
        labels=case.labels,
        results={"recall_at_k": result},
    )
    assert RecallAtKEvaluator(k=2).describe_shortfall(judged, label=str) == [
        "relevant chunk b (relevance 3) is not among the first 2 retrieved chunks"
    ]


def test_no_absolute_threshold_by_default_and_off_unless_written():
    for metric in METRICS:
        assert metric().threshold == 0.0
        assert metric.Options().enabled is False
        assert not metric.asks_judge()


async def test_a_run_with_only_the_retrieval_metrics_makes_no_judge_call():
    judge = FakeJudge()
    case = make_case(context=("one", "two"), chunk_refs=chunks("a", "b"), labels=relevant("b"))
    report = await run_suite([case], judge=judge, evaluators=[m() for m in METRICS])
    assert judge.calls == []
    assert report.usage.calls == 0
    (judged,) = report.cases
    assert judged.retrieved == case.chunk_refs and judged.labels == case.labels
    assert {n: r.score for n, r in judged.results.items()} == approx(
        {"hit_rate": 1.0, "recall_at_k": 1.0, "mrr": 0.5, "ndcg": 1 / log2(3)}
    )


def test_the_dry_run_says_the_retrieval_metrics_make_no_judge_call():
    plan = preflight(
        [make_case(chunk_refs=chunks("a"), labels=relevant("a"))],
        judge=FakeJudge(),
        evaluators=[m() for m in METRICS],
    )
    assert plan.usage.calls == 0
    assert plan.notices == (
        "no evaluator of this run asks the judge anything (hit_rate, recall_at_k, mrr, ndcg "
        "score the retrieved chunks against the cases' labels), so it makes 0 judge calls and "
        "costs nothing",
    )


# --- properties ------------------------------------------------------------------------------

IDS = st.sampled_from(["a", "b", "c", "d", "e", "f"])


@st.composite
def retrievals(draw: st.DrawFn) -> tuple[tuple[ChunkRef, ...], Labels, int | None]:
    """A retrieval, labels with at least one relevant item, and ``k`` (None: every chunk).

    Labels name chunk ids or, half the time, documents: each chunk's source is drawn too.
    """
    level = draw(st.sampled_from(["chunk", "source"]))
    drawn = draw(st.lists(st.none() | IDS, max_size=8))
    if level == "chunk":
        retrieved = tuple(ChunkRef(id=i) for i in drawn)
    else:
        retrieved = tuple(ChunkRef(id=f"chunk-{n}", source=i) for n, i in enumerate(drawn))
    grades = draw(st.dictionaries(IDS, st.integers(0, 3), min_size=1))
    first = next(iter(grades))
    grades[first] = draw(st.integers(1, 3))  # at least one relevant label
    k = draw(st.none() | st.integers(1, 10))
    return retrieved, Labels(level=level, grades=grades), k


def irrelevant(
    retrieved: tuple[ChunkRef, ...], labels: Labels, more: list[str | None]
) -> tuple[ChunkRef, ...]:
    """Chunks that add nothing: unlabelled ids, ids graded 0, repeats, and chunks without one."""
    seen = set(labels.ranked_items(retrieved))
    relevant_ids = set(labels.relevant)
    keep = [i for i in more if i is None or i not in relevant_ids or i in seen]
    if labels.level == "chunk":
        return tuple(ChunkRef(id=i) for i in keep)
    return tuple(ChunkRef(id=f"more-{n}", source=i) for n, i in enumerate(keep))


@given(retrievals(), st.lists(st.sampled_from(["x", "y", "a", "b"]) | st.none(), max_size=5))
def test_metrics_stay_in_the_unit_interval_and_ignore_irrelevant_chunks_after_k(drawn, more):
    retrieved, labels, k = drawn
    before = scores(retrieved, labels, k)
    assert all(value is not None and 0.0 <= value <= 1.0 for value in before.values()), before
    appended = irrelevant(retrieved, labels, more)
    if k is not None:
        pad = ChunkRef(id="pad") if labels.level == "chunk" else ChunkRef(id="pad", source="pad")
        padded = retrieved + (pad,) * max(0, k - len(retrieved))
        assert scores(padded + appended, labels, k) == scores(padded, labels, k)
    # With k unset every appended chunk is within the cut, and still changes nothing.
    assert scores(retrieved + appended, labels, k) == before


@given(retrievals())
def test_with_k_unset_ndcg_is_one_only_when_every_relevant_item_is_retrieved(drawn):
    retrieved, labels, _ = drawn
    got = scores(retrieved, labels, None)
    everything = set(labels.relevant) <= set(labels.ranked_items(retrieved))
    assert (got["recall_at_k"] == 1.0) == everything
    if not everything:
        assert got["ndcg"] is not None and got["ndcg"] < 1.0
