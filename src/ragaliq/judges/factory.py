"""Choosing, building and closing the judge a run uses.

The Claude judge (and with it the Anthropic SDK) is imported only when a Claude judge is built,
so that an offline run starts without it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError
from ragaliq.judges.base import Judge
from ragaliq.judges.cache import CachedJudge
from ragaliq.judges.cascade import CascadeJudge, cascade_info
from ragaliq.judges.offline import OfflineJudge
from ragaliq.judges.prompts import PROMPT_VERSION
from ragaliq.models import JudgeInfo

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "JudgeChoice",
    "JudgeOpener",
    "api_key_from",
    "build_judge",
    "describe_judge",
    "open_judge",
]

API_KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
OFFLINE_NOTICE = (
    "Judged by the offline heuristic judge "
    "(word, number and name grounding, not a language model); "
    f"set {API_KEY_ENV} to judge with Claude."
)
"""What a run says when ``provider: auto`` found no key."""
CHOSEN_OFFLINE_NOTICE = (
    "Judged by the offline heuristic judge "
    "(word, number and name grounding, not a language model), as judge.provider: offline asks; "
    f"use provider: auto or claude with {API_KEY_ENV} to judge with Claude."
)
"""What a run says when the config chose the offline judge."""


@dataclass(frozen=True, kw_only=True)
class JudgeChoice:
    """The judge to use, and what the user should be told about the choice."""

    judge: Judge
    notices: tuple[str, ...] = ()
    cache: CachedJudge | None = None
    """The cache layer, when there is one; its warnings belong in the report."""

    def all_notices(self) -> tuple[str, ...]:
        """The choice's notices plus anything the cache ran into."""
        return self.notices + tuple(self.cache.warnings if self.cache else ())


def api_key_from(config: JudgeConfig, env: Mapping[str, str]) -> str | None:
    """The Anthropic API key from the config or the environment, if any."""
    if config.api_key is not None and config.api_key.get_secret_value().strip():
        return config.api_key.get_secret_value().strip()
    return env.get(API_KEY_ENV, "").strip() or None


def describe_judge(config: JudgeConfig, *, env: Mapping[str, str]) -> JudgeInfo:
    """The provenance the configured judge would record, without building any client."""
    if config.provider == "offline" or (
        config.provider == "auto" and api_key_from(config, env) is None
    ):
        return OfflineJudge().info
    claude = JudgeInfo(provider="anthropic", model=config.model, prompt_version=PROMPT_VERSION)
    if config.provider == "cascade":
        return cascade_info(claude, OfflineJudge().info)
    return claude


def build_judge(
    config: JudgeConfig, *, env: Mapping[str, str], cache_path: Path | None
) -> JudgeChoice:
    """The configured judge; ``auto`` falls back to the offline judge without a key.

    ``cascade`` puts the offline judge in front of Claude. The cache (``cache_path``, when the
    config keeps one) wraps Claude, signed with a key derived from the API key.

    Raises:
        ConfigError: ``provider: claude`` or ``cascade`` without an API key.
    """
    key = api_key_from(config, env)
    if config.provider == "offline":
        return JudgeChoice(judge=OfflineJudge(), notices=(CHOSEN_OFFLINE_NOTICE,))
    if key is None:
        if config.provider in ("claude", "cascade"):
            raise ConfigError(
                f"judge.provider: {config.provider} needs an API key; set {API_KEY_ENV} "
                "(or judge.api_key), or use provider: offline"
            )
        return JudgeChoice(
            judge=OfflineJudge(),
            notices=(f"No {API_KEY_ENV} set. {OFFLINE_NOTICE}",),
        )
    from ragaliq.judges.claude import ClaudeJudge  # loads the Anthropic SDK: only when used

    base_url = config.base_url or env.get(BASE_URL_ENV) or None
    claude = ClaudeJudge(config, api_key=key, base_url=base_url)
    cached = (
        CachedJudge(claude, cache_path, secret=key)
        if config.cache and cache_path is not None
        else None
    )
    inner: Judge = cached or claude
    if config.provider == "cascade":
        return JudgeChoice(judge=CascadeJudge(OfflineJudge(), inner), cache=cached)
    return JudgeChoice(judge=inner, cache=cached)


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
