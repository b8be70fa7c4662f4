"""Choosing, building and closing the judge a run uses.

The Claude judge (and with it the Anthropic SDK, and the AWS or Google libraries of Bedrock and
Vertex) is imported only when a Claude judge is built, so that an offline run starts without it.

The endpoint the credentials go to comes only from trusted inputs: the config's
``judge.base_url`` (read at the base commit in a gate) or, for Anthropic's API, the
``ANTHROPIC_BASE_URL`` in the environment the caller passes; in the action's gate mode that is only
ever the workflow's ``anthropic-base-url`` input (:mod:`ragaliq.environment` removes the variable
an earlier step could have set).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError
from ragaliq.judges.base import Judge
from ragaliq.judges.cache import CachedJudge
from ragaliq.judges.cascade import CascadeJudge, cascade_info
from ragaliq.judges.offline import OfflineJudge
from ragaliq.judges.prompts import PROMPT_VERSION
from ragaliq.models import JudgeInfo
from ragaliq.redaction import register_secret

if TYPE_CHECKING:
    from ragaliq.judges.claude import ClaudeJudge

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "CACHE_SECRET_ENV",
    "JudgeChoice",
    "JudgeOpener",
    "api_key_from",
    "build_judge",
    "describe_judge",
    "has_credentials",
    "open_judge",
]

API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
CACHE_SECRET_ENV = "RAGALIQ_CACHE_SECRET"
"""Signs the judge cache of a Bedrock or Vertex judge, which has no API key to sign it with."""
PLATFORMS = ("bedrock", "vertex")
OFFLINE_NOTICE = (
    "Judged by the offline heuristic judge "
    "(word, number and name grounding, not a language model); "
    f"set {API_KEY_ENV} to judge with Claude."
)
"""What a run says when ``provider: auto`` found no key."""
CHOSEN_OFFLINE_NOTICE = (
    "Judged by the offline heuristic judge "
    "(word, number and name grounding, not a language model); "
    f"with {API_KEY_ENV} set, judge.provider auto or claude judges with Claude."
)
"""What a run says when it judges offline though a key could be at hand: the config chose the
offline judge, or the baseline was judged by it (a notice of its own says so)."""
BATCH_OFFLINE_NOTICE = (
    "judge.batch (--batch) has no effect on the offline judge: it makes no API calls to send as "
    "batches, so the run was judged as usual."
)
"""What a run says when it was asked for batches and judged offline."""


class _Noticing(Protocol):
    @property
    def notices(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, kw_only=True)
class JudgeChoice:
    """The judge to use, and what the user should be told about the choice."""

    judge: Judge
    notices: tuple[str, ...] = ()
    cache: CachedJudge | None = None
    """The cache layer, when there is one; its warnings belong in the report."""
    claude: _Noticing | None = None
    """The Claude judge, when there is one: what it learned while judging (a structured-output
    fallback, the batches it sent) belongs in the report too."""

    def all_notices(self) -> tuple[str, ...]:
        """The choice's notices plus anything the judge and its cache ran into."""
        found = self.claude.notices if self.claude is not None else ()
        return self.notices + tuple(found) + tuple(self.cache.warnings if self.cache else ())


def api_key_from(config: JudgeConfig, env: Mapping[str, str]) -> str | None:
    """The Anthropic API key from the config or the environment, if any."""
    if config.api_key is not None and config.api_key.get_secret_value().strip():
        return config.api_key.get_secret_value().strip()
    return env.get(API_KEY_ENV, "").strip() or None


def has_credentials(config: JudgeConfig, env: Mapping[str, str]) -> bool:
    """Whether the configured judge can be built as far as credentials go.

    The offline judge needs none; Claude through Anthropic's API needs a key; Bedrock and Vertex
    use the platform's credential chain, which is checked when the judge is opened.
    """
    return config.provider in ("offline", *PLATFORMS) or api_key_from(config, env) is not None


def describe_judge(config: JudgeConfig, *, env: Mapping[str, str]) -> JudgeInfo:
    """The provenance the configured judge would record, without building any client."""
    if config.provider == "offline" or (
        config.provider == "auto" and api_key_from(config, env) is None
    ):
        return OfflineJudge().info
    if config.provider in PLATFORMS:
        return JudgeInfo(
            provider=config.provider,
            model=config.model_id,
            prompt_version=PROMPT_VERSION,
            endpoint=_platform_endpoint(config, env),
            structured_output=_mode(config, custom=False),
        )
    base_url = _base_url(config, env)
    claude = JudgeInfo(
        provider="anthropic",
        model=config.model_id,
        prompt_version=PROMPT_VERSION,
        endpoint=base_url.rstrip("/") if base_url else None,
        structured_output=_mode(config, custom=base_url is not None),
    )
    if config.provider == "cascade":
        return cascade_info(claude, OfflineJudge().info)
    return claude


def build_judge(
    config: JudgeConfig, *, env: Mapping[str, str], cache_path: Path | None
) -> JudgeChoice:
    """The configured judge; ``auto`` falls back to the offline judge without a key.

    ``cascade`` puts the offline judge in front of Claude. ``bedrock`` and ``vertex`` reach
    Claude through the cloud platform. The cache (``cache_path``, when the config keeps one)
    wraps Claude, signed with a key derived from the API key (on Bedrock and Vertex, from
    ``RAGALIQ_CACHE_SECRET``). With ``judge.batch``, the batches sent are recorded beside the
    cache, so that an interrupted run can collect them.

    Raises:
        ConfigError: ``provider: claude`` or ``cascade`` without an API key; Bedrock or Vertex
            without a region, a project or credentials; batches on Bedrock or Vertex.
    """
    batched = (BATCH_OFFLINE_NOTICE,) if config.batch else ()
    if config.provider == "offline":
        return JudgeChoice(judge=OfflineJudge(), notices=(CHOSEN_OFFLINE_NOTICE, *batched))
    if config.provider in PLATFORMS:
        return _platform_judge(config, env=env, cache_path=cache_path)
    key = api_key_from(config, env)
    if key is None:
        if config.provider in ("claude", "cascade"):
            raise ConfigError(
                f"judge.provider: {config.provider} needs an API key; set {API_KEY_ENV} "
                "(or judge.api_key), or use provider: offline"
            )
        return JudgeChoice(
            judge=OfflineJudge(),
            notices=(f"No {API_KEY_ENV} set. {OFFLINE_NOTICE}", *batched),
        )
    from ragaliq.judges.claude import ClaudeJudge  # loads the Anthropic SDK: only when used

    register_secret(key)  # whoever built the judge (CLI, action, Python API, pytest plugin)
    claude = ClaudeJudge(
        config,
        api_key=key,
        base_url=_base_url(config, env),
        batch_state=_batch_state(cache_path),
    )
    cached = (
        CachedJudge(claude, cache_path, secret=key)
        if config.cache and cache_path is not None
        else None
    )
    inner: Judge = cached or claude
    if config.provider == "cascade":
        return JudgeChoice(judge=CascadeJudge(OfflineJudge(), inner), cache=cached, claude=claude)
    return JudgeChoice(judge=inner, cache=cached, claude=claude)


def _platform_judge(
    config: JudgeConfig, *, env: Mapping[str, str], cache_path: Path | None
) -> JudgeChoice:
    from ragaliq.judges.claude import ClaudeJudge  # loads the Anthropic SDK: only when used
    from ragaliq.judges.platforms import bedrock_platform, vertex_platform

    platform = (
        bedrock_platform(config, env)
        if config.provider == "bedrock"
        else vertex_platform(config, env)
    )
    claude: ClaudeJudge = ClaudeJudge(config, platform=platform)
    secret = env.get(CACHE_SECRET_ENV, "").strip()
    register_secret(secret or None)
    notices: tuple[str, ...] = ()
    cached = None
    if config.cache and cache_path is not None:
        if secret:
            cached = CachedJudge(claude, cache_path, secret=secret)
        else:
            notices = (
                f"The judge cache is not used: {platform.label} has no API key to sign its "
                f"entries with (a planted cache must not pass); set {CACHE_SECRET_ENV} from a "
                "secret, on this step only, to keep one.",
            )
    return JudgeChoice(judge=cached or claude, cache=cached, claude=claude, notices=notices)


def _platform_endpoint(config: JudgeConfig, env: Mapping[str, str]) -> str | None:
    """The endpoint a Bedrock or Vertex judge would record, when the config tells it.

    None when only the credentials would (a profile's region, the credentials' project).
    """
    from ragaliq.judges.platforms import bedrock_url, vertex_url

    if config.provider == "bedrock":
        region = config.region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        return (config.base_url or bedrock_url(region)).rstrip("/") if region else None
    region = config.region or env.get("CLOUD_ML_REGION")
    project = (
        config.project or env.get("ANTHROPIC_VERTEX_PROJECT_ID") or env.get("GOOGLE_CLOUD_PROJECT")
    )
    if not region or not project:
        return None
    base_url = (config.base_url or vertex_url(region)).rstrip("/")
    return f"{base_url}/projects/{project}/locations/{region}"


def _base_url(config: JudgeConfig, env: Mapping[str, str]) -> str | None:
    return config.base_url or env.get(BASE_URL_ENV, "").strip() or None


def _mode(config: JudgeConfig, *, custom: bool) -> str | None:
    """The structured-output mode a judge starts with (``auto`` settles it on a custom URL)."""
    if config.structured_output != "auto":
        return config.structured_output
    return None if custom else "schema"


def _batch_state(cache_path: Path | None) -> Path | None:
    if cache_path is None:
        return None
    from ragaliq.judges.batch import STATE_SUFFIX

    return cache_path.with_name(cache_path.name + STATE_SUFFIX)


JudgeOpener = Callable[..., AbstractAsyncContextManager[JudgeChoice]]
"""Opens the judge of a config: ``(config, *, env, cache_path)``; :func:`open_judge` by default,
a fake in tests."""


@asynccontextmanager
async def open_judge(
    config: JudgeConfig, *, env: Mapping[str, str], cache_path: Path | None
) -> AsyncIterator[JudgeChoice]:
    """The configured judge (as :func:`build_judge`), closed when the block ends.

    Raises:
        ConfigError: as :func:`build_judge`.
    """
    choice = build_judge(config, env=env, cache_path=cache_path)
    try:
        yield choice
    finally:
        await choice.judge.aclose()
