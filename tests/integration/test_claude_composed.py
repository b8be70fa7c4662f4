"""Composed replies: every question a case needs, asked in one call per part of the case read.

Each broken answer (a member left out, a verdict missing for one claim, a chunk left unrated,
chunks that do not exist, a refusal) is asked again, that question alone where the rest of the
reply stands, and stays an error of its case when it is broken again: never a guessed score.
Every test runs both ways: questions asked together, and each in its own call
(``judge.one_question_per_call``), which must pass the same tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.evaluators.questions import CHUNKS, EXTRACT, FACTS, RELEVANCE, VERIFY
from ragaliq.runner import run_suite
from tests.conftest import every_evaluator, make_case
from tests.fakes.anthropic_server import Reply
from tests.fakes.claude_sim import SHORT, answer, request_text, system_text, tasks_of
from tests.integration.test_claude_judge import CONTEXT, RESPONSE

LONG = {short: name for name, short in SHORT.items()}
CITED = RESPONSE.replace(" purchase.", " purchase [1].").replace(" storage.", " storage [2].")
"""The response, citing the chunks two of its sentences come from."""
REJECTED = "Your previous reply was rejected"


def case(**overrides: Any):
    values = {
        "context": CONTEXT,
        "response": CITED,
        "query": "Can I get a refund on the Business plan?",
        "expected_facts": ("Annual plans can be refunded within 14 days.",),
    }
    values.update(overrides)
    return make_case(**values)


NEEDS = {
    "extract": ("faithfulness", "hallucination", "citation_accuracy"),
    "verify": ("faithfulness", "hallucination", "citation_accuracy"),
    "relevance": ("relevance",),
    "chunks": ("context_precision",),
    "facts": ("context_recall",),
}
"""The evaluators whose score rests on each task."""


def spoiling(task: str, spoil: Callable[[dict[str, Any]], Any], times: int = 1):
    """The simulated answers, with ``task``'s spoiled the first ``times`` it is asked.

    ``spoil`` gets the task's own answer and returns it spoiled, ``None`` to leave it out, or a
    ``Reply`` that stands for the whole reply (a refusal).
    """
    left = [times]

    def respond(body: dict[str, Any]) -> Reply:
        reply = answer(body)
        tasks = tasks_of(body)
        if task not in tasks or not left[0]:
            return Reply(json_output=reply)
        left[0] -= 1
        together = len(tasks) > 1
        spoiled = spoil(reply[LONG[task]] if together else reply)
        if isinstance(spoiled, Reply):
            return spoiled
        if together and spoiled is None:
            del reply[LONG[task]]
        elif together:
            reply[LONG[task]] = spoiled
        else:
            reply = spoiled if spoiled is not None else {}
        return Reply(json_output=reply)

    return respond


def said(problem: str | tuple[str, ...], text: str) -> bool:
    """Whether ``text`` states the problem (in one of its wordings: together, or apart)."""
    return any(p in text for p in ((problem,) if isinstance(problem, str) else problem))


def drop_second_verdict(part):
    return {"verdicts": [v for v in part["verdicts"] if v["index"] != 1]}


def drop_first_rating(part):
    return {"chunks": part["chunks"][1:]}


def cite_missing_chunk(part):
    first, *rest = part["verdicts"]
    return {"verdicts": [{**first, "chunks": [7]}, *rest]}


def refuse(part):
    return Reply(text="", stop_reason="refusal")


def leave_out(part):
    return None


SPOILS = [
    pytest.param(
        "relevance",
        leave_out,
        ("the reply has no member evaluate_relevance", "score: Field required"),
        id="a part missing",
    ),
    pytest.param("verify", drop_second_verdict, "no verdict for claim 1", id="a verdict missing"),
    pytest.param("chunks", drop_first_rating, "no rating for chunk 1", id="a rating missing"),
    pytest.param(
        "verify",
        cite_missing_chunk,
        "the verdict for claim 0 names chunk 7, which does not exist",
        id="chunks that do not exist",
    ),
    pytest.param("facts", refuse, "the model refused to answer", id="a refusal"),
]


@pytest.fixture(params=[False, True], ids=["together", "apart"])
def apart(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


async def test_every_judged_evaluator_costs_two_calls_asked_together(
    make_judge, fake_anthropic, apart
):
    judge = make_judge(one_question_per_call=apart)
    report = await run_suite([case()], judge=judge, evaluators=every_evaluator())
    await judge.aclose()
    asked = [tasks_of(r.body) for r in fake_anthropic.requests]
    if apart:
        assert sorted(asked) == sorted((t,) for t in NEEDS)
    else:
        assert asked == [("extract", "relevance"), ("verify", "chunks", "facts")]
    result = report.cases[0]
    assert result.status == "ok"
    assert all(r.status == "ok" and r.score is not None for r in result.results.values())
    assert [f.chunks for f in result.facts] == [(1,)]


async def test_the_context_goes_first_and_each_block_once(make_judge, fake_anthropic):
    judge = make_judge()
    await run_suite([case()], judge=judge, evaluators=every_evaluator())
    await judge.aclose()
    first, second = (r.body for r in fake_anthropic.requests)
    assert "<context>" not in request_text(first)
    content = second["messages"][0]["content"]
    assert content[0]["text"].startswith("<context>")
    asked = content[1]["text"]
    assert asked.count("<query>") == 1 and "<response>" not in asked
    assert "<claims>" in asked and "<facts>" in asked
    system = system_text(second)
    assert system.count("Verdict fields, for every item") == 1  # shared by two questions, once
    schema = second["output_config"]["format"]["schema"]
    assert set(schema["properties"]) == {"verify_claims", "verify_facts", "rate_chunks"}


@pytest.mark.parametrize(("task", "spoil", "problem"), SPOILS)
async def test_a_broken_answer_is_asked_again_alone(
    make_judge, fake_anthropic, apart, task, spoil, problem
):
    fake_anthropic.responder = spoiling(task, spoil)
    judge = make_judge(one_question_per_call=apart)
    report = await run_suite([case()], judge=judge, evaluators=every_evaluator())
    await judge.aclose()
    reasks = [r.body for r in fake_anthropic.requests if REJECTED in request_text(r.body)]
    assert len(reasks) == 1
    reasked = tasks_of(reasks[0])
    if task == "facts" and not apart:  # a refusal refuses the whole call: all of it again
        assert reasked == ("verify", "chunks", "facts")
    else:
        assert reasked == (task,)
    assert said(problem, request_text(reasks[0]))
    assert fake_anthropic.count() == (5 if apart else 2) + 1
    result = report.cases[0]
    assert result.status == "ok"
    assert all(r.score is not None for r in result.results.values())


@pytest.mark.parametrize(("task", "spoil", "problem"), SPOILS)
async def test_a_answer_broken_twice_is_an_error_of_its_case_never_a_score(
    make_judge, fake_anthropic, apart, task, spoil, problem
):
    fake_anthropic.responder = spoiling(task, spoil, times=2)
    judge = make_judge(one_question_per_call=apart)
    report = await run_suite([case()], judge=judge, evaluators=every_evaluator())
    await judge.aclose()
    result = report.cases[0]
    assert result.status == "error"
    assert "invalid twice" in (result.error or "")
    assert said(problem, result.error or "")
    refused_call = task == "facts" and not apart
    failed = {"verify", "facts", "chunks"} if refused_call else {task}
    for name, evaluation in result.results.items():
        if any(name in NEEDS[t] for t in failed):
            assert evaluation.status == "error" and evaluation.score is None
        else:
            assert evaluation.status == "ok" and evaluation.score is not None
    if "verify" in failed:
        assert result.claims == ()  # no verdict stands in for the missing ones


async def test_more_claims_than_one_call_takes_go_in_calls_of_their_own(
    make_judge, fake_anthropic, apart
):
    sentences = [f"Annual plans can be refunded within 14 days, says note {i}." for i in range(5)]
    judge = make_judge(one_question_per_call=apart, claims_per_call=2)
    report = await run_suite(
        [case(response=" ".join(sentences))], judge=judge, evaluators=every_evaluator()
    )
    await judge.aclose()
    asked = [tasks_of(r.body) for r in fake_anthropic.requests]
    if apart:
        assert asked.count(("verify",)) == 3 and len(asked) == 7
    else:
        assert asked == [
            ("extract", "relevance"),
            ("verify", "chunks", "facts"),
            ("verify",),
            ("verify",),
        ]
    assert [c.text for c in report.cases[0].claims] == sentences


async def test_a_case_whose_context_alone_changed_asks_only_the_context_call(
    make_judge, fake_anthropic, tmp_path
):
    from ragaliq.judges.cache import CachedJudge

    path = tmp_path / "cache.sqlite"
    first = CachedJudge(make_judge(), path, secret="sk-ant-cache")
    await run_suite([case()], judge=first, evaluators=every_evaluator())
    await first.aclose()
    changed = case(context=(*CONTEXT, "Support answers by email within one business day."))
    again = CachedJudge(make_judge(), path, secret="sk-ant-cache")
    report = await run_suite([changed], judge=again, evaluators=every_evaluator())
    await again.aclose()
    asked = [tasks_of(r.body) for r in fake_anthropic.requests]
    assert asked[2:] == [("verify", "chunks", "facts")]
    assert report.usage.calls == 1
    assert report.usage.cache_hits == 2  # the claims and the relevance


async def test_each_answer_is_cached_on_its_own(make_judge, fake_anthropic, tmp_path):
    from ragaliq.judges.cache import CachedJudge

    path = tmp_path / "cache.sqlite"
    three = [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]
    first = CachedJudge(make_judge(), path, secret="sk-ant-cache")
    await run_suite([case()], judge=first, evaluators=three)
    await first.aclose()
    again = CachedJudge(make_judge(), path, secret="sk-ant-cache")
    report = await run_suite([case()], judge=again, evaluators=every_evaluator())
    await again.aclose()
    asked = [tasks_of(r.body) for r in fake_anthropic.requests]
    assert asked[2:] == [("chunks", "facts")]  # only what the first run did not ask
    assert report.usage.cache_hits == 3
    assert {q.name for q in (EXTRACT, VERIFY, RELEVANCE, FACTS, CHUNKS)} == set(LONG.values())
