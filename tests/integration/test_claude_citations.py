"""Citations judged by Claude: claims keep their markers, verification names the backing chunks.

Claude's replies are scripted on the fake Messages API: the extraction ends each claim with its
sentence's markers, the verification names the chunks that back each claim, and citation accuracy
is read from those two replies (no third call).
"""

from __future__ import annotations

from ragaliq.evaluators import HallucinationEvaluator
from ragaliq.evaluators.citations import CitationAccuracyEvaluator
from ragaliq.models import ChunkRef
from ragaliq.runner import run_suite
from tests.conftest import make_case
from tests.fakes.anthropic_server import Reply
from tests.fakes.claude_sim import blocks, system_text

FEES = "A full plot costs 40 euros per season. A half plot costs 25 euros per season."
WATER = "The water taps run from April to October."
CLAIMS = [
    "A full plot costs 40 euros per season [water-1].",
    "A half plot costs 25 euros per season [water-1].",
    "The water taps run from April to October [water-1].",
]


def verdict(index: int, evidence: str, chunks: list[int]) -> dict:
    return {
        "index": index,
        "verdict": "SUPPORTED",
        "evidence": evidence,
        "chunks": chunks,
        "reason": "The context states it.",
        "confidence": 0.95,
    }


async def test_claims_keep_their_markers_and_miscited_comes_from_the_backing_chunks(
    make_judge, fake_anthropic
):
    case = make_case(
        query="How much is a plot, and when is there water?",
        context=(FEES, WATER),
        chunk_refs=(ChunkRef(id="fees-1"), ChunkRef(id="water-1")),
        response=(
            "A full plot costs 40 euros and a half plot 25 euros per season [water-1]. The water "
            "taps run from April to October [water-1]."
        ),
    )
    fake_anthropic.enqueue(
        Reply(json_output={"claims": CLAIMS}),
        Reply(
            json_output={
                "verdicts": [
                    verdict(0, FEES[:38], [1]),
                    verdict(1, FEES[39:], [1]),
                    verdict(2, WATER, [2]),
                ]
            }
        ),
    )
    judge = make_judge()
    report = await run_suite(
        [case], judge=judge, evaluators=[HallucinationEvaluator(), CitationAccuracyEvaluator()]
    )
    await judge.aclose()

    assert report.usage.calls == fake_anthropic.count() == 2
    extract, verify = (request.body for request in fake_anthropic.requests)
    assert "with the markers of the sentence it comes from" in system_text(extract)
    assert "Verify the claim without them" in system_text(verify)
    assert blocks(verify)["claims"].splitlines()[0] == f"0. {CLAIMS[0]}"

    (result,) = report.cases
    assert [c.text for c in result.claims] == CLAIMS
    assert [c.chunks for c in result.claims] == [(1,), (1,), (2,)]
    accuracy = result.results["citation_accuracy"]
    assert accuracy.score is not None and round(accuracy.score, 6) == round(1 / 3, 6)
    assert accuracy.details["miscited"] == [
        {"claim": 0, "cited": ["water-1"], "backed_by": ["fees-1"]},
        {"claim": 1, "cited": ["water-1"], "backed_by": ["fees-1"]},
    ]
    assert result.results["hallucination"].score == 1.0  # supported claims, credited wrongly


async def test_a_response_without_citations_is_not_asked_about_them(make_judge, fake_anthropic):
    """The citation sections are shown only to cases that cite: the rest pay nothing for them."""
    case = make_case(
        query="How much is a plot?",
        context=(FEES, WATER),
        response="A full plot costs 40 euros per season [sic].",
    )
    claim = "A full plot costs 40 euros per season [sic]."
    fake_anthropic.enqueue(
        Reply(json_output={"claims": [claim]}),
        Reply(json_output={"verdicts": [verdict(0, FEES[:38], [1])]}),
    )
    judge = make_judge()
    report = await run_suite([case], judge=judge, evaluators=[HallucinationEvaluator()])
    await judge.aclose()

    assert report.usage.calls == 2
    extract, verify = (request.body for request in fake_anthropic.requests)
    assert "Citations:" not in system_text(extract)
    assert "Citations:" not in system_text(verify)
