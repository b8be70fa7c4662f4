from __future__ import annotations

import asyncio

import pytest

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.evaluators.questions import VERIFY
from ragaliq.models import Usage, Verdict
from ragaliq.runner import RunSettings, run_suite
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge

S, N = Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO


def suite():
    return [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]


async def test_claims_are_extracted_and_verified_once_per_case():
    cases = [make_case(id=f"c{i}") for i in range(5)]
    judge = FakeJudge()
    report = await run_suite(cases, judge=judge, evaluators=suite())
    assert judge.count("extract") == 5
    assert judge.count("verify") == 5
    assert judge.count("relevance") == 5
    assert report.summary.cases == 5
    assert all(
        set(c.results) == {"faithfulness", "hallucination", "relevance"} for c in report.cases
    )


async def test_empty_context_means_not_enough_info_without_a_verify_call():
    case = make_case(context=("", "   "))
    judge = FakeJudge(claims={"case-1": ["one", "two"]})
    report = await run_suite([case], judge=judge, evaluators=suite())
    assert judge.count("verify") == 0
    verdicts = [c.verdict for c in report.cases[0].claims]
    assert verdicts == [N, N]
    assert report.cases[0].results["faithfulness"].score == 0.0


async def test_no_claims_skips_verification():
    judge = FakeJudge(claims={"case-1": []})
    report = await run_suite([make_case()], judge=judge, evaluators=suite())
    assert judge.count("verify") == 0
    assert report.cases[0].results["faithfulness"].details["note"] == "no_claims"


async def test_a_failing_case_is_an_error_result_and_the_run_goes_on():
    cases = [make_case(id="good"), make_case(id="bad"), make_case(id="also-good")]
    judge = FakeJudge(
        fail={"bad": JudgeError("the judge replied twice without a verdict for claim 2")},
        verdicts={"good": [S], "also-good": [N]},
    )
    report = await run_suite(cases, judge=judge, evaluators=suite())
    bad = next(c for c in report.cases if c.id == "bad")
    assert bad.status == "error"
    assert "claim 2" in (bad.error or "")
    for result in bad.results.values():
        assert result.status == "error"
        assert result.score is None
        assert result.passed is None
    faith = report.summary.evaluators["faithfulness"]
    # the error is excluded from the mean: (1.0 + 0.0) / 2, not (1.0 + 0.0 + 0) / 3
    assert faith.score == pytest.approx(0.5)
    assert faith.judged == 2
    assert faith.errors == 1
    assert report.summary.errors == 1


async def test_a_case_with_an_error_is_left_out_of_every_mean_relevance_included():
    def claims_fail(op: str, case) -> None:
        if op == "verify" and case.id == "bad":
            raise JudgeError("the verification failed")

    cases = [make_case(id="good"), make_case(id="bad")]
    judge = FakeJudge(relevance={"good": 1.0, "bad": 0.2}, on_call=claims_fail)
    report = await run_suite(cases, judge=judge, evaluators=suite())
    bad = next(c for c in report.cases if c.id == "bad")
    assert bad.status == "error"
    assert bad.results["relevance"].score == pytest.approx(0.2)  # judged, but not counted
    relevance = report.summary.evaluators["relevance"]
    assert relevance.score == pytest.approx(1.0)
    assert relevance.judged == 1


async def test_an_unexpected_exception_in_one_case_is_recorded_not_raised():
    judge = FakeJudge(fail={"boom": KeyError("oops")})
    report = await run_suite(
        [make_case(id="boom"), make_case(id="fine")], judge=judge, evaluators=suite()
    )
    boom = next(c for c in report.cases if c.id == "boom")
    assert boom.status == "error"
    assert "KeyError" in (boom.error or "")
    assert next(c for c in report.cases if c.id == "fine").status == "ok"


async def test_relevance_survives_a_claims_failure_in_the_same_case():
    class ClaimsFail(FakeJudge):
        async def extract_claims(self, case):
            raise JudgeError("extraction failed")

    report = await run_suite([make_case()], judge=ClaimsFail(), evaluators=suite())
    results = report.cases[0].results
    assert results["faithfulness"].status == "error"
    assert results["relevance"].status == "ok"
    assert report.cases[0].status == "error"


async def test_an_unusable_judge_stops_the_run():
    judge = FakeJudge(fail={f"c{i}": JudgeUnavailableError("bad key") for i in range(50)})
    with pytest.raises(JudgeUnavailableError, match="bad key"):
        await run_suite(
            [make_case(id=f"c{i}") for i in range(50)],
            judge=judge,
            evaluators=suite(),
            settings=RunSettings(concurrency=2),
        )
    # Two workers per request slot start one case each, and a case asks for its claims and its
    # relevance at once: at most 4 cases x 2 calls before the stop, where a runner that went on
    # would make 100.
    assert len(judge.calls) <= 4 * 2


async def test_usage_is_summed_over_every_call():
    judge = FakeJudge(
        usage_per_call=Usage(calls=1, input_tokens=10, output_tokens=2, cost_usd=0.01)
    )
    report = await run_suite(
        [make_case(id=f"c{i}") for i in range(4)], judge=judge, evaluators=suite()
    )
    assert report.usage.calls == 12
    assert report.usage.input_tokens == 120
    assert report.usage.output_tokens == 24
    assert report.usage.cost_usd == pytest.approx(0.12)


async def test_only_what_the_evaluators_need_is_asked():
    judge = FakeJudge()
    await run_suite([make_case()], judge=judge, evaluators=[RelevanceEvaluator()])
    assert [op for op, _ in judge.calls] == ["relevance"]


async def test_concurrency_is_bounded():
    in_flight = 0
    peak = 0

    class Slow(FakeJudge):
        async def evaluate_relevance(self, case):
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.001)
            in_flight -= 1
            return await super().evaluate_relevance(case)

    await run_suite(
        [make_case(id=f"c{i}") for i in range(30)],
        judge=Slow(),
        evaluators=[RelevanceEvaluator()],
        settings=RunSettings(concurrency=3),
    )
    assert 1 <= peak <= 3


async def test_cases_keep_their_dataset_order():
    judge = FakeJudge()
    ids = [f"c{i}" for i in range(20)]
    report = await run_suite([make_case(id=i) for i in ids], judge=judge, evaluators=suite())
    assert [c.id for c in report.cases] == ids


async def run_on_budget(judge: FakeJudge, *, concurrency: int, budget_usd: float):
    return await run_suite(
        [make_case(id=f"c{i}") for i in range(20)],
        judge=judge,
        evaluators=suite(),
        settings=RunSettings(concurrency=concurrency, budget_usd=budget_usd),
    )


async def test_budget_stops_scheduling_new_cases():
    judge = FakeJudge(usage_per_call=Usage(calls=1, cost_usd=0.01))
    report = await run_on_budget(judge, concurrency=1, budget_usd=0.1)
    assert report.stopped_early is not None
    assert report.usage.cost_usd <= 0.1 + 1e-9
    skipped = [c for c in report.cases if c.status == "skipped"]
    assert skipped
    assert len(report.cases) == 20


def test_heuristic_judges_are_named_in_the_notices(tmp_path):
    from ragaliq.config import JudgeConfig
    from ragaliq.judges import build_judge

    for provider, env in (("offline", {"ANTHROPIC_API_KEY": "k"}), ("auto", {})):
        choice = build_judge(
            JudgeConfig(provider=provider), env=env, cache_path=tmp_path / "cache.sqlite"
        )
        assert choice.judge.info.heuristic is True
        assert any("heuristic" in n for n in choice.notices)


async def test_a_free_first_case_does_not_let_paid_cases_start_all_at_once():
    # c0 costs nothing (a cache hit); the budget estimate must wait for a case that cost money.
    judge = FakeJudge(usage_per_call=Usage(calls=1, cost_usd=1.0), free={"c0"}, pause=0.01)
    report = await run_on_budget(judge, concurrency=4, budget_usd=4.0)
    assert report.stopped_early is not None
    # A paid case costs 3.0 (extract, verify, relevance): one fits the budget, a second would not.
    assert report.usage.cost_usd == 3.0


async def test_the_offline_judge_over_processes_gives_what_one_process_gives():
    from pathlib import Path

    from ragaliq.dataset import load_dataset
    from ragaliq.offline import OfflineJudge
    from ragaliq.runner import MIN_CASES_FOR_PROCESSES, stream_suite

    quickstart = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
    base = load_dataset(quickstart / "rag_outputs.jsonl") + load_dataset(
        quickstart / "rag_outputs_pr.jsonl"
    )
    cases = [
        base[i % len(base)].model_copy(update={"id": f"case-{i}"})
        for i in range(MIN_CASES_FOR_PROCESSES + 30)
    ]
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]
    runs: dict[int, list] = {}
    for processes in (1, 2):
        results: list = []
        progress: list = []
        await stream_suite(
            cases,
            judge=OfflineJudge(),
            evaluators=evaluators,
            on_case=results.append,
            settings=RunSettings(processes=processes, on_progress=progress.append),
            total=len(cases),
        )
        assert progress[-1].done == len(cases)
        runs[processes] = results
    assert [r.id for r in runs[2]] == [c.id for c in cases]
    assert runs[2] == runs[1]


@pytest.mark.parametrize("response", ["\u200b", " \ufeff\u2060 "])
def test_an_answer_of_invisible_characters_is_never_scored(response):
    from ragaliq import evaluate
    from tests.conftest import make_config

    config = make_config(judge={"provider": "offline", "cache": False})
    case = make_case(response=response)
    report = evaluate([case], config=config, env={})
    for name in ("faithfulness", "hallucination", "relevance"):
        result = report.cases[0].results[name]
        assert (result.status, result.score) == ("error", None), name
        assert "the case has no response to judge" in result.reasoning


def test_an_empty_answer_is_never_scored_and_costs_no_call_through_evaluate():
    from ragaliq import evaluate
    from tests.conftest import make_config
    from tests.fakes.judge import Opener

    judge = FakeJudge()
    cases = [
        make_case(id="empty", response="", expected_facts=("Refunds take 14 days.",)),
        make_case(id="blank-query", query="  "),
    ]
    config = make_config(evaluators={"context_recall": {}, "context_precision": {}})
    report = evaluate(cases, config=config, env={}, open_judge=Opener(judge))
    empty, blank = report.cases
    for name in ("faithfulness", "hallucination", "relevance"):
        result = empty.results[name]
        assert (result.status, result.score) == ("error", None)
        assert "the case has no response to judge" in result.reasoning
    assert empty.results["context_recall"].score == 1.0  # the fact, verified against the context
    assert empty.status == "error"
    assert ("extract", "empty") not in judge.calls and ("relevance", "empty") not in judge.calls
    for name in ("relevance", "context_precision"):
        assert blank.results[name].status == "error"
        assert "the case has no query" in blank.results[name].reasoning
    assert blank.results["faithfulness"].score == 1.0
    assert ("relevance", "blank-query") not in judge.calls
    assert ("chunks", "blank-query") not in judge.calls
    assert report.summary.errors == 2


class EstimatingJudge(FakeJudge):
    """A fake judge that says what a verification would take: 1,000 tokens a claim."""

    def estimate(self, questions, case, *, claims=(), sample=0):
        if VERIFY not in questions:
            return Usage(calls=1, input_tokens=100)
        return Usage(calls=1, input_tokens=1_000 * len(claims), cost_usd=0.01 * len(claims))

    def planned_claims(self, case):
        return None


@pytest.mark.parametrize(("tokens", "usd"), [(100_000, None), (None, 1.0)], ids=["tokens", "usd"])
async def test_a_case_whose_claims_would_pass_the_budget_per_case_is_an_error_before_verifying(
    tokens, usd
):
    many = [f"Claim {i}." for i in range(150)]  # 150,000 tokens and $1.50 to verify
    judge = EstimatingJudge(claims={"big": many})
    cases = [make_case(id="big"), make_case(id="small")]
    settings = RunSettings(case_tokens=tokens, case_usd=usd)
    report = await run_suite(cases, judge=judge, evaluators=suite(), settings=settings)
    big, small = report.cases
    assert ("verify", "big") not in judge.calls
    assert big.status == "error"
    assert "over the gate's budget per case" in (big.error or "")
    assert "verifying its 150 claims" in (big.error or "")
    assert big.results["faithfulness"].score is None  # an error, never a score
    assert big.results["relevance"].score == 1.0  # the other passes are still judged
    assert small.status == "ok" and ("verify", "small") in judge.calls


async def test_a_case_within_its_budget_is_verified():
    judge = EstimatingJudge(claims={"c": [f"Claim {i}." for i in range(10)]})
    settings = RunSettings(case_tokens=100_000, case_usd=1.0)
    report = await run_suite(
        [make_case(id="c")], judge=judge, evaluators=suite(), settings=settings
    )
    assert report.cases[0].status == "ok"
    assert ("verify", "c") in judge.calls


def test_a_gates_budget_bounds_each_case_of_its_run():
    from ragaliq.config import JudgeConfig
    from ragaliq.judging import run_settings
    from ragaliq.policy import Budget

    settings = run_settings(JudgeConfig(), budget=Budget(case_tokens=5_000, case_usd=0.5))
    assert (settings.case_tokens, settings.case_usd) == (5_000, 0.5)
    assert run_settings(JudgeConfig()).case_tokens is None  # a plain run has no gate budget
