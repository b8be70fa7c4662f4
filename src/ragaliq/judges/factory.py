"""Choosing and building the judge a run uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError
from ragaliq.judges.base import Judge
from ragaliq.judges.offline import OfflineJudge

__all__ = ["JudgeChoice", "api_key_from", "build_judge"]

API_KEY_ENV = "ANTHROPIC_API_KEY"


@dataclass(frozen=True, kw_only=True)
class JudgeChoice:
    """The judge to use, and what the user should be told about the choice."""

    judge: Judge
    notices: tuple[str, ...] = ()


def api_key_from(config: JudgeConfig, env: Mapping[str, str]) -> str | None:
    """The Anthropic API key from the config or the environment, if any."""
    if config.api_key is not None and config.api_key.get_secret_value().strip():
        return config.api_key.get_secret_value().strip()
    return env.get(API_KEY_ENV, "").strip() or None


def build_judge(config: JudgeConfig, *, env: Mapping[str, str]) -> JudgeChoice:
    """The configured judge; ``auto`` falls back to the offline judge without a key."""
    key = api_key_from(config, env)
    if config.provider == "offline":
        return JudgeChoice(judge=OfflineJudge())
    if config.provider == "auto" and key is None:
        return JudgeChoice(
            judge=OfflineJudge(),
            notices=(
                f"No {API_KEY_ENV} set: using the offline heuristic judge. Set the key to judge "
                "with Claude.",
            ),
        )
    raise ConfigError(
        f"judge.provider: '{config.provider}' needs the Claude judge, which this build lacks; "
        "set judge.provider: offline"
    )
