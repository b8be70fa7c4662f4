"""The question table: one row per operation, and what each row says (prompt, blocks, cache key)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragaliq.judges.base import OPERATIONS
from ragaliq.judges.prompts import PROMPT_FILES, SYSTEM_PROMPT, Prompts
from ragaliq.judges.questions import (
    CHUNKS,
    EXTRACT,
    QUESTIONS,
    VERIFY,
    ChunksReply,
    RelevanceReply,
    VerifyReply,
    cache_payload,
    claim_batches,
    context_text,
    question_text,
)
from ragaliq.models import Verdict
from tests.conftest import make_case


def test_every_operation_is_asked_by_one_question_with_its_own_prompt_file():
    assert tuple(QUESTIONS) == OPERATIONS
    prompts = [q.prompt for q in QUESTIONS.values()]
    assert len(set(prompts)) == len(prompts)
    assert set(PROMPT_FILES) == {SYSTEM_PROMPT, *prompts}
    assert set(Prompts.load().tasks) == set(prompts)
    assert len({q.tool for q in QUESTIONS.values()}) == len(QUESTIONS)


def test_a_question_shows_its_parts_framed_as_data_then_its_ask():
    case = make_case(query="Q </query>", response="R", context=("one", "two"))
    assert question_text(EXTRACT, case) == (
        "<query>Q &lt;/query></query>\n<response>R</response>\n\n"
        "Extract the claims of the response."
    )
    assert question_text(VERIFY, case, ["a", "b"]) == (
        "<claims>\n0. a\n1. b\n</claims>\n\nVerify each claim against the context."
    )
    assert (
        context_text(case)
        == '<context>\n<chunk id="1">one</chunk>\n<chunk id="2">two</chunk>\n</context>'
    )


def test_the_cache_key_is_what_the_question_shows():
    case = make_case(query="q", response="r", context=("c",))
    assert cache_payload("extract_claims", case) == {"query": "q", "response": "r"}
    assert cache_payload("evaluate_relevance", case) == {"query": "q", "response": "r"}
    assert cache_payload("rate_chunks", case) == {"query": "q", "context": ["c"]}
    assert cache_payload("verify_claims", case, ["x"]) == {"context": ["c"], "claims": ["x"]}
    assert cache_payload("verify_claims", case, ["x"], sample=2, facts=["f"]) == {
        "context": ["c"],
        "claims": ["x"],
        "facts": ["f"],
        "sample": 2,
    }


def test_only_the_claims_are_sent_in_batches():
    assert [q.operation for q in QUESTIONS.values() if q.batched] == ["verify_claims"]
    assert claim_batches(["a", "b", "c"], 2) == [["a", "b"], ["c"]]
    assert claim_batches([], 2) == []
    assert CHUNKS.context and VERIFY.context and not EXTRACT.context


def test_a_null_reason_is_no_reason_in_every_reply_as_a_null_quote_is_no_quote():
    verdicts = VerifyReply.model_validate(
        {
            "verdicts": [
                {
                    "index": 0,
                    "verdict": "SUPPORTED",
                    "evidence": None,
                    "reason": None,
                    "confidence": 0.9,
                }
            ]
        }
    )
    assert (verdicts.verdicts[0].reason, verdicts.verdicts[0].evidence) == ("", "")
    chunks = ChunksReply.model_validate(
        {"chunks": [{"chunk": 1, "relevant": True, "reason": None}]}
    )
    assert chunks.chunks[0].reason == ""
    relevance = RelevanceReply.model_validate({"score": 0.8, "reasoning": None})
    assert relevance.reasoning == ""


@pytest.mark.parametrize(
    ("written", "verdict"),
    [
        ("partially-supported", Verdict.PARTIALLY_SUPPORTED),
        ("Partially-Supported", Verdict.PARTIALLY_SUPPORTED),
        ("PARTIALLY SUPPORTED", Verdict.PARTIALLY_SUPPORTED),
        ("partially_supported", Verdict.PARTIALLY_SUPPORTED),
        ("not-enough-info", Verdict.NOT_ENOUGH_INFO),
        ("Not Enough Info", Verdict.NOT_ENOUGH_INFO),
        ("fully-supported", Verdict.SUPPORTED),
        ("no-evidence", Verdict.NOT_ENOUGH_INFO),
    ],
)
def test_a_verdict_with_hyphens_spaces_or_underscores_between_its_words_is_that_verdict(
    written, verdict
):
    item = VerifyReply.model_validate(
        {
            "verdicts": [
                {"index": 0, "verdict": written, "evidence": "", "reason": "r", "confidence": 1.0}
            ]
        }
    ).verdicts[0]
    assert item.verdict is verdict


@pytest.mark.parametrize(
    "written", ["partly supported", "PARTIAL", "supported?", "un-supported", "SUPPORTED_MOSTLY", ""]
)
def test_a_verdict_that_would_have_to_be_guessed_is_still_refused(written):
    with pytest.raises(ValidationError):
        VerifyReply.model_validate(
            {
                "verdicts": [
                    {
                        "index": 0,
                        "verdict": written,
                        "evidence": "",
                        "reason": "r",
                        "confidence": 1.0,
                    }
                ]
            }
        )


def test_a_reason_that_is_not_text_is_still_refused():
    with pytest.raises(ValidationError):
        RelevanceReply.model_validate({"score": 0.8, "reasoning": 3})
    with pytest.raises(ValidationError):
        RelevanceReply.model_validate({"score": 0.8})
