"""Where Claude is reached: Anthropic's API (or a compatible endpoint), Amazon Bedrock, Vertex AI.

Each platform is the anthropic SDK's own async client with the platform's usual credentials: an
API key for Anthropic; the AWS credential chain for Bedrock (environment, a profile, the OIDC role
of ``aws-actions/configure-aws-credentials``, an instance role), signed with SigV4; Google's
Application Default Credentials for Vertex (``google-github-actions/auth`` in a workflow). The AWS
and Google libraries are imported only when their platform is used (the ``bedrock`` and
``vertex`` extras), so neither the base install nor the offline judge needs them.

The client is always given its base URL: the SDK would otherwise read ``ANTHROPIC_BASE_URL``
(and its Bedrock and Vertex cousins) from the process environment, which a pull request's
pipeline step can set, and send the credentials there.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError

if TYPE_CHECKING:  # the SDK is imported when a client is built, not to name an endpoint
    import anthropic

__all__ = [
    "ANTHROPIC_API_URL",
    "Client",
    "Platform",
    "anthropic_platform",
    "bedrock_platform",
    "bedrock_url",
    "vertex_platform",
    "vertex_url",
]

ANTHROPIC_API_URL = "https://api.anthropic.com"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_REGION = re.compile(r"^[a-z]{2,}(-[a-z0-9]+)*$")
"""AWS and Google region names (``us-east-1``, ``europe-west1``, ``global``): a region picks a
host name, so nothing else may pass."""
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9.:-]{0,126}$")

Client: TypeAlias = (
    "anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex"
)


@dataclass(frozen=True, kw_only=True)
class Platform:
    """One way to reach Claude: how to build its client and what to say when it fails."""

    provider: str
    """Recorded in the report's judge: ``anthropic``, ``bedrock`` or ``vertex``."""
    label: str
    """The platform in messages, e.g. ``Amazon Bedrock``."""
    endpoint: str | None
    """Recorded in the report's judge and the cache key; None for Anthropic's own API."""
    custom_endpoint: bool
    """A base URL the user chose: an Anthropic-compatible server that may ignore JSON schemas."""
    batches: bool
    """Whether the Message Batches API is there."""
    credentials_fix: str
    """What to do when the platform rejects the credentials (401), as a clause."""
    credentials: str = "the credentials"
    """What the platform is given to let the judge in, in messages."""
    access_fix: str
    """What to do when it refuses access to the model (403), as a clause."""
    connect: Callable[[float], Client]
    """Builds the SDK client, given the request timeout in seconds."""
    auth_errors: tuple[type[BaseException], ...] = ()
    """Exceptions the platform's credential libraries raise while signing a request."""


def anthropic_platform(*, api_key: str, base_url: str | None = None) -> Platform:
    """Anthropic's API, or the Anthropic-compatible server at ``base_url``."""
    url = base_url.rstrip("/") if base_url else None

    def connect(timeout: float) -> Client:
        import anthropic

        # max_retries=0: retries are the judge's, they honour retry-after and feed the breaker
        return anthropic.AsyncAnthropic(
            api_key=api_key, base_url=url or ANTHROPIC_API_URL, timeout=timeout, max_retries=0
        )

    return Platform(
        provider="anthropic",
        label="the Anthropic API",  # a compatible server speaks it too; the report has the URL
        endpoint=url,
        custom_endpoint=url is not None,
        batches=True,
        credentials="the API key",
        credentials_fix=(
            "it is missing or invalid; set ANTHROPIC_API_KEY (in the action, the "
            "anthropic-api-key input) or judge.api_key"
        ),
        access_fix="the key may not use this model",
        connect=connect,
    )


def bedrock_platform(config: JudgeConfig, env: Mapping[str, str]) -> Platform:
    """Claude on Amazon Bedrock, with the AWS credentials the environment gives.

    Raises:
        ConfigError: no region, no AWS credentials, or the ``bedrock`` extra is not installed.
    """
    profile = config.aws_profile or env.get("AWS_PROFILE") or None
    region = _region(
        config.region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION"),
        fallback=lambda: _profile_region(profile),
        fix="set judge.region (e.g. us-east-1), or AWS_REGION (aws-actions/configure-aws-"
        "credentials sets it)",
        provider="bedrock",
    )
    base_url = (config.base_url or bedrock_url(region)).rstrip("/")
    token = env.get("AWS_BEARER_TOKEN_BEDROCK", "").strip() or None
    access_key = env.get("AWS_ACCESS_KEY_ID", "").strip() or None
    secret_key = env.get("AWS_SECRET_ACCESS_KEY", "").strip() or None
    session_token = env.get("AWS_SESSION_TOKEN", "").strip() or None
    if token is None and not (access_key and secret_key):
        access_key = secret_key = session_token = None  # the chain: profile, web identity, role
        _check_aws_credentials(profile, region)
    explicit = token is None and access_key is not None
    auth_errors: tuple[type[BaseException], ...] = ()
    if token is None:  # requests are signed with SigV4, by botocore
        botocore = _import("botocore.exceptions", extra="bedrock", library="boto3")
        auth_errors = (botocore.BotoCoreError,)

    def connect(timeout: float) -> Client:
        import anthropic

        return anthropic.AsyncAnthropicBedrock(
            api_key=token,
            aws_access_key=access_key if explicit else None,
            aws_secret_key=secret_key if explicit else None,
            aws_session_token=session_token if explicit else None,
            aws_profile=None if explicit or token else profile,
            aws_region=region,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
        )

    return Platform(
        provider="bedrock",
        label="Amazon Bedrock",
        endpoint=base_url,
        custom_endpoint=False,
        batches=False,
        credentials_fix=(
            "check the role aws-actions/configure-aws-credentials assumes (or AWS_PROFILE, or "
            "the AWS_ACCESS_KEY_ID the job has)"
        ),
        access_fix=(
            f"the AWS credentials may be invalid or expired, lack bedrock:InvokeModel, or the "
            f"model may not be enabled in {region}"
        ),
        connect=connect,
        auth_errors=auth_errors,
    )


def vertex_platform(
    config: JudgeConfig, env: Mapping[str, str], *, credentials: Any = None
) -> Platform:
    """Claude on Google Vertex AI, with Application Default Credentials (or ``credentials``).

    ``credentials`` is a ``google.auth`` credentials object; by default the environment's.

    Raises:
        ConfigError: no region, no project, no Google credentials, or the ``vertex`` extra is not
            installed.
    """
    region = _region(
        config.region or env.get("CLOUD_ML_REGION"),
        fallback=lambda: None,
        fix="set judge.region (e.g. us-east5, or global), or CLOUD_ML_REGION",
        provider="vertex",
    )
    project = (
        config.project
        or env.get("ANTHROPIC_VERTEX_PROJECT_ID")
        or env.get("GOOGLE_CLOUD_PROJECT")
        or None
    )
    auth_errors: tuple[type[BaseException], ...] = ()
    if credentials is None:
        credentials, found = _google_credentials()
        project = project or found
        auth_errors = (_import("google.auth.exceptions", extra="vertex").GoogleAuthError,)
    if not project:
        raise ConfigError(
            "judge.provider: vertex needs a Google Cloud project: set judge.project, or "
            "GOOGLE_CLOUD_PROJECT (google-github-actions/auth sets it)"
        )
    if not _PROJECT.match(project):
        raise ConfigError(f"judge.project: {project!r} is not a Google Cloud project id")
    base_url = (config.base_url or vertex_url(region)).rstrip("/")

    def connect(timeout: float) -> Client:
        import anthropic

        return anthropic.AsyncAnthropicVertex(
            region=region,
            project_id=project,
            credentials=credentials,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
        )

    return Platform(
        provider="vertex",
        label="Vertex AI",
        endpoint=f"{base_url}/projects/{project}/locations/{region}",
        custom_endpoint=False,
        batches=False,
        credentials_fix=(
            "check the workload identity that google-github-actions/auth uses (locally: gcloud "
            "auth application-default login)"
        ),
        access_fix=(
            f"the credentials may lack roles/aiplatform.user on project {project}, or the model "
            f"may not be enabled in {region}"
        ),
        connect=connect,
        auth_errors=auth_errors,
    )


def bedrock_url(region: str) -> str:
    """Bedrock's runtime endpoint for a region."""
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def vertex_url(region: str) -> str:
    """Vertex AI's endpoint for a region, as the SDK builds it."""
    if region == "global":
        return "https://aiplatform.googleapis.com/v1"
    if region in ("us", "eu"):
        return f"https://aiplatform.{region}.rep.googleapis.com/v1"
    return f"https://{region}-aiplatform.googleapis.com/v1"


def _region(
    value: str | None, *, fallback: Callable[[], str | None], fix: str, provider: str
) -> str:
    region = (value or "").strip() or fallback()
    if not region:
        raise ConfigError(f"judge.provider: {provider} needs a region: {fix}")
    if not _REGION.match(region):
        raise ConfigError(f"judge.region: {region!r} is not a region name; {fix}")
    return region


def _import(module: str, *, extra: str, library: str = "google-auth") -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"judge.provider: {extra} needs {library}: pip install 'ragaliq-gate[{extra}]' "
            f"(or 'anthropic[{extra}]')"
        ) from exc


def _profile_region(profile: str | None) -> str | None:
    boto3 = _import("boto3", extra="bedrock", library="boto3")
    try:
        region = boto3.Session(profile_name=profile).region_name
    except Exception:  # a missing profile is reported with the credentials
        return None
    return str(region) if region else None


def _check_aws_credentials(profile: str | None, region: str) -> None:
    boto3 = _import("boto3", extra="bedrock", library="boto3")
    botocore = _import("botocore.exceptions", extra="bedrock", library="boto3")
    try:
        found = boto3.Session(profile_name=profile, region_name=region).get_credentials()
    except botocore.BotoCoreError as exc:
        raise ConfigError(
            f"judge.provider: bedrock: the AWS credentials are unusable ({exc})"
        ) from exc
    if found is None:
        raise ConfigError(
            "judge.provider: bedrock found no AWS credentials; in a workflow, run "
            "aws-actions/configure-aws-credentials (role-to-assume, with permissions "
            "id-token: write) before this step; locally, set AWS_PROFILE or run aws configure"
        )


def _google_credentials() -> tuple[Any, str | None]:
    auth = _import("google.auth", extra="vertex")
    exceptions = _import("google.auth.exceptions", extra="vertex")
    try:
        credentials, project = auth.default(scopes=[CLOUD_PLATFORM_SCOPE])
    except exceptions.GoogleAuthError as exc:
        raise ConfigError(
            "judge.provider: vertex found no Google credentials; in a workflow, run "
            "google-github-actions/auth (workload_identity_provider, with permissions "
            "id-token: write) before this step; locally, run gcloud auth application-default "
            f"login ({str(exc).splitlines()[0]})"
        ) from exc
    return credentials, str(project) if project else None
