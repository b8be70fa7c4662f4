from __future__ import annotations

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError
from ragaliq.judges.cascade import SETTLED_OFFLINE, CascadeJudge, settles_offline
from ragaliq.judges.factory import build_judge, describe_judge
from ragaliq.judges.offline import OfflineJudge
from ragaliq.models import Verdict
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge

CONTEXT = (
    "Northwind Cloud refunds annual plans within 14 days of purchase. "
    "Monthly plans are not refundable. "
    "The Business plan costs $12.50 per user per month and includes 2 TB of storage.",
)
SURE = "The Business plan costs $12.50 per user per month."
WRONG = "Annual plans are refunded within 30 days of purchase."
UNSURE = "The Business plan includes a dedicated account manager and phone support."


class RecordingClaude(FakeJudge):
    """A fake Claude that remembers which claims it was asked to verify."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[list[str]] = []
        self.samples: list[int] = []

    async def verify_claims(self, case, claims, *, sample=0):
        self.asked.append(list(claims))
        self.samples.append(sample)
        return await super().verify_claims(case, claims, sample=sample)


def cascade() -> tuple[CascadeJudge, RecordingClaude]:
    claude = RecordingClaude()
    return CascadeJudge(OfflineJudge(), claude), claude


async def test_only_the_claims_the_offline_judge_is_unsure_of_reach_claude():
    judge, claude = cascade()
    claims = [SURE, WRONG, UNSURE]
    result = await judge.verify_claims(make_case(context=CONTEXT), claims, sample=2)
    assert claude.asked == [[WRONG, UNSURE]]
    assert claude.samples == [2]
    assert [v.text for v in result.verdicts] == claims
    first, second, third = result.verdicts
    assert first.verdict is Verdict.SUPPORTED
    assert SETTLED_OFFLINE in first.flags
    assert second.reason == third.reason == "scripted"  # Claude's verdicts, in their places
    assert result.usage.calls == 1
    assert judge.stats.claims == 3
    assert judge.stats.settled_offline == 1
    assert judge.stats.sent_to_claude == 2
    assert judge.stats.verify_calls_saved == 0
    assert judge.stats.sent_share == pytest.approx(2 / 3)


async def test_a_case_whose_claims_are_all_settled_costs_no_call():
    judge, claude = cascade()
    result = await judge.verify_claims(make_case(context=CONTEXT), [SURE])
    assert claude.asked == []
    assert result.usage.calls == 0
    assert judge.stats.verify_calls_saved == 1
    assert all(settles_offline(v) for v in result.verdicts)


async def test_extraction_and_relevance_come_from_claude_and_empty_context_from_no_one():
    judge, claude = cascade()
    case = make_case(context=CONTEXT, response=f"{SURE} {UNSURE}")
    claims = await judge.extract_claims(case)
    assert claims.claims == (case.response,)  # what the fake Claude extracts
    await judge.evaluate_relevance(case)
    result = await judge.verify_claims(make_case(context=()), [SURE])
    assert result.verdicts[0].verdict is Verdict.NOT_ENOUGH_INFO
    assert claude.count("extract") == 1
    assert claude.count("relevance") == 1
    assert claude.count("verify") == 0


def test_provenance_names_the_cascade_claude_model_and_both_versions():
    judge, claude = cascade()
    offline = OfflineJudge().info
    assert judge.info.provider == "cascade"
    assert judge.info.model == claude.info.model
    assert (
        judge.info.prompt_version
        == f"{claude.info.prompt_version}+offline-{offline.prompt_version}"
    )
    assert judge.info.heuristic is False


async def test_the_factory_builds_the_cascade_and_needs_a_key(tmp_path):
    config = JudgeConfig.model_validate({"provider": "cascade", "cache": False})
    with pytest.raises(ConfigError, match="cascade needs an API key"):
        build_judge(config, env={}, cache_path=tmp_path / "cache.sqlite")
    choice = build_judge(
        config, env={"ANTHROPIC_API_KEY": "sk-test"}, cache_path=tmp_path / "cache.sqlite"
    )
    assert isinstance(choice.judge, CascadeJudge)
    assert choice.judge.info.provider == "cascade"
    assert describe_judge(config, env={"ANTHROPIC_API_KEY": "sk-test"}) == choice.judge.info
    await choice.judge.aclose()
    cached = JudgeConfig.model_validate({"provider": "cascade", "cache_path": "c.sqlite"})
    choice = build_judge(
        cached, env={"ANTHROPIC_API_KEY": "sk-test"}, cache_path=tmp_path / "cache.sqlite"
    )
    assert isinstance(choice.judge, CascadeJudge)
    assert choice.cache is not None and choice.judge.claude is choice.cache
    await choice.judge.aclose()
