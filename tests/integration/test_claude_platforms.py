"""The Claude judge on Amazon Bedrock and Vertex AI, through the SDK's own clients, over HTTP."""

from __future__ import annotations

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError, JudgeUnavailableError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.evaluators.questions import RELEVANCE, VERIFY
from ragaliq.judges.claude import ClaudeJudge
from ragaliq.judges.factory import build_judge, describe_judge
from ragaliq.judges.platforms import bedrock_platform, vertex_platform
from ragaliq.runner import run_suite
from tests.asking import ask_one
from tests.conftest import make_case
from tests.fakes.anthropic_server import Fault

CONTEXT = ("Annual plans can be refunded within 14 days of purchase.",)
AWS = {
    "AWS_ACCESS_KEY_ID": "AKIDFAKEEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "fake-secret-access-key",
    "AWS_SESSION_TOKEN": "fake-session-token",
    "AWS_REGION": "us-east-1",
}
TOKEN = "ya29.fake-access-token"


class FakeGoogleCredentials:
    """What google.auth hands out: a token that is not expired, so the SDK sends it as it is."""

    token = TOKEN
    expired = False

    def refresh(self, request):
        raise AssertionError("a valid token is never refreshed")


def case(**overrides):
    values = {"context": CONTEXT, "response": "Annual plans can be refunded within 14 days."}
    return make_case(**{**values, **overrides})


def suite():
    return [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]


def bedrock_judge(fake, sleeps, env=AWS, **config):
    values = {"provider": "bedrock", "base_url": fake.base_url, "max_retries": 2, **config}
    judge_config = JudgeConfig.model_validate(values)
    return ClaudeJudge(
        judge_config, platform=bedrock_platform(judge_config, env), sleep=sleeps.wait
    )


def vertex_judge(fake, sleeps, **config):
    values = {
        "provider": "vertex",
        "base_url": f"{fake.base_url}/v1",
        "region": "us-east5",
        "project": "rag-evals",
        "max_retries": 2,
        **config,
    }
    judge_config = JudgeConfig.model_validate(values)
    platform = vertex_platform(judge_config, {}, credentials=FakeGoogleCredentials())
    return ClaudeJudge(judge_config, platform=platform, sleep=sleeps.wait)


# --- Bedrock ------------------------------------------------------------------------------------


async def test_bedrock_invokes_the_model_path_signed_with_sigv4(fake_anthropic, sleeps):
    fake_anthropic.aws_access_key = AWS["AWS_ACCESS_KEY_ID"]
    judge = bedrock_judge(fake_anthropic, sleeps)
    report = await run_suite([case(id="a")], judge=judge, evaluators=suite())
    await judge.aclose()
    assert report.summary.errors == 0
    assert report.judge.provider == "bedrock"
    assert report.judge.model == "global.anthropic.claude-sonnet-4-6"  # Bedrock's default
    assert report.judge.endpoint == fake_anthropic.base_url
    assert report.judge.structured_output == "schema"
    assert report.usage.calls == 2
    assert report.usage.cost_usd > 0
    for request in fake_anthropic.requests:
        assert request.path == "/model/global.anthropic.claude-sonnet-4-6/invoke"
        assert "model" not in request.body
        assert request.body["anthropic_version"]
        assert request.body["output_config"]["format"]["type"] == "json_schema"
        authorization = request.headers["authorization"]
        assert (
            authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDFAKEEXAMPLE/")
            and "/us-east-1/bedrock/aws4_request" in authorization
        )
        assert "x-amz-date" in request.headers
        assert request.headers["x-amz-security-token"] == "fake-session-token"
        assert "x-api-key" not in request.headers


async def test_bedrock_takes_an_api_key_as_a_bearer_token(fake_anthropic, sleeps):
    env = {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key-fake", "AWS_REGION": "eu-central-1"}
    judge = bedrock_judge(fake_anthropic, sleeps, env=env, model="eu.anthropic.claude-haiku-4-5")
    await ask_one(judge, RELEVANCE, case(id="a"))
    await judge.aclose()
    request = fake_anthropic.requests[0]
    assert request.headers["authorization"] == "Bearer bedrock-api-key-fake"
    assert request.path == "/model/eu.anthropic.claude-haiku-4-5/invoke"


async def test_bedrock_long_contexts_are_prompt_cached(fake_anthropic, sleeps):
    long_context = tuple(f"Fact {i}: the quota for region {i} is {i * 10} GB." for i in range(200))
    claims = [f"The quota for region {i} is {i * 10} GB." for i in range(4)]
    judge = bedrock_judge(fake_anthropic, sleeps, claims_per_call=2)
    result = await ask_one(judge, VERIFY, make_case(context=long_context), claims)
    await judge.aclose()
    for request in fake_anthropic.requests:
        assert request.body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert result.usage.cache_write_tokens > 0
    assert result.usage.cache_read_tokens > 0


async def test_bedrock_refusing_access_stops_the_run_with_the_fix(fake_anthropic, sleeps):
    fake_anthropic.enqueue(Fault(403, message="User is not authorized to perform bedrock:Invoke"))
    judge = bedrock_judge(fake_anthropic, sleeps)
    with pytest.raises(JudgeUnavailableError) as info:
        await ask_one(judge, RELEVANCE, case(id="a"))
    await judge.aclose()
    message = str(info.value)
    assert message.startswith("Amazon Bedrock refused access (403)")
    assert "bedrock:InvokeModel" in message and "us-east-1" in message
    assert "not authorized" in message  # Bedrock's own words, from its error shape
    assert fake_anthropic.requests[0].status == 403


async def test_bedrock_unsigned_requests_are_refused(fake_anthropic, sleeps):
    fake_anthropic.aws_access_key = "AKIDSOMEONEELSE"
    judge = bedrock_judge(fake_anthropic, sleeps)
    with pytest.raises(JudgeUnavailableError, match="403"):
        await ask_one(judge, RELEVANCE, case(id="a"))
    await judge.aclose()


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_bedrock_throttling_and_server_errors_are_retried(fake_anthropic, sleeps, status):
    fake_anthropic.enqueue(Fault(status, retry_after=3 if status == 429 else None))
    judge = bedrock_judge(fake_anthropic, sleeps)
    result = await ask_one(judge, RELEVANCE, case(id="a"))
    await judge.aclose()
    assert fake_anthropic.statuses() == [status, 200]
    assert 0 <= result.score <= 1
    assert result.usage.calls == 1


async def test_bedrock_an_unknown_model_id_stops_the_run(fake_anthropic, sleeps):
    fake_anthropic.enqueue(Fault(400, message="The provided model identifier is invalid."))
    judge = bedrock_judge(fake_anthropic, sleeps, model="anthropic.claude-sonnet-5-5")
    with pytest.raises(JudgeUnavailableError, match="does not know model"):
        await ask_one(judge, RELEVANCE, case(id="a"))
    await judge.aclose()


# --- Vertex -------------------------------------------------------------------------------------


async def test_vertex_posts_raw_predict_with_the_credentials_token(fake_anthropic, sleeps):
    fake_anthropic.google_token = TOKEN
    judge = vertex_judge(fake_anthropic, sleeps)
    report = await run_suite([case(id="a")], judge=judge, evaluators=suite())
    await judge.aclose()
    assert report.summary.errors == 0
    assert report.judge.provider == "vertex"
    assert report.judge.model == "claude-sonnet-4-6"
    assert report.judge.endpoint == (
        f"{fake_anthropic.base_url}/v1/projects/rag-evals/locations/us-east5"
    )
    for request in fake_anthropic.requests:
        assert request.path == (
            "/v1/projects/rag-evals/locations/us-east5/publishers/anthropic/models/"
            "claude-sonnet-4-6:rawPredict"
        )
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
        assert "model" not in request.body
        assert request.body["anthropic_version"]
        assert "output_config" in request.body


async def test_vertex_rejected_credentials_stop_the_run_with_the_fix(fake_anthropic, sleeps):
    fake_anthropic.google_token = "ya29.another-token"
    judge = vertex_judge(fake_anthropic, sleeps)
    with pytest.raises(JudgeUnavailableError) as info:
        await ask_one(judge, RELEVANCE, case(id="a"))
    await judge.aclose()
    assert str(info.value).startswith("Vertex AI rejected the credentials (401)")
    assert "google-github-actions/auth" in str(info.value)
    assert len(fake_anthropic.requests) == 1


async def test_vertex_permission_denied_names_the_project(fake_anthropic, sleeps):
    fake_anthropic.enqueue(Fault(403, message="Permission denied on resource project rag-evals."))
    judge = vertex_judge(fake_anthropic, sleeps)
    with pytest.raises(JudgeUnavailableError) as info:
        await ask_one(judge, RELEVANCE, case(id="a"))
    await judge.aclose()
    assert "roles/aiplatform.user on project rag-evals" in str(info.value)
    assert "Permission denied on resource" in str(info.value)


@pytest.mark.parametrize("status", [429, 503])
async def test_vertex_quota_and_unavailable_are_retried(fake_anthropic, sleeps, status):
    fake_anthropic.enqueue(Fault(status), Fault(status))
    judge = vertex_judge(fake_anthropic, sleeps)
    await ask_one(judge, RELEVANCE, case(id="a"))
    await judge.aclose()
    assert fake_anthropic.statuses() == [status, status, 200]
    assert len(sleeps.delays) == 2


# --- choosing the platform ----------------------------------------------------------------------


def test_bedrock_without_a_region_is_one_line_naming_the_fix(monkeypatch, tmp_path):
    isolate_aws(monkeypatch, tmp_path)
    config = JudgeConfig.model_validate({"provider": "bedrock"})
    with pytest.raises(ConfigError) as info:
        build_judge(config, env={}, cache_path=None)
    message = str(info.value)
    assert message.startswith("judge.provider: bedrock needs a region")
    assert "judge.region" in message and "AWS_REGION" in message
    assert "\n" not in message


def test_bedrock_without_credentials_points_at_the_oidc_login(monkeypatch, tmp_path):
    isolate_aws(monkeypatch, tmp_path)
    config = JudgeConfig.model_validate({"provider": "bedrock", "region": "us-east-1"})
    with pytest.raises(ConfigError) as info:
        build_judge(config, env={}, cache_path=None)
    assert "found no AWS credentials" in str(info.value)
    assert "aws-actions/configure-aws-credentials" in str(info.value)


def test_a_region_that_is_not_a_region_is_refused():
    config = JudgeConfig.model_validate({"provider": "bedrock", "region": "evil.example#"})
    with pytest.raises(ConfigError, match="is not a region name"):
        build_judge(config, env=AWS, cache_path=None)


def test_vertex_without_a_region_or_a_project(monkeypatch, tmp_path):
    config = JudgeConfig.model_validate({"provider": "vertex"})
    with pytest.raises(ConfigError, match="vertex needs a region"):
        build_judge(config, env={}, cache_path=None)
    with pytest.raises(ConfigError, match="needs a Google Cloud project"):
        vertex_platform(
            JudgeConfig.model_validate({"provider": "vertex", "region": "global"}),
            {},
            credentials=FakeGoogleCredentials(),
        )


def test_vertex_without_credentials_points_at_the_oidc_login(monkeypatch, tmp_path):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    config = JudgeConfig.model_validate(
        {"provider": "vertex", "region": "us-east5", "project": "rag-evals"}
    )
    with pytest.raises(ConfigError) as info:
        build_judge(config, env={}, cache_path=None)
    assert "found no Google credentials" in str(info.value)
    assert "google-github-actions/auth" in str(info.value)


async def test_the_factory_builds_a_bedrock_judge_from_the_environment(tmp_path):
    config = JudgeConfig.model_validate({"provider": "bedrock"})
    choice = build_judge(config, env=AWS, cache_path=tmp_path / "cache.sqlite")
    assert choice.judge.info.provider == "bedrock"
    assert choice.judge.info.endpoint == "https://bedrock-runtime.us-east-1.amazonaws.com"
    assert choice.cache is None  # no API key to sign a cache with: said, not silently unsigned
    assert "RAGALIQ_CACHE_SECRET" in choice.all_notices()[0]
    await choice.judge.aclose()
    signed = build_judge(
        config, env={**AWS, "RAGALIQ_CACHE_SECRET": "s3cret"}, cache_path=tmp_path / "c.sqlite"
    )
    assert signed.cache is not None
    await signed.judge.aclose()
    assert describe_judge(config, env=AWS) == choice.judge.info  # what an empty shard records


def test_batches_are_refused_on_bedrock():
    config = JudgeConfig.model_validate({"provider": "bedrock", "batch": True})
    with pytest.raises(ConfigError, match="Message Batches API is Anthropic's"):
        build_judge(config, env=AWS, cache_path=None)


def isolate_aws(monkeypatch, tmp_path):
    """No AWS credentials anywhere boto3 looks, and no instance metadata to ask."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
