"""Choosing, building and closing the judge a run uses, from the provider table.

Which judge a config asks for, and how it reaches Claude, is a row of
:data:`~ragaliq.judges.providers.PROVIDERS`; :func:`build_judge` builds that row's judge and
:func:`describe_judge` says what it would record, both from the row alone. The Claude judge (and
with it the Anthropic SDK, and the AWS or Google libraries of Bedrock and Vertex) is imported only
when a Claude judge is built, so that an offline run starts without it. Where the credentials go
comes only from trusted inputs (see :mod:`ragaliq.judges.platforms`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ragaliq.config import JudgeConfig
from ragaliq.judges.answers import AnswerRows
from ragaliq.judges.base import Judge
from ragaliq.judges.cache import CachedJudge
from ragaliq.judges.cascade import CascadeJudge, cascade_info
from ragaliq.judges.platforms import (
    API_KEY_ENV,
    BASE_URL_ENV,
    CACHE_SECRET_ENV,
    Platform,
    Route,
    api_key_from,
)
from ragaliq.judges.providers import AUTO, CLAUDE, PROVIDERS, provider_for
from ragaliq.judges.questions import prompt_version
from ragaliq.models import JudgeInfo
from ragaliq.offline import OfflineJudge
from ragaliq.redaction import register_secret

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
        saved = self.judge.stats.notice() if isinstance(self.judge, CascadeJudge) else None
        return (
            self.notices
            + tuple(found)
            + tuple(self.cache.warnings if self.cache else ())
            + ((saved,) if saved else ())
        )


def has_credentials(config: JudgeConfig, env: Mapping[str, str]) -> bool:
    """Whether the configured judge can be built as far as credentials go.

    The offline judge needs none; Claude through Anthropic's API needs a key (``auto`` too, or
    it judges offline); Bedrock and Vertex use the platform's credential chain, which is checked
    when the judge is opened.
    """
    route = (PROVIDERS[config.provider] if config.provider != AUTO else CLAUDE).route
    return route is None or route.has_credentials(config, env)


def describe_judge(config: JudgeConfig, *, env: Mapping[str, str]) -> JudgeInfo:
    """The provenance the configured judge would record, without building any client."""
    provider = provider_for(config, env)
    if provider.route is None:
        return OfflineJudge().info
    claude = _route_info(provider.route, config, env)
    return cascade_info(claude, OfflineJudge().info) if provider.offline_first else claude


def build_judge(
    config: JudgeConfig,
    *,
    env: Mapping[str, str],
    cache_path: Path | None,
    answers: AnswerRows | None = None,
) -> JudgeChoice:
    """The configured judge; ``auto`` falls back to the offline judge without a key.

    ``cascade`` puts the offline judge in front of Claude. ``bedrock`` and ``vertex`` reach
    Claude through the cloud platform. The answer store wraps Claude, signed with a key derived
    from the API key (on Bedrock and Vertex, from ``RAGALIQ_CACHE_SECRET``): ``answers`` when
    given (the action's signed rows, whatever the config says of a cache), else the cache file
    ``cache_path`` when the config keeps one. With ``judge.batch``, the batches sent are recorded
    beside the cache, so that an interrupted run can collect them.

    Raises:
        ConfigError: ``provider: claude`` or ``cascade`` without an API key; Bedrock or Vertex
            without a region, a project or credentials; batches on Bedrock or Vertex.
    """
    provider = provider_for(config, env)
    if provider.route is None:
        return JudgeChoice(judge=OfflineJudge(), notices=_offline_notices(config))
    from ragaliq.judges.claude import ClaudeJudge  # loads the Anthropic SDK: only when used

    platform = provider.route.open(config, env)
    register_secret(platform.cache_secret)  # whoever built the judge (CLI, action, Python API...)
    claude = ClaudeJudge(config, platform=platform, batch_state=_batch_state(cache_path))
    cached, notices = _cache(claude, platform, config, cache_path, answers)
    inner: Judge = cached or claude
    judge = CascadeJudge(OfflineJudge(), inner) if provider.offline_first else inner
    return JudgeChoice(judge=judge, cache=cached, claude=claude, notices=notices)


def _offline_notices(config: JudgeConfig) -> tuple[str, ...]:
    """What a run judged offline says: why (chosen, or no key for ``auto``), and about batches."""
    why = f"No {API_KEY_ENV} set. {OFFLINE_NOTICE}" if config.provider == AUTO else None
    batched = (BATCH_OFFLINE_NOTICE,) if config.batch else ()
    return (why or CHOSEN_OFFLINE_NOTICE, *batched)


def _route_info(route: Route, config: JudgeConfig, env: Mapping[str, str]) -> JudgeInfo:
    """What a Claude judge on ``route`` would record, as far as the settings tell it."""
    endpoint = route.endpoint(config, env)
    return JudgeInfo(
        provider=route.name,
        model=config.model_id,
        prompt_version=prompt_version(together=not config.one_question_per_call),
        endpoint=endpoint,
        structured_output=_mode(config, custom=route.compatible and endpoint is not None),
    )


def _cache(
    claude: Judge,
    platform: Platform,
    config: JudgeConfig,
    cache_path: Path | None,
    answers: AnswerRows | None,
) -> tuple[CachedJudge | None, tuple[str, ...]]:
    """The answer store in front of Claude, when there is one and a secret can sign it."""
    if answers is None and (not config.cache or cache_path is None):
        return None, ()
    if platform.cache_secret:
        if answers is not None:
            answers.bind(platform.cache_secret)
            return CachedJudge(claude, store=answers), ()
        return CachedJudge(claude, cache_path, secret=platform.cache_secret), ()
    return None, (
        f"The judge cache is not used: {platform.label} has no API key to sign its "
        "entries with (a planted cache must not pass); to keep one, pass a secret as the "
        f"action's cache-secret input, or as {CACHE_SECRET_ENV} to the command line.",
    )


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
"""Opens the judge of a config: ``(config, *, env, cache_path, answers=None)``; :func:`open_judge`
by default, a fake in tests."""


@asynccontextmanager
async def open_judge(
    config: JudgeConfig,
    *,
    env: Mapping[str, str],
    cache_path: Path | None,
    answers: AnswerRows | None = None,
) -> AsyncIterator[JudgeChoice]:
    """The configured judge (as :func:`build_judge`), closed when the block ends.

    Raises:
        ConfigError: as :func:`build_judge`.
    """
    choice = build_judge(config, env=env, cache_path=cache_path, answers=answers)
    try:
        yield choice
    finally:
        await choice.judge.aclose()
