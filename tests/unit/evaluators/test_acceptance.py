"""The seed's acceptance tables (RagaliQ ADR-006, ADR-007, ADR-008) and Axion's faithfulness
scenarios, each run through `ragaliq.evaluate` with a scripted judge, as a user's code would.

Where our behaviour differs on purpose, the row says so and the README says why: an empty
response is never scored (ADR-006 scores it 1.0), and PARTIALLY_SUPPORTED, which the seed did
not have, counts as hallucinated (ADR-008 flags every claim that is not supported).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from typing import Any

import anthropic
import httpx2
import pytest

from ragaliq import evaluate
from ragaliq.config import JudgeConfig
from ragaliq.judges import JudgeChoice
from ragaliq.judges.claude import ClaudeJudge
from ragaliq.judges.platforms import anthropic_platform
from ragaliq.models import RunReport, Verdict
from tests.conftest import make_case, make_config
from tests.fakes.claude_sim import SHORT, tasks_of
from tests.fakes.judge import FakeJudge, Opener

S, P, N, C = (
    Verdict.SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.CONTRADICTED,
)


def judged(verdicts: list[Verdict], *, config: dict[str, Any] | None = None, **case: Any):
    """One case whose claims get ``verdicts``, judged through ``ragaliq.evaluate``."""
    claims = [f"Claim {i}." for i in range(len(verdicts))]
    judge = FakeJudge(claims={"case-1": claims}, verdicts={"case-1": verdicts})
    report = evaluate(
        [make_case(**case)], config=make_config(**(config or {})), env={}, open_judge=Opener(judge)
    )
    return report, judge


def score(report: RunReport, name: str) -> float | None:
    return report.cases[0].results[name].score


# --- ADR-006: faithfulness ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "verdicts", "expected"),
    [
        ("all claims supported", [S, S, S], 1.0),
        ("half supported", [S, S, N, C], 0.5),
        ("no claims: vacuously faithful", [], 1.0),
        ("all unsupported", [N, C, N], 0.0),
    ],
)
def test_adr_006_faithfulness_acceptance_table(row, verdicts, expected):
    report, _ = judged(verdicts)
    assert score(report, "faithfulness") == expected, row
    summary = report.summary.evaluators["faithfulness"]
    assert summary.threshold == 0.7
    assert summary.passed is (expected >= 0.7)


def test_adr_006_no_claims_carries_its_note():
    report, _ = judged([])
    assert report.cases[0].results["faithfulness"].details["note"] == "no_claims"


def test_adr_006_empty_context_is_not_enough_info_without_a_judge_call():
    report, judge = judged([S, S], context=())
    assert [c.verdict for c in report.cases[0].claims] == [N, N]
    assert judge.count("verify") == 0
    assert score(report, "faithfulness") == 0.0


@pytest.mark.parametrize("response", ["", "   \n"])
def test_adr_006_an_empty_response_is_never_scored_here_unlike_the_seed(response):
    # The seed scores an empty or whitespace response 1.0; it has nothing to judge, so no score.
    report, judge = judged([], response=response)
    result = report.cases[0].results["faithfulness"]
    assert (result.status, result.score) == ("error", None)
    assert judge.calls == []
    assert report.summary.evaluators["faithfulness"].judged == 0


def test_a_blank_field_an_evaluator_reads_is_an_error_that_names_the_field():
    report, _ = judged([], response="  ")
    assert {name: r.reasoning for name, r in report.cases[0].results.items()} == dict.fromkeys(
        ("faithfulness", "hallucination", "relevance"),
        "the case has no response to judge (an empty answer is never scored)",
    )
    report, _ = judged([], query=" ", config={"evaluators": {"context_precision": {}}})
    results = report.cases[0].results
    assert results["relevance"].reasoning == "the case has no query to judge against"
    assert results["context_precision"].reasoning == "the case has no query to judge against"
    assert results["faithfulness"].status == "ok"  # claims are judged against the context alone


def test_adr_006_a_judge_failure_is_an_error_never_a_score():
    judge = FakeJudge(fail={"case-1": RuntimeError("boom")})
    report = evaluate([make_case()], config=make_config(), env={}, open_judge=Opener(judge))
    assert {r.status for r in report.cases[0].results.values()} == {"error"}
    assert all(r.score is None for r in report.cases[0].results.values())


# --- ADR-007: relevance -------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "passed"), [(0.95, True), (0.7, True), (0.35, False)])
def test_adr_007_the_judges_score_and_reasoning_pass_through(given, passed):
    judge = FakeJudge(relevance={"case-1": given})
    report = evaluate([make_case()], config=make_config(), env={}, open_judge=Opener(judge))
    result = report.cases[0].results["relevance"]
    assert result.score == given
    assert result.reasoning == "scripted"
    assert result.passed is passed
    assert judge.count("relevance") == 1
    assert report.summary.evaluators["relevance"].threshold == 0.7


# --- ADR-008: hallucination ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdicts", "expected", "flagged"),
    [
        ([S, S, S, S], 1.0, []),
        ([S, S, S, C], 0.75, [3]),
        ([S, N, S, C], 0.5, [1, 3]),
        ([C, N], 0.0, [0, 1]),
        ([], 1.0, []),
        # Not in the seed, which had no partial verdict: partly supported is hallucinated here.
        ([S, P], 0.5, [1]),
    ],
)
def test_adr_008_hallucination_acceptance_table(verdicts, expected, flagged):
    report, _ = judged(verdicts)
    result = report.cases[0].results["hallucination"]
    assert result.score == expected
    assert list(result.flagged_claims or ()) == flagged
    summary = report.summary.evaluators["hallucination"]
    assert summary.threshold == 0.8
    assert summary.passed is (expected >= 0.8)


def test_adr_008_faithfulness_and_hallucination_share_one_extraction_and_verification():
    report, judge = judged([S, C])
    assert judge.count("extract") == 1 and judge.count("verify") == 1
    assert score(report, "faithfulness") == score(report, "hallucination") == 0.5


# --- Axion's faithfulness scenarios -------------------------------------------------------------

AXION = {"evaluators": {"faithfulness": {"preset": "axion"}}}
AXION_STRICT = {"evaluators": {"faithfulness": {"preset": "strict"}}}
AXION_CUSTOM = {
    "evaluators": {
        "faithfulness": {
            "verdict_scores": {
                "FULLY_SUPPORTED": 1.0,
                "PARTIALLY_SUPPORTED": 0.75,
                "NO_EVIDENCE": -0.5,
                "CONTRADICTORY": -2.0,
            }
        }
    }
}


@pytest.mark.parametrize(
    ("scenario", "config", "verdicts", "expected"),
    [
        ("1: perfect faithfulness", AXION, [S, S, S], 1.0),
        ("2: partial support", AXION, [S, N], 0.5),
        ("2 in strict mode: (1.0 + -1.0) / 2", AXION_STRICT, [S, N], 0.0),
        ("3: contradiction, max(0, -1.0 / 1)", AXION, [C], 0.0),
        ("weights: (1 + 0.5 + 0 - 1) / 4", AXION, [S, P, N, C], 0.125),
        ("custom weights: (1 + 1 + 1 + 0.75) / 4", AXION_CUSTOM, [S, S, S, P], 0.9375),
        ("custom weights: (1 + 1 - 0.5) / 3", AXION_CUSTOM, [S, S, N], 0.5),
        ("custom weights: (1 + 1 + 1 - 2) / 4", AXION_CUSTOM, [S, S, S, C], 0.25),
        ("custom weights, clamped: (1 + 0.75 - 0.5 - 2) / 4", AXION_CUSTOM, [S, P, N, C], 0.0),
    ],
)
def test_axions_faithfulness_scenarios(scenario, config, verdicts, expected):
    report, _ = judged(verdicts, config=config)
    assert score(report, "faithfulness") == pytest.approx(expected), scenario


def test_adr_006_an_invalid_verdict_is_asked_again_once_then_an_error_never_a_score():
    """ADR-006's row "Invalid verdict from LLM: error", through `ragaliq.evaluate`.

    Claude's replies are scripted at the wire (the SDK, the reply's validation and the re-ask
    are the real ones); every verification names a verdict that is none of ours.
    """
    asked: list[str] = []

    def reply(request: httpx2.Request) -> httpx2.Response:
        tasks = tasks_of(json.loads(request.content))
        asked.extend(tasks)
        outputs = {
            "extract": {"claims": ["Refunds take 14 days."]},
            "verify": {
                "verdicts": [
                    {
                        "index": 0,
                        "verdict": "MOSTLY_TRUE",
                        "evidence": "",
                        "chunks": [],
                        "reason": "r",
                        "confidence": 0.9,
                    }
                ]
            },
            "relevance": {"score": 0.9, "reasoning": "on topic"},
        }
        long = {short: name for name, short in SHORT.items()}
        output = outputs[tasks[0]] if len(tasks) == 1 else {long[t]: outputs[t] for t in tasks}
        message = {
            "id": f"msg_{len(asked)}",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": json.dumps(output)}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
        return httpx2.Response(200, json=message)

    def connect(timeout: float) -> anthropic.AsyncAnthropic:
        client = httpx2.AsyncClient(transport=httpx2.MockTransport(reply))
        return anthropic.AsyncAnthropic(api_key="sk-test", http_client=client, max_retries=0)

    platform = dataclasses.replace(anthropic_platform(api_key="sk-test"), connect=connect)

    @contextlib.asynccontextmanager
    async def scripted_claude(config, **_):
        judge = ClaudeJudge(JudgeConfig(max_retries=0), platform=platform)
        try:
            yield JudgeChoice(judge=judge)
        finally:
            await judge.aclose()

    report = evaluate([make_case()], config=make_config(), env={}, open_judge=scripted_claude)
    case = report.cases[0]
    for name in ("faithfulness", "hallucination"):
        result = case.results[name]
        assert (result.status, result.score, result.passed) == ("error", None, None), name
        assert "invalid twice" in result.reasoning and "verdict" in result.reasoning, (
            result.reasoning
        )
    assert case.results["relevance"].score == 0.9
    assert asked.count("verify") == 2  # asked again once, then given up
    assert report.summary.evaluators["faithfulness"].judged == 0
