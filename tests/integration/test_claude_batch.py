"""Batched runs against the fake Message Batches API: rounds, half price, retries, resuming."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import anthropic
import pytest

from ragaliq.config import JudgeConfig
from ragaliq.errors import JudgeUnavailableError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.judges.batch import POLL_FIRST_S, custom_id
from ragaliq.judges.cache import CachedJudge
from ragaliq.judges.claude import ClaudeJudge
from ragaliq.runner import RunSettings, run_suite
from tests.conftest import make_case
from tests.fakes.anthropic_server import Expire, FakeAnthropic, Fault
from tests.fakes.claude_sim import claude_like, task_of, tasks_of
from tests.fakes.sleeps import SleepLog

CONTEXT = (
    "Annual plans can be refunded within 14 days of purchase. Monthly plans are not refundable.",
    "The Business plan costs $12 per user per month and includes 2 TB of storage.",
)


def cases(n: int = 4):
    return [
        make_case(
            id=f"c{i}",
            context=CONTEXT,
            response=f"Annual plans can be refunded within 14 days. Case {i} has phone support.",
        )
        for i in range(n)
    ]


def suite():
    return [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]


def make(fake, sleeps=None, *, batch=True, state=None, **config):
    values = {"structured_output": "schema", "max_retries": 2, "batch": batch, **config}
    judge_config = JudgeConfig.model_validate(values)
    judge = ClaudeJudge(
        judge_config,
        api_key="sk-ant-test",
        base_url=fake.base_url,
        batch_state=state,
        sleep=(sleeps or SleepLog()).wait,
    )
    return judge, RunSettings(concurrency=judge_config.requests_in_flight)


async def run(fake, n=4, **kwargs):
    judge, settings = make(fake, **kwargs)
    try:
        return await run_suite(cases(n), judge=judge, evaluators=suite(), settings=settings), judge
    finally:
        await judge.aclose()


async def test_a_batched_run_is_two_rounds_at_half_the_price_with_the_same_verdicts():
    with FakeAnthropic(claude_like()) as live, FakeAnthropic(claude_like()) as batched:
        interactive, _ = await run(live, batch=False)
        report, judge = await run(batched)
        assert live.batches.requests() == 0
        assert batched.count() == 0  # nothing went to /v1/messages
    assert len(batched.batches.created) == 2  # claims and relevance, then verification
    first, second = batched.batches.created.values()
    assert {task_of(p) for p in first.params.values()} == {"extract+relevance"}
    assert {task_of(p) for p in second.params.values()} == {"verify"}
    assert report.summary.errors == 0
    assert [c.claims for c in report.cases] == [c.claims for c in interactive.cases]
    assert report.summary == interactive.summary
    usage, full = report.usage, interactive.usage
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (
        full.calls,
        full.input_tokens,
        full.output_tokens,
    )
    assert usage.cost_usd == pytest.approx(full.cost_usd / 2, rel=1e-6)
    assert "every token at half price" in judge.notices[0]


async def test_custom_ids_are_content_hashes_and_identical_requests_go_once():
    with FakeAnthropic(claude_like()) as fake:
        same = [make_case(id=f"d{i}", context=CONTEXT, response="Annual refunds.") for i in (1, 2)]
        judge, settings = make(fake)
        report = await run_suite(same, judge=judge, evaluators=suite(), settings=settings)
        await judge.aclose()
    batch = next(iter(fake.batches.created.values()))
    assert len(batch.params) == 1  # one call of the claims and relevance, for both cases
    for cid, params in batch.params.items():
        assert cid == custom_id(params)
    assert report.usage.calls == 2  # the shared answers are paid for once
    assert report.summary.errors == 0


async def test_a_batch_in_progress_is_polled_with_growing_pauses():
    sleeps = SleepLog()
    with FakeAnthropic(claude_like()) as fake:
        fake.batches.polls = 4
        report, _ = await run(fake, n=1, sleeps=sleeps, batch_poll_s=10.0)
    assert report.summary.errors == 0
    first_round = sleeps.delays[:4]
    assert first_round == [POLL_FIRST_S, 7.5, 10.0, 10.0]  # x1.5 each time, up to batch_poll_s


async def test_errored_requests_are_retried_and_expired_ones_are_case_errors():
    def flaky(body):
        text = json.dumps(body)
        if "relevance" in tasks_of(body) and "Case 1 " in text:
            return Fault(529)  # overloaded: sent again in the next round
        if "relevance" in tasks_of(body) and "Case 2 " in text:
            return Expire()
        if "relevance" in tasks_of(body) and "Case 3 " in text:
            return Fault(400, message="prompt is too long")
        return claude_like()(body)

    with FakeAnthropic() as fake:
        calls = {"n": 0}

        def once_flaky(body):
            calls["n"] += 1
            answer = flaky(body)
            if isinstance(answer, Fault) and answer.status == 529 and calls.get("retried"):
                return claude_like()(body)
            if isinstance(answer, Fault) and answer.status == 529:
                calls["retried"] = True
            return answer

        fake.responder = once_flaky
        report, _ = await run(fake)
    by_id = {c.id: c for c in report.cases}
    assert by_id["c0"].status == "ok"
    assert by_id["c1"].status == "ok"  # retried in a later round
    assert by_id["c2"].status == "error"
    assert "expired" in (by_id["c2"].error or "")
    assert by_id["c2"].results["relevance"].score is None  # never a guessed score
    assert by_id["c3"].status == "error"
    assert "prompt is too long" in (by_id["c3"].error or "")
    second = list(fake.batches.created.values())[1]
    retried = [p for p in second.params.values() if "relevance" in tasks_of(p)]
    assert len(retried) == 1  # sent again with the verification round
    assert "Case 1 " in json.dumps(retried[0])


async def test_a_canceled_batch_is_sent_again():
    with FakeAnthropic(claude_like()) as fake:
        fake.batches.polls = 1000
        judge, settings = make(fake)
        task = asyncio.create_task(
            run_suite(cases(2), judge=judge, evaluators=suite(), settings=settings)
        )
        while not fake.batches.created:
            await asyncio.sleep(0.01)
        client = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url)
        await client.messages.batches.cancel(next(iter(fake.batches.created)))
        await client.close()
        fake.batches.polls = 0
        report = await task
        await judge.aclose()
    assert report.summary.errors == 0
    assert len(fake.batches.created) == 3  # canceled, sent again, then verification


async def test_an_interrupted_run_resumes_from_its_recorded_batches_without_paying_twice(tmp_path):
    state = tmp_path / "cache.sqlite.batches.json"
    with FakeAnthropic(claude_like()) as fake:
        fake.batches.polls = 1000  # the first batch is still in progress when the run stops
        judge, settings = make(fake, state=state)
        task = asyncio.create_task(
            run_suite(cases(3), judge=judge, evaluators=suite(), settings=settings)
        )
        while not state.exists():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await judge.aclose()
        recorded = json.loads(state.read_text())["batches"]
        assert [b["id"] for b in recorded] == list(fake.batches.created)

        fake.batches.polls = 0
        report, again = await run(fake, n=3, state=state)
        assert report.summary.errors == 0
        sent = fake.batches.requests()
    assert len(fake.batches.created) == 2  # round one was collected, not sent again
    assert sent == 3 * 2  # every request paid for once: 3 of claims and relevance, 3 checks
    assert report.usage.calls == 6  # the collected answers still count in this run's cost
    assert "collected from batches an earlier, interrupted run sent" in again.notices[0]
    assert not state.exists()  # everything collected: nothing left to resume


async def test_a_batched_run_fills_the_cache_for_the_next_run(tmp_path):
    path = tmp_path / "cache.sqlite"
    with FakeAnthropic(claude_like()) as fake:
        judge, settings = make(fake, state=tmp_path / "state.json")
        cached = CachedJudge(judge, path, secret="sk-ant-test")
        await run_suite(cases(2), judge=cached, evaluators=suite(), settings=settings)
        await cached.aclose()
        judge, settings = make(fake)
        cached = CachedJudge(judge, path, secret="sk-ant-test")
        report = await run_suite(cases(2), judge=cached, evaluators=suite(), settings=settings)
        await cached.aclose()
    assert report.usage.calls == 0
    assert report.usage.cache_hits == 6
    assert len(fake.batches.created) == 2


async def test_a_rejected_key_on_the_batch_endpoint_stops_the_run():
    with FakeAnthropic(claude_like(), api_key="the-right-key") as fake:
        judge, settings = make(fake)
        with pytest.raises(JudgeUnavailableError, match="refused to send a batch"):
            await run_suite(cases(2), judge=judge, evaluators=suite(), settings=settings)
        await judge.aclose()


async def test_the_batch_endpoint_is_retried_on_overload():
    with FakeAnthropic(claude_like()) as fake:
        fake.enqueue()  # nothing scripted: the responder answers
        original = fake.batches._create
        failures = iter([529, 529])

        def create(body):
            from tests.fakes.anthropic_server import _error_outcome

            status = next(failures, None)
            return original(body) if status is None else _error_outcome(status, "overloaded")

        fake.batches._create = create
        report, _ = await run(fake, n=1)
    assert report.summary.errors == 0
    assert [r.status for r in fake.requests[:3]] == [529, 529, 200]


async def test_the_batch_endpoint_waits_as_long_as_retry_after_ms_asks():
    sleeps = SleepLog()
    with FakeAnthropic(claude_like()) as fake:
        original = fake.batches._create
        limited = iter([True])

        def create(body):
            from tests.fakes.anthropic_server import _error_outcome

            if next(limited, False):
                refused = _error_outcome(429, "rate limited")
                refused.headers["retry-after-ms"] = "1500"
                return refused
            return original(body)

        fake.batches._create = create
        report, _ = await run(fake, n=1, sleeps=sleeps)
    assert report.summary.errors == 0
    assert [r.status for r in fake.requests[:2]] == [429, 200]
    assert sleeps.delays[0] == pytest.approx(1.5, abs=0.2)  # the server's delay, not backoff


async def test_results_that_cannot_be_read_stop_the_run_instead_of_hanging():
    with FakeAnthropic(claude_like()) as fake:
        answer = fake.batches.answer

        def garbled(request, batch, *, valid_json):
            from tests.fakes.anthropic_server import _Outcome

            if batch[1] == "results":
                return _Outcome(status=200, raw=b"{not json\n", content_type="application/binary")
            return answer(request, batch, valid_json=valid_json)

        fake.batches.answer = garbled
        judge, settings = make(fake)
        with pytest.raises(JudgeUnavailableError, match="collector failed"):
            await asyncio.wait_for(
                run_suite(cases(2), judge=judge, evaluators=suite(), settings=settings), 60
            )
        await judge.aclose()


async def test_a_batched_run_confirms_the_claims_that_would_fail_in_a_batch_of_its_own():
    def held_against(case):
        return tuple(i for i, c in enumerate(case.claims) if c.verdict.value != "SUPPORTED")

    with FakeAnthropic(claude_like()) as batched:
        judge, settings = make(batched)
        settings = dataclasses.replace(settings, confirm=held_against)
        try:
            report = await run_suite(cases(), judge=judge, evaluators=suite(), settings=settings)
        finally:
            await judge.aclose()
    assert len(batched.batches.created) == 3  # claims, verification, then the confirmations
    *_, third = batched.batches.created.values()
    assert {task_of(p) for p in third.params.values()} == {"verify"}
    assert len(third.params) == 4  # one confirming request per case
    flagged = [c for case in report.cases for c in case.claims if c.asked]
    assert len(flagged) == 4 and all(len(c.asked) == 2 for c in flagged)
    assert report.usage.calls == 12
