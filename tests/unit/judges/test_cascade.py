from __future__ import annotations

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError
from ragaliq.evaluators.questions import EXTRACT, FACTS, RELEVANCE, VERIFY
from ragaliq.judges.cascade import SETTLED_OFFLINE, CascadeJudge, settles_offline
from ragaliq.judges.factory import build_judge, describe_judge
from ragaliq.models import Verdict
from ragaliq.offline import OfflineJudge
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

    async def verify_claims(self, case, claims, *, sample=0, facts=()):
        self.asked.append([*claims, *facts])
        self.samples.append(sample)
        return await super().verify_claims(case, claims, sample=sample, facts=facts)


def cascade() -> tuple[CascadeJudge, RecordingClaude]:
    claude = RecordingClaude()
    return CascadeJudge(OfflineJudge(), claude), claude


async def test_only_the_claims_the_offline_judge_is_unsure_of_reach_claude():
    judge, claude = cascade()
    claims = [SURE, WRONG, UNSURE]
    answers = await judge.ask([VERIFY], make_case(context=CONTEXT), claims=claims, sample=2)
    result = answers.get(VERIFY)
    assert claude.asked == [[WRONG, UNSURE]]
    assert claude.samples == [2]
    assert [v.text for v in result.verdicts] == claims
    first, second, third = result.verdicts
    assert first.verdict is Verdict.SUPPORTED
    assert SETTLED_OFFLINE in first.flags
    assert second.reason == third.reason == "scripted"  # Claude's verdicts, in their places
    assert answers.usage.calls == 1
    assert judge.stats.claims == 3
    assert judge.stats.settled_offline == 1
    assert judge.stats.sent_to_claude == 2
    assert judge.stats.verify_calls_saved == 0
    assert judge.stats.sent_share == pytest.approx(2 / 3)


async def test_the_needed_facts_are_settled_alike_and_sent_with_the_claims():
    judge, claude = cascade()
    case = make_case(context=CONTEXT, expected_facts=(SURE, UNSURE))
    answers = await judge.ask([VERIFY, FACTS], case, claims=[WRONG])
    assert claude.asks == [(("verify_claims", "verify_facts"), case.id)]  # in one ask
    assert claude.asked == [[WRONG]]
    facts = answers.get(FACTS).verdicts
    assert [f.text for f in facts] == [SURE, UNSURE]
    assert SETTLED_OFFLINE in facts[0].flags and facts[1].reason == "scripted"
    assert (judge.stats.claims, judge.stats.settled_offline) == (3, 1)


async def test_a_case_whose_claims_are_all_settled_costs_no_call():
    judge, claude = cascade()
    answers = await judge.ask([VERIFY], make_case(context=CONTEXT), claims=[SURE])
    assert claude.asked == []
    assert answers.usage.calls == 0
    assert judge.stats.verify_calls_saved == 1
    assert all(settles_offline(v) for v in answers.get(VERIFY).verdicts)


async def test_extraction_and_relevance_come_from_claude_and_empty_context_from_no_one():
    judge, claude = cascade()
    case = make_case(context=CONTEXT, response=f"{SURE} {UNSURE}")
    answers = await judge.ask([EXTRACT, RELEVANCE], case)
    assert answers.get(EXTRACT).claims == (case.response,)  # what the fake Claude extracts
    result = (await judge.ask([VERIFY], make_case(context=()), claims=[SURE])).get(VERIFY)
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


async def _settled(claim: str, sentence: str) -> bool:
    result = await OfflineJudge().verify_claims(
        make_case(context=(sentence,), response=claim), [claim]
    )
    return settles_offline(result.verdicts[0])


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        # every word grounded, in another order or with the roles turned round
        (
            "Plan B is cheaper than plan A for small teams.",
            "Plan A is cheaper than plan B for small teams.",
        ),
        (
            "The river flows from the sea to the lake past the old mill.",
            "The river flows north from the lake to the sea past the old mill.",
        ),
        # the sentence negates, conditions, hedges or attributes what the claim says
        ("The app works offline.", "It is not true that the app works offline."),
        ("The app works offline on phones.", "If you upgrade, the app works offline on phones."),
        ("The app works offline on some phones.", "The app may work offline on some phones."),
        ("The app works offline on phones.", "The vendor said the app works offline on phones."),
        (
            "The app works offline on phones.",
            "The app works offline on phones, according to the vendor.",
        ),
    ],
)
async def test_the_cascade_never_settles_a_claim_its_sentence_says_otherwise(claim, sentence):
    assert not await _settled(claim, sentence)


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        (
            "Plan A is cheaper than plan B for small teams.",
            "Plan A is cheaper than plan B for small teams.",
        ),
        (
            "The kettle boils water in 4 minutes.",
            "The kettle holds 1.7 litres and boils water in 4 minutes.",
        ),
        (
            "The app syncs notes across devices.",
            "The app syncs notes across devices, but it does not work offline.",
        ),
    ],
)
async def test_the_cascade_settles_a_claim_its_sentence_says_in_its_order(claim, sentence):
    assert await _settled(claim, sentence)
