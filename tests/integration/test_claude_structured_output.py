"""judge.structured_output against servers that honour it as vLLM, llama.cpp and Ollama do."""

from __future__ import annotations

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.evaluators.questions import RELEVANCE
from ragaliq.judges.claude import ClaudeJudge
from ragaliq.judges.platforms import bedrock_platform
from ragaliq.models import Verdict
from ragaliq.runner import RunSettings, run_suite
from tests.conftest import make_case
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.fakes.compatible import SERVERS, ollama_like
from tests.integration.conftest import SleepLog

CONTEXT = ("Annual plans can be refunded within 14 days of purchase.",)
RESPONSE = "Annual plans can be refunded within 14 days of purchase. Refunds are paid in cash."


def cases(n: int = 3):
    return [make_case(id=f"c{i}", context=CONTEXT, response=RESPONSE) for i in range(n)]


def suite():
    return [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]


def judge_for(fake: FakeAnthropic, mode: str) -> ClaudeJudge:
    config = JudgeConfig.model_validate(
        {"model": "open-model", "structured_output": mode, "max_retries": 0}
    )
    return ClaudeJudge(config, api_key="sk-local", base_url=fake.base_url, sleep=SleepLog())


def mode_of(body: dict) -> str:
    if "output_config" in body:
        return "schema"
    if "tools" in body:
        return "tool"
    return "prompt"


async def judged(server: str, mode: str, n: int = 3):
    with FakeAnthropic(SERVERS[server]()) as fake:
        judge = judge_for(fake, mode)
        try:
            report = await run_suite(
                cases(n), judge=judge, evaluators=suite(), settings=RunSettings(concurrency=1)
            )
        finally:
            await judge.aclose()
        return report, [r.body for r in fake.requests], judge


@pytest.mark.parametrize(
    ("server", "settled"), [("vllm", "schema"), ("llama.cpp", "tool"), ("ollama", "prompt")]
)
async def test_auto_settles_on_the_way_each_server_honours_and_keeps_it(server, settled):
    report, bodies, judge = await judged(server, "auto")
    assert report.summary.errors == 0
    assert [c.verdict for c in report.cases[0].claims] == [
        Verdict.SUPPORTED,
        Verdict.NOT_ENOUGH_INFO,
    ]
    assert report.judge.structured_output == settled
    modes = [mode_of(body) for body in bodies]
    probes = {"vllm": 0, "llama.cpp": 1, "ollama": 2}[server]
    assert modes[: probes + 1] == ["schema", "tool", "prompt"][: probes + 1]
    assert set(modes[probes + 1 :]) == {settled}  # remembered for the rest of the run
    assert len(bodies) == 3 * 2 + probes  # two calls per case, plus the probes once
    if server == "vllm":
        assert judge.notices == ()
    else:
        assert len(judge.notices) == 1
        assert f"judge.structured_output: {settled}" in judge.notices[0]


EXPECTED = {
    ("schema", "vllm"): True,
    ("schema", "llama.cpp"): False,
    ("schema", "ollama"): False,
    ("tool", "vllm"): True,
    ("tool", "llama.cpp"): True,
    ("tool", "ollama"): False,
    ("prompt", "vllm"): True,
    ("prompt", "llama.cpp"): True,
    ("prompt", "ollama"): True,
}


@pytest.mark.parametrize(("mode", "server"), list(EXPECTED))
async def test_each_mode_against_each_server(mode, server):
    report, bodies, _ = await judged(server, mode, n=1)
    assert {mode_of(body) for body in bodies} == {mode}  # a fixed mode never falls back
    assert report.judge.structured_output == mode
    case = report.cases[0]
    if EXPECTED[(mode, server)]:
        assert case.status == "ok"
        assert len(bodies) == 2
        return
    # ignored: validated, re-asked once, then an error; never a guessed verdict
    assert case.status == "error"
    assert all(r.score is None for r in case.results.values())
    assert "invalid twice" in (case.error or "")
    assert len(bodies) == 2  # the call of the claims and relevance, asked twice
    assert "Your previous reply was rejected" in str(bodies[1]["messages"][0]["content"][-1])


@pytest.mark.parametrize("server", list(SERVERS))
async def test_no_request_ever_carries_an_assistant_prefill(server):
    _, bodies, _ = await judged(server, "auto", n=2)
    for body in bodies:
        assert [m["role"] for m in body["messages"]] == ["user"]


async def test_tool_mode_forces_one_tool_with_the_reply_schema():
    _, bodies, _ = await judged("llama.cpp", "tool", n=1)
    first, verify = bodies
    assert first["tool_choice"] == {"type": "any"}
    (tool,) = first["tools"]
    assert tool["name"] == "record_answers"  # the claims and relevance, one member each
    assert tool["input_schema"]["required"] == ["extract_claims", "evaluate_relevance"]
    assert "output_config" not in first
    (tool,) = verify["tools"]
    assert tool["name"] == "record_claim_verdicts"  # a question asked alone: its own tool
    assert tool["input_schema"]["required"] == ["verdicts"]


async def test_prompt_mode_states_the_schema_and_reads_a_fenced_reply():
    report, bodies, _ = await judged("ollama", "prompt", n=1)
    assert report.summary.errors == 0
    last = bodies[0]["messages"][0]["content"][-1]["text"]
    assert "must match this JSON schema exactly" in last
    assert '"claims"' in last
    assert "tools" not in bodies[0]
    assert "output_config" not in bodies[0]


async def test_a_tool_call_with_an_invalid_answer_is_re_asked_once_then_an_error():
    bad = {"type": "tool_use", "id": "t", "name": "record_relevance", "input": {"score": 3}}
    with FakeAnthropic() as fake:
        fake.enqueue(
            Reply(content=[bad], stop_reason="tool_use"),
            Reply(content=[bad], stop_reason="tool_use"),
        )
        judge = judge_for(fake, "tool")
        answers = await judge.ask([RELEVANCE], cases(1)[0])
        await judge.aclose()
        assert answers.get(RELEVANCE) is None
        assert "invalid twice" in answers.error(RELEVANCE)
        assert len(fake.requests) == 2


async def test_auto_on_a_cloud_platform_trusts_the_schema_and_never_falls_back():
    with FakeAnthropic(ollama_like()) as fake:
        config = JudgeConfig.model_validate(
            {"provider": "bedrock", "base_url": fake.base_url, "max_retries": 0}
        )
        env = {
            "AWS_ACCESS_KEY_ID": "AKIDFAKE",
            "AWS_SECRET_ACCESS_KEY": "s",
            "AWS_REGION": "eu-west-1",
        }
        judge = ClaudeJudge(config, platform=bedrock_platform(config, env), sleep=SleepLog())
        answers = await judge.ask([RELEVANCE], cases(1)[0])
        await judge.aclose()
        assert "not valid JSON" in answers.error(RELEVANCE)
        assert [mode_of(r.body) for r in fake.requests] == ["schema", "schema"]
        assert judge.info.structured_output == "schema"


WRITTEN = {
    "SUPPORTED": "supported",
    "PARTIALLY_SUPPORTED": "Partially_Supported",
    "NOT_ENOUGH_INFO": "NO_EVIDENCE",
    "CONTRADICTED": "contradictory",
}
"""How an open model may write our verdicts: in lower case, or with Axion's names."""


@pytest.mark.parametrize(("mode", "server"), [("tool", "llama.cpp"), ("prompt", "ollama")])
async def test_a_verdict_in_another_case_or_with_axions_name_is_read_without_a_second_call(
    mode, server, monkeypatch
):
    from tests.fakes import compatible
    from tests.fakes.claude_sim import answer

    def written(body):
        output = answer(body)
        for item in output.get("verdicts", ()):
            item["verdict"] = WRITTEN[item["verdict"]]
        return output

    monkeypatch.setattr(compatible, "answer", written)
    report, bodies, _ = await judged(server, mode, n=1)
    case = report.cases[0]
    assert case.status == "ok", case.error
    assert [c.verdict for c in case.claims] == [Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO]
    assert len(bodies) == 2  # claims and relevance, then verification: nothing asked twice


async def test_a_verdict_that_is_no_verdict_is_still_re_asked_once_then_an_error(monkeypatch):
    from tests.fakes import compatible
    from tests.fakes.claude_sim import answer

    def written(body):
        output = answer(body)
        for item in output.get("verdicts", ()):
            item["verdict"] = "MOSTLY_TRUE"
        return output

    monkeypatch.setattr(compatible, "answer", written)
    report, bodies, _ = await judged("llama.cpp", "tool", n=1)
    case = report.cases[0]
    assert case.status == "error" and "invalid twice" in (case.error or "")
    assert case.results["faithfulness"].score is None
    assert case.results["hallucination"].score is None
    assert len(bodies) == 3  # the verification asked twice


def test_adr_006_a_lowercase_verdict_is_read_through_evaluate(monkeypatch):
    """ADR-006's row "Lowercase verdict from LLM: normalized", through `ragaliq.evaluate`."""
    import contextlib

    from ragaliq import evaluate
    from ragaliq.judges import JudgeChoice
    from tests.conftest import make_config
    from tests.fakes import compatible
    from tests.fakes.claude_sim import answer

    def lowercase(body):
        output = answer(body)
        for item in output.get("verdicts", ()):
            item["verdict"] = item["verdict"].lower()
        return output

    monkeypatch.setattr(compatible, "answer", lowercase)
    with FakeAnthropic(ollama_like()) as fake:

        @contextlib.asynccontextmanager
        async def claude(config, **_):
            judge = judge_for(fake, "prompt")  # built in evaluate's loop, closed in it
            try:
                yield JudgeChoice(judge=judge)
            finally:
                await judge.aclose()

        report = evaluate(cases(1), config=make_config(), env={}, open_judge=claude)
        assert len(fake.requests) == 2
    (case,) = report.cases
    assert case.status == "ok"
    assert [c.verdict for c in case.claims] == [Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO]
    assert case.results["faithfulness"].score == 0.5


async def test_no_evidence_written_as_null_is_no_quote_not_a_second_call(monkeypatch):
    from tests.fakes import compatible
    from tests.fakes.claude_sim import answer

    def null_evidence(body):
        output = answer(body)
        for item in output.get("verdicts", ()):
            if item["verdict"] != "SUPPORTED":
                item["evidence"] = None  # no quote backs it
        return output

    monkeypatch.setattr(compatible, "answer", null_evidence)
    report, bodies, _ = await judged("ollama", "prompt", n=1)
    case = report.cases[0]
    assert case.status == "ok", case.error
    assert [c.verdict for c in case.claims] == [Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO]
    assert not case.claims[1].evidence
    assert len(bodies) == 2


async def test_a_null_reason_and_a_hyphenated_verdict_are_read_without_a_second_call(monkeypatch):
    from tests.fakes import compatible
    from tests.fakes.claude_sim import answer

    def loosely_written(body):
        output = answer(body)
        for part in (output, *(v for v in output.values() if isinstance(v, dict))):
            for item in part.get("verdicts", ()):
                item["verdict"] = item["verdict"].lower().replace("_", "-")
                item["reason"] = None
            if "reasoning" in part:  # the relevance, alone or as a member of a composed reply
                part["reasoning"] = None
        return output

    monkeypatch.setattr(compatible, "answer", loosely_written)
    report, bodies, _ = await judged("ollama", "prompt", n=1)
    case = report.cases[0]
    assert case.status == "ok", case.error
    assert [c.verdict for c in case.claims] == [Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO]
    assert [c.reason for c in case.claims] == ["", ""]
    assert case.results["relevance"].status == "ok"
    assert case.results["relevance"].reasoning == ""
    assert len(bodies) == 2  # claims and relevance, then verification: nothing asked twice
