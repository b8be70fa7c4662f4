"""Real cases judged on Amazon Bedrock, Vertex AI and through the Message Batches API.

Opt-in, like tests/integration/test_live_claude.py: each runs with --run-live and the platform's
usual environment, and is skipped otherwise.

- Bedrock: AWS credentials (a profile, keys, or the OIDC role) and AWS_REGION.
- Vertex: Application Default Credentials, CLOUD_ML_REGION and GOOGLE_CLOUD_PROJECT.
- Batches: ANTHROPIC_API_KEY (a batch can take minutes; this one is two cases).
"""

from __future__ import annotations

import os

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.judges.factory import build_judge
from ragaliq.models import Verdict
from ragaliq.runner import RunSettings, run_suite
from tests.conftest import make_case

CONTEXT = (
    "Annual plans can be refunded within 14 days of purchase. Monthly plans are not refundable.",
)


def needs(request: pytest.FixtureRequest, *names: str) -> None:
    missing = [name for name in names if not os.environ.get(name)]
    if not request.config.getoption("--run-live") or missing:
        pytest.skip(f"live test: needs --run-live and {', '.join(names)}")


def cases():
    return [
        make_case(
            id="faithful",
            context=CONTEXT,
            response="Annual plans can be refunded within 14 days of purchase.",
        ),
        make_case(
            id="wrong-number",
            context=CONTEXT,
            response="Annual plans can be refunded within 60 days of purchase.",
        ),
    ]


async def judged(config: JudgeConfig):
    choice = build_judge(config, env=os.environ, cache_path=None)
    try:
        return await run_suite(
            cases(),
            judge=choice.judge,
            evaluators=[FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()],
            settings=RunSettings(concurrency=config.requests_in_flight),
        )
    finally:
        await choice.judge.aclose()


def check(report) -> None:
    by_id = {c.id: c for c in report.cases}
    assert report.summary.errors == 0
    assert all(c.verdict is Verdict.SUPPORTED for c in by_id["faithful"].claims)
    assert any(c.verdict is Verdict.CONTRADICTED for c in by_id["wrong-number"].claims)
    assert report.usage.cost_usd > 0


async def test_two_real_cases_on_bedrock(request):
    needs(request, "AWS_REGION")
    report = await judged(JudgeConfig(provider="bedrock", cache=False))
    check(report)
    assert report.judge.provider == "bedrock"


async def test_two_real_cases_on_vertex(request):
    needs(request, "CLOUD_ML_REGION", "GOOGLE_CLOUD_PROJECT")
    report = await judged(JudgeConfig(provider="vertex", cache=False))
    check(report)
    assert report.judge.provider == "vertex"


async def test_two_real_cases_through_the_message_batches_api(request):
    needs(request, "ANTHROPIC_API_KEY")
    report = await judged(JudgeConfig(provider="claude", cache=False, batch=True, batch_poll_s=20))
    check(report)
