from __future__ import annotations

import sqlite3
import threading

from ragaliq.errors import JudgeError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.evaluators.questions import EXTRACT, VERIFY
from ragaliq.judges.answers import TABLE, UNSIGNED_WARNING
from ragaliq.judges.cache import CachedJudge
from ragaliq.models import ClaimVerdict, Usage, Verdict, VerificationResult
from ragaliq.runner import run_suite
from tests.conftest import make_case
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like
from tests.fakes.judge import FakeJudge

KEY = "sk-ant-cache-signing"
CONTEXT = ("Annual plans can be refunded within 14 days of purchase.",)


def suite():
    return [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]


def cases(n=5, **overrides):
    return [
        make_case(
            id=f"c{i}",
            context=CONTEXT,
            response=f"Annual plans can be refunded within 14 days. Case {i} is special.",
            **overrides,
        )
        for i in range(n)
    ]


async def run_cached(judge, path, n=1):
    """One run through a fresh CachedJudge over ``judge``; the report and the cache judge."""
    cached = CachedJudge(judge, path, secret=KEY)
    report = await run_suite(cases(n), judge=cached, evaluators=suite())
    await cached.aclose()
    return report, cached


async def test_an_unchanged_dataset_costs_zero_calls_on_the_second_run(
    make_judge, fake_anthropic, tmp_path
):
    path = tmp_path / "cache.sqlite"
    cold = CachedJudge(make_judge(), path, secret=KEY)
    first = await run_suite(cases(), judge=cold, evaluators=suite())
    await cold.aclose()
    assert first.usage.calls == 10  # two calls a case
    assert first.usage.cache_hits == 0

    warm = CachedJudge(make_judge(), path, secret=KEY)
    second = await run_suite(cases(), judge=warm, evaluators=suite())
    await warm.aclose()
    assert fake_anthropic.count() == 10  # nothing new reached the API
    assert second.usage.calls == 0
    assert second.usage.input_tokens == 0
    assert second.usage.cost_usd == 0
    assert second.usage.cache_hits == 15  # three answers a case
    assert [c.claims for c in second.cases] == [c.claims for c in first.cases]
    assert second.summary == first.summary


async def test_a_changed_case_misses_only_its_own_entries(make_judge, fake_anthropic, tmp_path):
    path = tmp_path / "cache.sqlite"
    judge = CachedJudge(make_judge(), path, secret=KEY)
    await run_suite(cases(3), judge=judge, evaluators=suite())
    changed = cases(3)
    changed[1] = make_case(id="c1", context=CONTEXT, response="Refunds take 30 days.")
    report = await run_suite(changed, judge=judge, evaluators=suite())
    await judge.aclose()
    assert report.usage.calls == 2
    assert report.usage.cache_hits == 6


async def test_a_corrupt_cache_file_is_a_warning_and_the_run_goes_on(
    make_judge, fake_anthropic, tmp_path
):
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    report, judge = await run_cached(make_judge(), path, n=2)
    assert report.summary.errors == 0
    assert report.usage.calls == 4
    assert len(judge.warnings) == 1
    assert "unusable" in judge.warnings[0]
    assert "Delete the file" in judge.warnings[0]


async def test_a_locked_cache_is_a_warning_and_the_run_goes_on(
    make_judge, fake_anthropic, tmp_path
):
    path = tmp_path / "cache.sqlite"
    first = CachedJudge(make_judge(), path, secret=KEY)
    await first.aclose()
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    try:
        judge = CachedJudge(make_judge(), path, secret=KEY, lock_timeout_s=0.05)
        report = await run_suite(cases(1), judge=judge, evaluators=suite())
        await judge.aclose()
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert report.summary.errors == 0
    assert report.usage.calls == 2
    assert judge.warnings and "locked" in judge.warnings[0]


async def test_a_second_run_waits_for_the_first_and_shares_its_cache(
    make_judge, fake_anthropic, tmp_path
):
    path = tmp_path / "cache.sqlite"
    await run_cached(make_judge(), path)
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")  # another run, in the middle of writing its answers
    release = threading.Timer(2.5, lambda: writer.execute("COMMIT"))
    release.start()
    try:
        report, judge = await run_cached(make_judge(), path, n=2)
    finally:
        release.join()
        writer.close()
    assert judge.warnings == []
    assert report.usage.cache_hits == 3  # the first run's case
    assert report.usage.calls == 2  # the new case, whose answers waited to be stored
    _, again = await run_cached(make_judge(), path, n=2)
    assert again.warnings == []


async def test_identical_questions_in_flight_are_asked_once(make_judge, fake_anthropic, tmp_path):
    judge = CachedJudge(make_judge(), tmp_path / "cache.sqlite", secret=KEY)
    fake_anthropic.latency = 0.05
    same = [
        make_case(id=f"dup{i}", context=CONTEXT, response="Annual plans refund.") for i in range(4)
    ]
    report = await run_suite(same, judge=judge, evaluators=suite())
    await judge.aclose()
    assert fake_anthropic.count() == 2
    assert report.usage.cache_hits == 9


async def test_the_key_covers_model_and_prompt_version(make_judge, fake_anthropic, tmp_path):
    path = tmp_path / "cache.sqlite"
    a = CachedJudge(make_judge(), path, secret=KEY)
    await run_suite(cases(1), judge=a, evaluators=suite())
    await a.aclose()
    b = CachedJudge(make_judge(model="claude-haiku-4-5"), path, secret=KEY)
    report = await run_suite(cases(1), judge=b, evaluators=suite())
    await b.aclose()
    assert report.usage.calls == 2
    assert report.usage.cache_hits == 0


async def test_a_planted_row_is_ignored_and_judged_again(make_judge, fake_anthropic, tmp_path):
    path = tmp_path / "cache.sqlite"
    await run_cached(make_judge(), path)
    db = sqlite3.connect(path, isolation_level=None)
    forged = '{"verdicts": [], "usage": {}}'
    db.execute(f"UPDATE {TABLE} SET value = ?", (forged,))
    db.close()

    report, again = await run_cached(make_judge(), path)
    assert report.summary.errors == 0
    assert report.usage.calls == 2
    assert again.warnings == [UNSIGNED_WARNING.format(path=path)]


async def test_a_cache_written_with_another_key_is_not_trusted(
    make_judge, fake_anthropic, tmp_path
):
    path = tmp_path / "cache.sqlite"
    other = CachedJudge(make_judge(), path, secret="sk-ant-someone-else")
    await run_suite(cases(1), judge=other, evaluators=suite())
    await other.aclose()
    report, _ = await run_cached(make_judge(), path)
    assert report.usage.calls == 2
    assert report.usage.cache_hits == 0


async def test_a_signed_row_that_no_longer_reads_is_dropped_and_judged_again(
    make_judge, fake_anthropic, tmp_path
):
    path = tmp_path / "cache.sqlite"
    await run_cached(make_judge(), path)
    writer = CachedJudge(make_judge(), path, secret=KEY)
    key = writer.key_for(EXTRACT, cases(1)[0])
    writer.store.put(key, '{"claims": [')  # as a build with another layout might have stored
    await writer.aclose()

    report, again = await run_cached(make_judge(), path)
    assert report.summary.errors == 0
    assert report.usage.calls == 1
    assert len(again.warnings) == 1


async def test_a_shared_question_that_fails_is_paid_for_once(tmp_path):
    failure = JudgeError("scripted failure", usage=Usage(calls=2, cost_usd=0.5))
    inner = FakeJudge(fail={"dup0": failure}, pause=0.01)
    judge = CachedJudge(inner, tmp_path / "cache.sqlite", secret=KEY)
    same = [make_case(id=f"dup{i}", context=CONTEXT, response="Refunds.") for i in range(2)]
    report = await run_suite(same, judge=judge, evaluators=[HallucinationEvaluator()])
    await judge.aclose()
    assert [c.status for c in report.cases] == ["error", "error"]
    assert inner.count("extract") == 1
    assert (report.usage.calls, report.usage.cost_usd) == (2, 0.5)


async def test_the_key_covers_the_endpoint_and_the_platform(make_judge, fake_anthropic, tmp_path):
    from ragaliq.config import JudgeConfig
    from ragaliq.judges.claude import ClaudeJudge
    from ragaliq.judges.platforms import bedrock_platform

    path = tmp_path / "cache.sqlite"
    a = CachedJudge(make_judge(), path, secret=KEY)
    await run_suite(cases(1), judge=a, evaluators=suite())
    await a.aclose()
    with FakeAnthropic(claude_like()) as elsewhere:
        config = JudgeConfig.model_validate({"structured_output": "schema"})
        other = ClaudeJudge(config, api_key="sk-ant-test", base_url=elsewhere.base_url)
        b = CachedJudge(other, path, secret=KEY)
        report = await run_suite(cases(1), judge=b, evaluators=suite())
        await b.aclose()
    assert report.usage.calls == 2  # another endpoint: nothing answered from the cache
    assert report.usage.cache_hits == 0
    case = cases(1)[0]
    env = {"AWS_ACCESS_KEY_ID": "AKIDFAKE", "AWS_SECRET_ACCESS_KEY": "s"}
    bedrock = JudgeConfig.model_validate(
        {"provider": "bedrock", "region": "us-east-1", "model": "claude-sonnet-5-5"}
    )
    keys = set()
    for judge in (
        make_judge(),
        ClaudeJudge(JudgeConfig(), api_key="sk-ant-test"),  # Anthropic's own API
        ClaudeJudge(bedrock, platform=bedrock_platform(bedrock, env)),
    ):
        keys.add(CachedJudge(judge, tmp_path / "k.sqlite", secret=KEY).key_for(EXTRACT, case))
        await judge.aclose()
    assert len(keys) == 3  # same model name, three endpoints: three keys


async def test_a_cached_supported_verdict_without_its_quote_in_the_context_is_downgraded(
    make_judge, fake_anthropic, tmp_path
):
    path = tmp_path / "cache.sqlite"
    case = cases(1)[0]
    claims = ["Annual plans can be refunded within 14 days."]
    writer = CachedJudge(make_judge(), path, secret=KEY)
    stored = VerificationResult(
        verdicts=(
            ClaimVerdict(
                text=claims[0],
                verdict=Verdict.SUPPORTED,
                evidence="Refunds are granted within 90 days.",  # not in this case's context
                reason="cached",
                confidence=0.9,
            ),
        )
    )
    writer.store.put(writer.key_for(VERIFY, case, claims), stored.model_dump_json())
    await writer.aclose()

    reader = CachedJudge(make_judge(), path, secret=KEY)
    result = (await reader.ask([VERIFY], case, claims=claims)).get(VERIFY)
    await reader.aclose()
    assert fake_anthropic.count() == 0  # answered from the cache...
    (verdict,) = result.verdicts
    assert verdict.verdict is Verdict.NOT_ENOUGH_INFO  # ...but support must be shown, not said
    assert "unverified_evidence" in verdict.flags
