"""Retrieval and citations that fail the gate by themselves: lost chunks, newly miscited claims."""

from __future__ import annotations

import pytest

from ragaliq.evaluators.citations import CitationAccuracyEvaluator, CitationOptions
from ragaliq.gate import GateRules, compare
from ragaliq.gate.listed import listed_failures
from ragaliq.models import ChunkRef, Labels, RunReport, TestCase
from ragaliq.offline import OfflineJudge
from ragaliq.runner import run_suite
from tests.baselines import record_baseline
from tests.unit.gate.test_retrieval_findings import MAIN, case, run

LOST = GateRules(fail_on_lost_chunks=True)
MISCITED = GateRules(fail_on_miscited_claims=True)


async def lost_decision(rules: GateRules):
    baseline = record_baseline(await run(MAIN))
    head = await run([case("refunds", ["x"], {"r1": 1, "r2": 3}), MAIN[1]])
    return compare(head, baseline, rules=rules)


async def test_a_lost_relevant_chunk_fails_the_gate_with_the_option_and_names_the_chunk():
    decision = await lost_decision(LOST)
    assert decision.passed is False
    assert decision.failures == (
        "2 lost relevant chunks (gate.fail_on_lost_chunks: true): refunds: chunk r2 (relevance "
        "3): rank 2 → not retrieved; refunds: chunk r1 (relevance 1): rank 1 → not retrieved",
    )


async def test_without_the_option_a_lost_chunk_is_listed_and_a_notice_says_it_does_not_fail():
    decision = await lost_decision(GateRules())
    assert decision.passed is True and len(decision.listed("lost_chunks")) == 2
    assert (
        "2 lost relevant chunks are listed but do not fail this gate "
        "(gate.fail_on_lost_chunks: false)."
    ) in decision.notices


async def test_a_chunk_that_only_moved_or_was_found_fails_nothing():
    baseline = record_baseline(await run(MAIN))
    head = await run([case("refunds", ["r2", "r1", "x"], {"r1": 1, "r2": 3}), MAIN[1]])
    decision = compare(head, baseline, rules=LOST.model_copy(update={"max_drop": 1.0}))
    assert decision.listed("moved_chunks") and decision.passed is True
    assert not any("listed but" in notice for notice in decision.notices)


FEES = "A full plot costs 40 euros per season."
WATER = "The water taps run from April to October."


def cited(answer: str, *, labels: dict[str, int] | None = None, water: bool = True) -> TestCase:
    chunks = [("fees#1", FEES), ("water#1", WATER)] if water else [("fees#1", FEES)]
    return TestCase(
        id="plot-fee",
        query="How much is a plot?",
        context=tuple(text for _, text in chunks),
        response=answer,
        chunk_refs=tuple(ChunkRef(id=i) for i, _ in chunks),
        labels=None if labels is None else Labels(level="chunk", grades=labels),
    )


async def judged(*cases: TestCase) -> RunReport:
    evaluator = CitationAccuracyEvaluator(CitationOptions(enabled=True))
    return await run_suite(list(cases), judge=OfflineJudge(), evaluators=[evaluator])


RIGHT = "A full plot costs 40 euros per season [fees#1]."
WRONG = "A full plot costs 40 euros per season [water#1]."


async def test_a_newly_miscited_claim_fails_with_the_option_and_names_the_claim():
    baseline = record_baseline(await judged(cited(RIGHT)))
    decision = compare(await judged(cited(WRONG)), baseline, rules=MISCITED)
    assert decision.passed is False
    assert decision.failures[-1] == (
        "1 newly miscited claim (gate.fail_on_miscited_claims: true): plot-fee: A full plot costs "
        "40 euros per season [water#1]. (cites chunk water#1; chunk fees#1 backs it)"
    )
    (listed,) = decision.listed("miscited_claims")
    assert listed.new is True  # type: ignore[attr-defined]


async def test_a_claim_miscited_on_main_too_is_listed_but_fails_nothing():
    baseline = record_baseline(await judged(cited(WRONG)))
    head = await judged(cited(WRONG))
    decision = compare(head, baseline, rules=MISCITED, thresholds={"citation_accuracy": 0.0})
    assert decision.passed is True
    (listed,) = decision.listed("miscited_claims")
    assert listed.new is False  # type: ignore[attr-defined]
    assert not any("miscited" in notice for notice in decision.notices)


async def test_a_citation_to_a_chunk_no_longer_retrieved_is_miscited_and_fails():
    labels = {"fees#1": 1, "water#1": 1}
    main = await judged(cited("The water taps run from April to October [water#1].", labels=labels))
    assert main.cases[0].results["citation_accuracy"].score == 1.0
    head = await judged(
        cited("The water taps run from April to October [water#1].", labels=labels, water=False)
    )
    assert head.cases[0].results["citation_accuracy"].score == 0.0
    decision = compare(head, record_baseline(main), rules=MISCITED)
    assert decision.failures[-1].endswith(
        "plot-fee: The water taps run from April to October [water#1]. (cites chunk water#1 "
        "(not retrieved); no chunk backs it)"
    )
    loose = compare(head, record_baseline(main), rules=GateRules(max_drop=1.0))
    assert loose.passed is False  # the score still falls below the threshold
    assert (
        "1 newly miscited claim is listed but does not fail this gate "
        "(gate.fail_on_miscited_claims: false)."
    ) in loose.notices


async def test_without_a_baseline_no_claim_is_newly_miscited():
    decision = compare(await judged(cited(WRONG)), None, rules=MISCITED)
    assert not any("miscited" in failure for failure in decision.failures)


class Entry:
    def __init__(self, n: int) -> None:
        self.case_id, self.text = f"case-{n}", f"entry {n}"


@pytest.mark.parametrize(
    ("total", "tail"), [(3, ""), (4, "; and 1 more"), (1200, "; and 1,197 more")]
)
def test_a_failure_names_three_entries_and_counts_the_rest(total, tail):
    entries = [Entry(n) for n in range(min(total, 5))]
    failures, notices = listed_failures(LOST, entries, total, [], 0)  # type: ignore[arg-type]
    named = "case-0: entry 0; case-1: entry 1; case-2: entry 2"
    assert failures == [
        f"{total:,} lost relevant chunks (gate.fail_on_lost_chunks: true): {named}{tail}"
    ]
    assert notices == []
