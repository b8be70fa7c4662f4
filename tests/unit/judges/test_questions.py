"""The question table: one row per operation, and what each row says (prompt, blocks, cache key)."""

from __future__ import annotations

from ragaliq.judges.base import OPERATIONS
from ragaliq.judges.prompts import PROMPT_FILES, SYSTEM_PROMPT, Prompts
from ragaliq.judges.questions import (
    CHUNKS,
    EXTRACT,
    QUESTIONS,
    VERIFY,
    cache_payload,
    claim_batches,
    context_text,
    question_text,
)
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
