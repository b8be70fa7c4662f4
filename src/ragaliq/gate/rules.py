"""What the gate enforces: the policy of a config, ratcheted against the baseline's."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragaliq.baseline import RecordedPolicy
from ragaliq.config import POLICY_STRICTNESS, GateConfig, stricter

__all__ = ["GateRules"]


class GateRules(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    """What the gate enforces, taken from the head config."""

    max_drop: dict[str, float] = Field(default_factory=dict)
    """Per evaluator; evaluators not listed use ``default_max_drop``."""
    default_max_drop: float = 0.05
    fail_on_new_hallucinations: bool = False
    on_error: Literal["fail", "ignore"] = "fail"
    count_unstable: bool = False
    """Whether claims flagged ``unstable`` (repeats disagreed) can be newly hallucinated."""
    on_missing_cases: Literal["fail", "notice"] = "fail"
    """Whether baseline cases missing from the run fail the gate."""
    confidence: float = 0.95
    """The level of the interval a drop must clear (lie wholly below zero) to fail the gate."""
    on_inconclusive: Literal["pass", "fail"] = "pass"
    """What a drop past ``max_drop`` that the suite cannot resolve does."""

    @classmethod
    def from_config(cls, config: GateConfig) -> GateRules:
        """The rules of a config file."""
        return cls(
            max_drop={
                name: options.max_drop
                for name, options in config.evaluators.sections()
                if options.max_drop is not None
            },
            default_max_drop=config.gate.max_drop,
            fail_on_new_hallucinations=config.gate.fail_on_new_hallucinations,
            on_error=config.gate.on_error,
            count_unstable=config.gate.count_unstable,
            on_missing_cases=config.gate.on_missing_cases,
            confidence=config.gate.confidence,
            on_inconclusive=config.gate.on_inconclusive,
        )

    @classmethod
    def recorded_policy(
        cls, config: GateConfig | None, evaluators: Iterable[str]
    ) -> RecordedPolicy | None:
        """What a baseline records of a config's policy; nothing without a config."""
        return None if config is None else cls.from_config(config).recorded(evaluators)

    def drop_for(self, evaluator: str) -> float:
        """The largest drop from the baseline tolerated for one evaluator."""
        return self.max_drop.get(evaluator, self.default_max_drop)

    def recorded(self, evaluators: Iterable[str]) -> RecordedPolicy:
        """These rules as a baseline records them, for the given evaluators."""
        return RecordedPolicy(
            max_drop={name: self.drop_for(name) for name in evaluators},
            fail_on_new_hallucinations=self.fail_on_new_hallucinations,
            on_error=self.on_error,
            count_unstable=self.count_unstable,
            on_missing_cases=self.on_missing_cases,
            confidence=self.confidence,
            on_inconclusive=self.on_inconclusive,
        )

    def at_least(self, policy: RecordedPolicy) -> tuple[GateRules, list[str]]:
        """These rules, made no looser than the baseline's; and what had been loosened."""
        loosened: list[str] = []
        max_drop = dict(self.max_drop)
        for name, recorded in sorted(policy.max_drop.items()):
            if self.drop_for(name) > recorded:
                loosened.append(f"{name} max_drop {recorded:g} → {self.drop_for(name):g}")
                max_drop[name] = recorded
        update: dict[str, Any] = {"max_drop": max_drop}
        for setting in sorted(
            set(POLICY_STRICTNESS) & set(type(self).model_fields) | {"confidence"}
        ):
            mine, recorded = getattr(self, setting), getattr(policy, setting)
            if stricter(setting, mine, recorded) != mine:
                loosened.append(f"{setting} {_shown(recorded)} → {_shown(mine)}")
                update[setting] = recorded
        return self.model_copy(update=update), loosened


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)
