"""The question table: one row per question, what each reads, and how Claude is asked it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragaliq.evaluators import questions
from ragaliq.evaluators.questions import CHUNKS, EXTRACT, FACTS, RELEVANCE, VERIFY, Answers
from ragaliq.judges.calls import asked_text, context_text, plan_calls, reply_model, system_text
from ragaliq.judges.prompts import Prompts
from ragaliq.judges.questions import (
    WORDINGS,
    ChunksReply,
    InvalidReply,
    RelevanceReply,
    Shown,
    VerifyReply,
    answered_without_judge,
    cache_payload,
    prompt_version,
    wording_version,
)
from ragaliq.models import Verdict
from tests.conftest import make_case


def test_every_question_is_worded_once_with_its_own_sections_and_tool():
    assert set(WORDINGS) == set(questions.QUESTIONS)
    prompts = Prompts.load()
    for wording in WORDINGS.values():
        assert all(name in prompts.sections for name in wording.prompt)
    firsts = [w.prompt[0] for w in WORDINGS.values()]
    assert len(set(firsts)) == len(firsts)
    assert len({w.tool for w in WORDINGS.values()}) == len(WORDINGS)
    used = {name for w in WORDINGS.values() for name in (*w.prompt, *w.cited)}
    assert used == set(prompts.sections)  # no prompt file is left unasked


def test_a_question_reads_what_it_declares_and_the_calls_group_by_it():
    assert [q.name for q in questions.QUESTIONS.values() if q.reads_context] == [
        "verify_claims",
        "rate_chunks",
        "verify_facts",
    ]
    case = make_case(context=("c",), expected_facts=("f",))
    groups = plan_calls(list(questions.QUESTIONS.values()), case, ["x"], per_call=25)
    assert [[c.wordings for c in group] for group in groups] == [
        [(WORDINGS["extract_claims"], WORDINGS["evaluate_relevance"])],
        [(WORDINGS["verify_claims"], WORDINGS["rate_chunks"], WORDINGS["verify_facts"])],
    ]
    apart = plan_calls(list(questions.QUESTIONS.values()), case, ["x"], per_call=25, together=False)
    assert [len(group) for group in apart] == [1] * 5


def test_items_past_claims_per_call_go_in_later_calls_of_their_own():
    case = make_case(context=("c",), expected_facts=("f1", "f2", "f3"))
    (group,) = plan_calls([VERIFY, CHUNKS, FACTS], case, ["a", "b", "c", "d", "e"], per_call=2)
    asked = [[(w.question.name, shown.items) for w, shown in call.asked] for call in group]
    assert asked == [
        [("verify_claims", ("a", "b")), ("rate_chunks", ()), ("verify_facts", ("f1", "f2"))],
        [("verify_claims", ("c", "d")), ("verify_facts", ("f3",))],
        [("verify_claims", ("e",))],
    ]


def test_a_call_shows_each_block_once_framed_as_data_then_each_ask():
    case = make_case(query="Q </query>", response="R", context=("one", "two"))
    (call,) = plan_calls([EXTRACT, RELEVANCE], case, per_call=25)[0]
    assert asked_text(call) == (
        "<query>Q &lt;/query></query>\n<response>R</response>\n\n"
        "Answer every task, each in its member:\n"
        '- "extract_claims": Extract the claims of the response.\n'
        '- "evaluate_relevance": Rate how well the response answers the query.'
    )
    (alone,) = plan_calls([VERIFY], case, ["a", "b"], per_call=25)[0]
    assert asked_text(alone) == (
        "<claims>\n0. a\n1. b\n</claims>\n\nVerify each claim against the context."
    )
    assert (
        context_text(case)
        == '<context>\n<chunk id="1">one</chunk>\n<chunk id="2">two</chunk>\n</context>'
    )


def test_a_composed_call_asks_one_member_per_question_each_its_own_reply_model():
    composed = reply_model((WORDINGS["verify_claims"], WORDINGS["rate_chunks"]))
    schema = composed.model_json_schema()
    assert schema["required"] == ["verify_claims", "rate_chunks"]
    assert schema["additionalProperties"] is False
    assert reply_model((WORDINGS["verify_claims"],)) is VerifyReply
    pair = (WORDINGS["verify_claims"], WORDINGS["verify_facts"])
    text = system_text(Prompts.load(), pair, make_case(response="Plans renew yearly."))
    assert text.count("## Task ") == 2
    assert text.count("Verdict fields, for every item") == 1
    assert "Citations:" not in text
    citing = make_case(context=("Plans renew yearly.",), response="Plans renew yearly [1].")
    assert system_text(Prompts.load(), pair, citing).count("Citations:") == 1


def test_a_change_to_one_question_is_a_new_version_of_that_question_only():
    versions = {q.name: wording_version(q) for q in questions.QUESTIONS.values()}
    assert len(set(versions.values())) == len(versions)
    assert all(len(v) == 12 for v in versions.values())
    assert prompt_version(together=True) != prompt_version(together=False)


def test_the_cache_key_is_what_the_question_reads():
    case = make_case(query="q", response="r", context=("c",), expected_facts=("f",))
    assert cache_payload(EXTRACT, case) == {"query": "q", "response": "r"}
    assert cache_payload(RELEVANCE, case) == {"query": "q", "response": "r"}
    assert cache_payload(CHUNKS, case) == {"query": "q", "context": ["c"]}
    assert cache_payload(VERIFY, case, ["x"]) == {"context": ["c"], "claims": ["x"]}
    assert cache_payload(VERIFY, case, ["x"], sample=2) == {
        "context": ["c"],
        "claims": ["x"],
        "sample": 2,
    }
    assert cache_payload(FACTS, case, ["x"]) == {"context": ["c"], "facts": ["f"]}


def test_what_needs_no_judge_is_answered_without_one():
    case = make_case(context=())
    known, left = answered_without_judge([EXTRACT, VERIFY, CHUNKS, FACTS], case, ["x"])
    assert left == [EXTRACT]
    assert known.get(VERIFY).verdicts[0].verdict is Verdict.NOT_ENOUGH_INFO
    assert known.get(CHUNKS).ratings == ()
    assert known.get(FACTS).verdicts == ()
    _, left = answered_without_judge([VERIFY], make_case(context=("c",)), ())
    assert left == []


def test_a_reply_that_validates_but_cannot_be_read_is_invalid():
    case = make_case(context=("one", "two"))
    verify = WORDINGS["verify_claims"]
    item = {"verdict": "SUPPORTED", "evidence": "one", "reason": "r", "confidence": 1.0}
    reply = VerifyReply.model_validate(
        {"verdicts": [{"index": 0, "chunks": [1], **item}, {"index": 1, "chunks": [3], **item}]}
    )
    with pytest.raises(InvalidReply, match="claim 1 names chunk 3, which does not exist"):
        verify.check(reply, Shown(case=case, items=("a", "b")))
    with pytest.raises(InvalidReply, match="no verdict for claim 1, 2;"):
        verify.check(reply.model_copy(update={"verdicts": reply.verdicts[:1]}), _three(case))
    twice = reply.model_copy(update={"verdicts": [reply.verdicts[0]] * 2})
    with pytest.raises(InvalidReply, match="claim 0 has more than one verdict"):
        verify.check(twice, Shown(case=case, items=("a", "b")))
    chunks = ChunksReply.model_validate({"chunks": [{"chunk": 2, "relevant": True, "reason": ""}]})
    with pytest.raises(InvalidReply, match="no rating for chunk 1"):
        WORDINGS["rate_chunks"].check(chunks, Shown(case=case))
    rated_twice = chunks.model_copy(update={"chunks": chunks.chunks * 2})
    with pytest.raises(InvalidReply, match="chunk 2 is rated more than once"):
        WORDINGS["rate_chunks"].check(rated_twice, Shown(case=case))


def _three(case):
    return Shown(case=case, items=("a", "b", "c"))


def test_answers_are_each_questions_own_or_its_reason():
    answers = Answers(found={"verify_claims": RelevanceReply(score=1, reasoning="")})
    assert answers.get(VERIFY) is None  # never read as another question's model
    failed = Answers.failing([EXTRACT, RELEVANCE], "down")
    assert (failed.error(EXTRACT), failed.error(VERIFY)) == ("down", None)


def test_a_null_reason_is_no_reason_in_every_reply_as_a_null_quote_is_no_quote():
    verdicts = VerifyReply.model_validate(
        {
            "verdicts": [
                {
                    "index": 0,
                    "verdict": "SUPPORTED",
                    "evidence": None,
                    "chunks": [],
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


def one_verdict(written: str) -> dict:
    """A reply of one verdict, written as a judge wrote it."""
    item = {"index": 0, "verdict": written, "evidence": "", "chunks": [], "reason": "r"}
    return {"verdicts": [{**item, "confidence": 1.0}]}


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
    item = VerifyReply.model_validate(one_verdict(written)).verdicts[0]
    assert item.verdict is verdict


@pytest.mark.parametrize(
    "written", ["partly supported", "PARTIAL", "supported?", "un-supported", "SUPPORTED_MOSTLY", ""]
)
def test_a_verdict_that_would_have_to_be_guessed_is_still_refused(written):
    with pytest.raises(ValidationError):
        VerifyReply.model_validate(one_verdict(written))


def test_a_reason_that_is_not_text_is_still_refused():
    with pytest.raises(ValidationError):
        RelevanceReply.model_validate({"score": 0.8, "reasoning": 3})
    with pytest.raises(ValidationError):
        RelevanceReply.model_validate({"score": 0.8})
