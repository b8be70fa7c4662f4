"""Context precision and context recall: the acceptance tables, and what they cost."""

from __future__ import annotations

import pytest

from ragaliq.evaluators import (
    CaseJudgement,
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
)
from ragaliq.models import NOT_VERIFIABLE, ChunkRating, Verdict
from ragaliq.runner import run_suite
from tests.conftest import every_evaluator, make_case, make_verdict
from tests.fakes.judge import FakeJudge

S, P, N, C = (
    Verdict.SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.CONTRADICTED,
)


def rated(*relevant: bool) -> CaseJudgement:
    return CaseJudgement(
        case=make_case(context=tuple(f"chunk {i}" for i in range(len(relevant)))),
        chunks=tuple(ChunkRating(relevant=r, reason="r") for r in relevant),
    )


@pytest.mark.parametrize(
    ("relevant", "score"),
    [
        ((True, True, True), 1.0),
        ((False, False, False), 0.0),
        ((False, False, True), (1 / 3) / (1 + 1 / 2 + 1 / 3)),  # the relevant one ranked last
        ((True, False, False), 1 / (1 + 1 / 2 + 1 / 3)),  # ranked first: weighs most
        ((True,), 1.0),  # one chunk: its own rating
        ((False,), 0.0),
    ],
)
def test_context_precision_acceptance_table(relevant, score):
    result = ContextPrecisionEvaluator().evaluate(rated(*relevant))
    assert result.status == "ok"
    assert result.score == pytest.approx(score, abs=1e-6)


def test_relevant_chunks_ranked_first_score_higher_than_ranked_last():
    first = ContextPrecisionEvaluator().evaluate(rated(True, False, False)).score
    last = ContextPrecisionEvaluator().evaluate(rated(False, False, True)).score
    assert first is not None and last is not None and first > last


def test_context_precision_names_the_ranks_of_the_irrelevant_chunks():
    one = ContextPrecisionEvaluator().evaluate(rated(True, False, True))
    assert one.reasoning == "1 of 3 chunks are not relevant to the query (rank 2)."
    assert one.details == {"chunks": 3, "irrelevant_ranks": [2]}
    two = ContextPrecisionEvaluator().evaluate(rated(False, True, False))
    assert two.reasoning == "2 of 3 chunks are not relevant to the query (ranks 1, 3)."
    every = ContextPrecisionEvaluator().evaluate(rated(True, True))
    assert every.reasoning == "All 2 chunks are relevant to the query."
    assert every.details == {"chunks": 2, "irrelevant_ranks": []}


def test_context_precision_says_when_a_rating_is_a_heuristic():
    judgement = CaseJudgement(
        case=make_case(context=("a", "b")),
        chunks=(
            ChunkRating(relevant=True, reason="r", heuristic=True),
            ChunkRating(relevant=False, reason="r", heuristic=False),
        ),
    )
    result = ContextPrecisionEvaluator().evaluate(judgement)
    assert result.reasoning.endswith("(rank 2) (a heuristic rating).")
    exact = ContextPrecisionEvaluator().evaluate(rated(True))
    assert "heuristic" not in exact.reasoning


def test_context_precision_passes_at_exactly_its_threshold():
    result = ContextPrecisionEvaluator(threshold=0.5).evaluate(rated(False, True, True, True))
    weights = [1, 1 / 2, 1 / 3, 1 / 4]
    assert result.score == pytest.approx(sum(weights[1:]) / sum(weights))
    at = ContextPrecisionEvaluator(threshold=result.score).evaluate(rated(False, True, True, True))
    assert at.passed is True


def test_context_precision_skips_a_case_without_chunks():
    result = ContextPrecisionEvaluator().evaluate(rated())
    assert result.status == "skipped"
    assert result.score is None
    assert "no retrieved chunks" in result.reasoning


def facts(*verdicts: Verdict) -> CaseJudgement:
    return CaseJudgement(
        case=make_case(),
        facts=tuple(make_verdict(v, text=f"fact {i}") for i, v in enumerate(verdicts)),
    )


@pytest.mark.parametrize(
    ("verdicts", "score"),
    [
        ((S, S, S, S), 1.0),  # all facts present
        ((S, S, N, N), 0.5),  # half
        ((N, C, N, N), 0.0),  # none
        ((P, P), 0.5),  # each only partly
    ],
)
def test_context_recall_acceptance_table(verdicts, score):
    result = ContextRecallEvaluator().evaluate(facts(*verdicts))
    assert result.status == "ok"
    assert result.score == pytest.approx(score)
    assert result.flagged_claims == tuple(i for i, v in enumerate(verdicts) if v is not S)


def test_context_recall_skips_a_case_with_no_expected_facts():
    result = ContextRecallEvaluator().evaluate(facts())
    assert result.status == "skipped"
    assert result.score is None
    assert "expected_facts or expected_answer" in result.reasoning


async def test_five_evaluators_ask_each_question_once_what_reads_the_context_together():
    judge = FakeJudge(chunks={"c": [True, False]}, fact_verdicts={"c": [S, N]})
    case = make_case(
        id="c",
        context=("Refunds take 14 days.", "Our office is in Berlin."),
        expected_facts=("Refunds take 14 days.", "Refunds are paid to the card."),
    )
    report = await run_suite([case], judge=judge, evaluators=every_evaluator())
    assert judge.asks == [
        (("extract_claims", "evaluate_relevance"), "c"),
        (("verify_claims", "rate_chunks", "verify_facts"), "c"),
    ]
    assert sorted(op for op, _ in judge.calls) == [
        "chunks",
        "extract",
        "facts",
        "relevance",
        "verify",
    ]
    assert report.usage.calls == 5  # the fake charges a call per question
    results = report.cases[0].results
    assert results["context_recall"].score == pytest.approx(0.5)
    assert results["context_precision"].score == pytest.approx(1 / 1.5)
    assert [f.verdict for f in report.cases[0].facts] == [S, N]


async def test_an_expected_answer_stands_in_for_the_facts():
    case = make_case(id="c", expected_answer="Refunds take 14 days. They go to the card.")
    assert case.needed_facts == ("Refunds take 14 days.", "They go to the card.")
    report = await run_suite([case], judge=FakeJudge(), evaluators=every_evaluator())
    assert len(report.cases[0].facts) == 2


async def test_skipped_cases_stay_out_of_the_mean():
    cases = [
        make_case(id="with", expected_facts=("Refunds take 14 days.",)),
        make_case(id="without"),
    ]
    report = await run_suite(cases, judge=FakeJudge(), evaluators=every_evaluator())
    recall = report.summary.evaluators["context_recall"]
    assert recall.judged == 1
    assert recall.score == 1.0
    assert report.cases[1].results["context_recall"].status == "skipped"


async def test_the_offline_judge_rates_chunks_by_a_heuristic_and_says_so():
    from ragaliq.judges import OfflineJudge

    case = make_case(
        query="How long do refunds take?",
        context=("Refunds take 14 days to reach your card.", "The office closes at 6 pm."),
        response="Refunds take 14 days.",
    )
    rated = await OfflineJudge().rate_chunks(case)
    assert [r.relevant for r in rated.ratings] == [True, False]
    assert all(r.heuristic and r.reason.startswith("Heuristic:") for r in rated.ratings)


def test_a_needed_fact_not_verifiable_offline_is_left_out_of_recall():
    unsure = make_verdict(N, text="fact x", flags=(NOT_VERIFIABLE,))
    judgement = CaseJudgement(
        case=make_case(), facts=(make_verdict(S, text="fact a"), make_verdict(N), unsure)
    )
    result = ContextRecallEvaluator().evaluate(judgement)
    assert result.score == pytest.approx(0.5)
    assert result.flagged_claims == (1,)
    alone = ContextRecallEvaluator().evaluate(CaseJudgement(case=make_case(), facts=(unsure,)))
    assert alone.status == "skipped" and alone.score is None


def test_retrievals_reasons_for_skipping_a_case_read_as_sentences():
    precision = ContextPrecisionEvaluator().evaluate(rated())
    assert precision.reasoning == "The case has no retrieved chunks to rate."
    recall = ContextRecallEvaluator().evaluate(facts())
    assert recall.reasoning == (
        "The case names no expected_facts or expected_answer, so there is nothing retrieval "
        "had to bring."
    )
    unsure = (
        make_verdict(N, text="fact x", flags=(NOT_VERIFIABLE,)),
        make_verdict(N, text="fact y", flags=(NOT_VERIFIABLE,)),
    )
    one = ContextRecallEvaluator().evaluate(CaseJudgement(case=make_case(), facts=unsure[:1]))
    assert one.reasoning == (
        "The one needed fact is not verifiable offline (the offline judge could neither ground "
        "nor fault it), so the case has no score."
    )
    both = ContextRecallEvaluator().evaluate(CaseJudgement(case=make_case(), facts=unsure))
    assert both.reasoning.startswith("All 2 needed facts are not verifiable offline")


def test_context_recall_counts_the_needed_facts_by_verdict_in_its_reasoning_and_details():
    judgement = CaseJudgement(
        case=make_case(),
        facts=(
            make_verdict(S, text="fact a"),
            make_verdict(P, text="fact b"),
            make_verdict(N, text="fact x", flags=(NOT_VERIFIABLE,)),
        ),
    )
    result = ContextRecallEvaluator().evaluate(judgement)
    assert result.reasoning == (
        "3 needed facts: 1 supported, 1 partially supported, 1 not verifiable offline."
    )
    assert result.details == {"facts": 3}
