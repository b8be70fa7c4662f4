"""Where Claude is reached: Anthropic's API (or a compatible endpoint), Amazon Bedrock, Vertex AI.

Each :class:`Route` says what the config and the environment tell of one way to Claude before
anything is opened (the endpoint a report would record, whether credentials are at hand), and
opens it as a :class:`Platform`: the anthropic SDK's own async client with the platform's usual
credentials. An API key for Anthropic; the AWS credential chain for Bedrock (environment, a
profile, the OIDC role of ``aws-actions/configure-aws-credentials``, an instance role), signed
with SigV4; Google's Application Default Credentials for Vertex (``google-github-actions/auth``
in a workflow). The AWS and Google libraries are imported only when their platform is used (the
``bedrock`` and ``vertex`` extras), so neither the base install nor the offline judge needs them.

The client is always given its base URL: the SDK would otherwise read ``ANTHROPIC_BASE_URL``
(and its Bedrock and Vertex cousins) from the process environment, which a pull request's
pipeline step can set, and send the credentials there. The endpoint comes only from trusted
inputs: the config's ``judge.base_url`` (read at the base commit in a gate) or, for Anthropic's
API, the ``ANTHROPIC_BASE_URL`` in the environment the caller passes; in the action's gate mode
that is only ever the workflow's ``anthropic-base-url`` input (:mod:`ragaliq.environment` removes
the variable an earlier step could have set).
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
    "ANTHROPIC",
    "ANTHROPIC_API_URL",
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "BEDROCK",
    "CACHE_SECRET_ENV",
    "VERTEX",
    "Client",
    "Platform",
    "Route",
    "anthropic_platform",
    "api_key_from",
    "bedrock_platform",
    "bedrock_url",
    "vertex_platform",
    "vertex_url",
]

ANTHROPIC_API_URL = "https://api.anthropic.com"
API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
CACHE_SECRET_ENV = "RAGALIQ_CACHE_SECRET"
"""Signs the judge cache of a Bedrock or Vertex judge, which has no API key to sign it with."""
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_REGION = re.compile(r"^[a-z]{2,}(-[a-z0-9]+)*$")
"""AWS and Google region names (``us-east-1``, ``europe-west1``, ``global``): a region picks a
host name, so nothing else may pass."""
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9.:-]{0,126}$")

Client: TypeAlias = (
    "anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex"
)
Env = Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class Route:
    """One way to Claude, as the config and the environment describe it, unopened."""

    name: str
    """Recorded as the provider in the report's judge: ``anthropic``, ``bedrock``, ``vertex``."""
    label: str
    """The platform in messages, e.g. ``Amazon Bedrock``."""
    batches: bool
    """Whether the Message Batches API is there."""
    compatible: bool
    """Whether its base URL may be any Anthropic-compatible server (which may ignore schemas)."""
    open: Callable[[JudgeConfig, Env], Platform]
    """Resolves the settings and credentials; raises :class:`ConfigError` when they fall short."""
    endpoint: Callable[[JudgeConfig, Env], str | None]
    """The endpoint an opened platform would record, as far as the settings tell it (no
    credentials are read: a profile's region or the credentials' project count as unknown)."""
    has_credentials: Callable[[JudgeConfig, Env], bool] = lambda config, env: True
    """Whether credentials are at hand before opening (a platform's credential chain is only
    checked when it is opened)."""


@dataclass(frozen=True, kw_only=True)
class Platform:
    """One way to reach Claude, opened: how to build its client and what to say when it fails."""

    route: Route
    endpoint: str | None
    """Recorded in the report's judge and the cache key; None for Anthropic's own API."""
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
    cache_secret: str | None = None
    """What signs the judge cache's entries: the API key, else ``RAGALIQ_CACHE_SECRET``."""

    @property
    def provider(self) -> str:
        """Recorded in the report's judge."""
        return self.route.name

    @property
    def label(self) -> str:
        return self.route.label

    @property
    def batches(self) -> bool:
        return self.route.batches

    @property
    def custom_endpoint(self) -> bool:
        """A base URL the user chose: an Anthropic-compatible server that may ignore schemas."""
        return self.route.compatible and self.endpoint is not None


# -- Anthropic's API ----------------------------------------------------------------------------


def api_key_from(config: JudgeConfig, env: Env) -> str | None:
    """The Anthropic API key from the config or the environment, if any."""
    if config.api_key is not None and config.api_key.get_secret_value().strip():
        return config.api_key.get_secret_value().strip()
    return env.get(API_KEY_ENV, "").strip() or None


def _anthropic_base_url(config: JudgeConfig, env: Env) -> str | None:
    return config.base_url or env.get(BASE_URL_ENV, "").strip() or None


def _anthropic_endpoint(config: JudgeConfig, env: Env) -> str | None:
    base_url = _anthropic_base_url(config, env)
    return base_url.rstrip("/") if base_url else None


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
        route=ANTHROPIC,  # a compatible server speaks it too; the report has the URL
        endpoint=url,
        credentials="the API key",
        credentials_fix=(
            "it is missing or invalid; set ANTHROPIC_API_KEY (in the action, the "
            "anthropic-api-key input) or judge.api_key"
        ),
        access_fix="the key may not use this model",
        connect=connect,
        cache_secret=api_key or None,
    )


def _open_anthropic(config: JudgeConfig, env: Env) -> Platform:
    key = api_key_from(config, env)
    if key is None:
        raise ConfigError(
            f"judge.provider: {config.provider} needs an API key; set {API_KEY_ENV} "
            "(or judge.api_key), or use provider: offline"
        )
    return anthropic_platform(api_key=key, base_url=_anthropic_base_url(config, env))


# -- Amazon Bedrock -----------------------------------------------------------------------------


def _bedrock_region(config: JudgeConfig, env: Env) -> str | None:
    return config.region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")


def _bedrock_base_url(config: JudgeConfig, region: str) -> str:
    return (config.base_url or bedrock_url(region)).rstrip("/")


def _bedrock_endpoint(config: JudgeConfig, env: Env) -> str | None:
    region = _bedrock_region(config, env)
    return _bedrock_base_url(config, region) if region else None


def bedrock_platform(config: JudgeConfig, env: Env) -> Platform:
    """Claude on Amazon Bedrock, with the AWS credentials the environment gives.

    Raises:
        ConfigError: no region, no AWS credentials, or the ``bedrock`` extra is not installed.
    """
    profile = config.aws_profile or env.get("AWS_PROFILE") or None
    region = _region(
        _bedrock_region(config, env),
        fallback=lambda: _profile_region(profile),
        fix="set judge.region (e.g. us-east-1), or AWS_REGION (aws-actions/configure-aws-"
        "credentials sets it)",
        provider="bedrock",
    )
    base_url = _bedrock_base_url(config, region)
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
        route=BEDROCK,
        endpoint=base_url,
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
        cache_secret=_cache_secret(env),
    )


# -- Vertex AI ----------------------------------------------------------------------------------


def _vertex_region(config: JudgeConfig, env: Env) -> str | None:
    return config.region or env.get("CLOUD_ML_REGION")


def _vertex_project(config: JudgeConfig, env: Env) -> str | None:
    return (
        config.project
        or env.get("ANTHROPIC_VERTEX_PROJECT_ID")
        or env.get("GOOGLE_CLOUD_PROJECT")
        or None
    )


def _vertex_location(config: JudgeConfig, region: str, project: str) -> str:
    base_url = (config.base_url or vertex_url(region)).rstrip("/")
    return f"{base_url}/projects/{project}/locations/{region}"


def _vertex_endpoint(config: JudgeConfig, env: Env) -> str | None:
    region, project = _vertex_region(config, env), _vertex_project(config, env)
    return _vertex_location(config, region, project) if region and project else None


def vertex_platform(config: JudgeConfig, env: Env, *, credentials: Any = None) -> Platform:
    """Claude on Google Vertex AI, with Application Default Credentials (or ``credentials``).

    ``credentials`` is a ``google.auth`` credentials object; by default the environment's.

    Raises:
        ConfigError: no region, no project, no Google credentials, or the ``vertex`` extra is not
            installed.
    """
    region = _region(
        _vertex_region(config, env),
        fallback=lambda: None,
        fix="set judge.region (e.g. us-east5, or global), or CLOUD_ML_REGION",
        provider="vertex",
    )
    project = _vertex_project(config, env)
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
        route=VERTEX,
        endpoint=_vertex_location(config, region, project),
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
        cache_secret=_cache_secret(env),
    )


ANTHROPIC = Route(
    name="anthropic",
    label="the Anthropic API",
    batches=True,
    compatible=True,
    open=_open_anthropic,
    endpoint=_anthropic_endpoint,
    has_credentials=lambda config, env: api_key_from(config, env) is not None,
)
BEDROCK = Route(
    name="bedrock",
    label="Amazon Bedrock",
    batches=False,
    compatible=False,
    open=bedrock_platform,
    endpoint=_bedrock_endpoint,
)
VERTEX = Route(
    name="vertex",
    label="Vertex AI",
    batches=False,
    compatible=False,
    open=lambda config, env: vertex_platform(config, env),
    endpoint=_vertex_endpoint,
)


# -- settings and credentials -------------------------------------------------------------------


def _cache_secret(env: Env) -> str | None:
    return env.get(CACHE_SECRET_ENV, "").strip() or None


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
