from __future__ import annotations

import pytest

from ragaliq.judges import OfflineJudge
from ragaliq.judges._text import content_words, numbers, split_sentences
from ragaliq.judges.offline import extract_sentence_claims
from ragaliq.models import Verdict
from tests.conftest import make_case

CONTEXT = (
    "Northwind Cloud refunds annual plans within 14 days of purchase. "
    "Monthly plans are not refundable. "
    "The Business plan costs $12.50 per user per month and includes 2 TB of storage.",
    "Dr. Ada Byron founded the company in 2015 in Lisbon.",
)


def test_sentences_keep_abbreviations_and_decimals_together():
    text = (
        "Dr. Smith paid $3.50 for approx. two items, e.g. apples. "
        "Version 2.4.1 shipped in Jan. 2024."
    )
    assert split_sentences(text) == [
        "Dr. Smith paid $3.50 for approx. two items, e.g. apples.",
        "Version 2.4.1 shipped in Jan. 2024.",
    ]


def test_sentences_split_bullets_and_numbered_lists():
    text = "To reset:\n- Open Settings.\n- Click Reset. Confirm.\n1. Sign in again\n2) Done"
    assert split_sentences(text) == [
        "To reset:",
        "Open Settings.",
        "Click Reset.",
        "Confirm.",
        "Sign in again",
        "Done",
    ]


def test_sentences_keep_initials():
    assert split_sentences("J. R. R. Tolkien wrote it. It sold well.") == [
        "J. R. R. Tolkien wrote it.",
        "It sold well.",
    ]


def test_claims_skip_questions_and_list_intros():
    response = "Here is what to do:\n- Refunds take 14 days.\nAnything else?\nThanks!"
    assert extract_sentence_claims(response) == ["Refunds take 14 days.", "Thanks!"]


def test_numbers_are_normalised():
    assert numbers("It costs $1,200.50, up 45% since 2019, twelve times") == {
        "1200.5",
        "45",
        "2019",
        "12",
    }
    assert numbers("0.50 and 007") == {"0.5", "7"}


def test_content_words_stem_and_drop_stopwords():
    assert content_words("The refunds were refunded") == ["refund", "refund"]


async def verdict_of(claim: str, context=CONTEXT):
    result = await OfflineJudge().verify_claims(make_case(context=context), [claim])
    return result.verdicts[0]


async def test_verbatim_support():
    v = await verdict_of("Annual plans are refunded within 14 days of purchase.")
    assert v.verdict is Verdict.SUPPORTED
    assert v.evidence == "Northwind Cloud refunds annual plans within 14 days of purchase."


async def test_wrong_number_is_contradicted():
    v = await verdict_of("Annual plans are refunded within 30 days of purchase.")
    assert v.verdict is Verdict.CONTRADICTED
    assert "30" in v.reason


async def test_negation_flip_is_contradicted():
    v = await verdict_of("Monthly plans are refundable.")
    assert v.verdict is Verdict.CONTRADICTED


async def test_unrelated_claim_is_not_enough_info():
    v = await verdict_of("The mobile app supports offline editing of spreadsheets.")
    assert v.verdict is Verdict.NOT_ENOUGH_INFO
    assert "not found" in v.reason


async def test_partial_support():
    v = await verdict_of(
        "The Business plan includes 2 TB of storage and a dedicated account manager."
    )
    assert v.verdict is Verdict.PARTIALLY_SUPPORTED


async def test_four_verdicts_come_with_confidence_in_range():
    for claim in [
        "Dr. Ada Byron founded the company in 2015.",
        "Dr. Ada Byron founded the company in 2012.",
        "The company sells hardware routers.",
    ]:
        v = await verdict_of(claim)
        assert 0.0 <= v.confidence <= 1.0
        assert v.reason


async def test_empty_context_gives_not_enough_info():
    result = await OfflineJudge().verify_claims(make_case(context=("",)), ["a", "b"])
    assert [v.verdict for v in result.verdicts] == [Verdict.NOT_ENOUGH_INFO] * 2


@pytest.mark.parametrize(
    ("response", "low", "high"),
    [
        ("Annual plans are refundable within 14 days.", 0.9, 1.0),
        ("Our office is in Lisbon.", 0.0, 0.3),
    ],
)
async def test_relevance_from_query_overlap(response, low, high):
    case = make_case(query="Are annual plans refundable?", response=response)
    result = await OfflineJudge().evaluate_relevance(case)
    assert low <= result.score <= high
    assert "key terms" in result.reasoning


async def test_offline_judge_is_deterministic_and_says_it_is_heuristic():
    judge = OfflineJudge()
    assert judge.info.heuristic is True
    assert "heuristic" in judge.info.model
    case = make_case(context=CONTEXT, response="Annual plans cost $12.50. Refunds take 30 days.")
    first = await judge.verify_claims(case, (await judge.extract_claims(case)).claims)
    second = await judge.verify_claims(case, (await judge.extract_claims(case)).claims)
    assert first == second
    assert first.usage.calls == 0
