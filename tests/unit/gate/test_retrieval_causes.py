"""Which side changed for a relevant chunk: its text, its id, or the ranking, before the labels."""

from __future__ import annotations

from ragaliq.evaluators.retrieval import RetrievalKept, text_digest
from ragaliq.gate import GateRules, compare
from ragaliq.models import ChunkRef, Labels, TestCase
from tests.baselines import record_baseline
from tests.unit.gate.test_retrieval_findings import run

LABELS = {"r1": 1, "r2": 3}


def case(chunks: list[tuple[str, str]], case_id: str = "refunds", level: str = "chunk") -> TestCase:
    return TestCase(
        id=case_id,
        query="When is a refund due?",
        context=tuple(text for _, text in chunks),
        response="",
        chunk_refs=tuple(
            ChunkRef(id=i, source=i.split("#")[0]) if level == "source" else ChunkRef(id=i)
            for i, _ in chunks
        ),
        labels=Labels(level=level, grades=LABELS if level == "chunk" else {"r1": 1}),  # type: ignore[arg-type]
    )


MAIN = [("r1", "Refunds are due in 14 days."), ("r2", "Refunds go to the card."), ("x", "Other.")]


async def said(head: list[tuple[str, str]], *, k: int | None = None, main=MAIN) -> list[str]:
    baseline = record_baseline(await run([case(main)], k=k))
    decision = compare(await run([case(head)], k=k), baseline, rules=GateRules())
    return [n for n in decision.notices if n.startswith("What changed for")]


async def test_the_baseline_keeps_the_text_of_each_relevant_chunk_it_retrieved():
    baseline = record_baseline(await run([case([*MAIN, ("r2", "A copy.")])]))
    kept = baseline.by_id["refunds"].kept["retrieval"]
    assert kept.texts == {"r1": text_digest(MAIN[0][1]), "r2": text_digest(MAIN[1][1])}
    assert text_digest("Refunds.") != text_digest("Refunds!") and len(text_digest("a")) == 12
    by_source = record_baseline(await run([case([("r1", "A."), ("r1#2", "B.")], level="source")]))
    assert by_source.by_id["refunds"].kept["retrieval"].texts == {}


async def test_a_chunk_whose_text_is_retrieved_under_another_id_changed_its_id():
    head = [MAIN[0], ("r2-b", MAIN[1][1]), ("x2", MAIN[1][1]), MAIN[2]]
    assert await said(head) == [
        "What changed for 1 relevant chunk the baseline retrieved: refunds: chunk r2's text is "
        "retrieved as r2-b: its id changed. Where a chunk's id or text changed, the labels may "
        "no longer fit the chunking: check that they name the chunks that hold the answers."
    ]


async def test_a_chunk_with_its_id_and_other_text_changed_its_text_even_when_nothing_was_lost():
    head = [("r1", "Refunds are due in 30 days."), MAIN[1], MAIN[2], ("r1", MAIN[0][1])]
    (notice,) = await said(head)
    assert notice.startswith(
        "What changed for 1 relevant chunk the baseline retrieved: refunds: chunk r1's text "
        "changed since the baseline. Where a chunk's id or text changed"
    )


async def test_a_chunk_neither_retrieved_nor_its_text_was_dropped_by_the_ranking():
    assert await said([MAIN[0], MAIN[2]]) == [
        "What changed for 1 relevant chunk the baseline retrieved: refunds: neither chunk r2 nor "
        "its text is retrieved: the ranking dropped it. No chunk's id or text is seen to have "
        "changed, so the labels are not in question: the retrieval ranks the chunks differently."
    ]


async def test_a_chunk_pushed_past_k_with_its_id_and_text_was_moved_by_the_ranking():
    notices = await said([MAIN[2], MAIN[1], MAIN[0]], k=2)
    assert notices[0].startswith(
        "What changed for 1 relevant chunk the baseline retrieved: refunds: chunk r1 has the id "
        "and text it had, at rank 3: the ranking moved it. No chunk's id"
    )


async def test_a_chunk_that_only_moved_within_k_or_was_found_deep_before_says_nothing():
    assert await said([MAIN[1], MAIN[0], MAIN[2]]) == []
    deep = [MAIN[0], MAIN[2], MAIN[1]]
    assert await said([MAIN[0], MAIN[2]], k=1, main=deep) == []


async def test_four_causes_spell_out_three_and_count_the_rest():
    cases = [f"c{n}" for n in range(4)]
    baseline = record_baseline(await run([case(MAIN, c) for c in cases]))
    head = await run([case([MAIN[0], MAIN[2]], c) for c in cases])
    (notice,) = [n for n in compare(head, baseline, rules=GateRules()).notices if "What" in n]
    assert notice.count("the ranking dropped it") == 3
    assert "What changed for 4 relevant chunks" in notice and "; ... and 1 more." in notice


async def test_a_mixed_list_suspects_the_labels_when_one_chunk_changed_its_text():
    baseline = record_baseline(await run([case(MAIN, "b"), case(MAIN, "a")]))
    head = await run([case([("r1", "New."), *MAIN[1:]], "b"), case([MAIN[0], MAIN[2]], "a")])
    (notice,) = [n for n in compare(head, baseline, rules=GateRules()).notices if "What" in n]
    assert "a: neither chunk r2" in notice and "b: chunk r1's text changed" in notice
    assert notice.endswith("check that they name the chunks that hold the answers.")


async def test_without_texts_on_either_side_nothing_is_explained():
    baseline = record_baseline(await run([case(MAIN)]))
    for recorded in baseline.case_index:
        kept = recorded.kept["retrieval"]
        assert isinstance(kept, RetrievalKept)
        recorded.kept["retrieval"] = kept.model_copy(update={"texts": {}})
    decision = compare(await run([case([MAIN[0], MAIN[2]])]), baseline, rules=GateRules())
    assert decision.listed("lost_chunks") and not any("What" in n for n in decision.notices)
    head = await run([case([MAIN[0], MAIN[2]])])
    head = head.model_copy(
        update={"cases": [c.model_copy(update={"retrieved_texts": ()}) for c in head.cases]}
    )
    fresh = record_baseline(await run([case(MAIN)]))
    decision = compare(head, fresh, rules=GateRules())
    assert decision.listed("lost_chunks") and not any("What" in n for n in decision.notices)
