"""Faithfulness: how far the context backs the response, as the mean weight of its verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragaliq.evaluators._claims import NO_CLAIMS_NOTE, verdict_counts
from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.models import EvaluationResult, Verdict

__all__ = ["PRESETS", "FaithfulnessEvaluator"]

S, P, N, C = (
    Verdict.SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.CONTRADICTED,
)
PRESETS: dict[str, dict[Verdict, float]] = {
    "standard": {S: 1.0, P: 0.5, N: 0.0, C: 0.0},
    "axion": {S: 1.0, P: 0.5, N: 0.0, C: -1.0},
    "strict": {S: 1.0, P: 0.5, N: -1.0, C: -1.0},
}


class FaithfulnessEvaluator(Evaluator):
    """Mean verdict weight over a response's claims, clamped to [0, 1]."""

    name: ClassVar[str] = "faithfulness"
    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.7
    needs_claims: ClassVar[bool] = True

    def __init__(
        self,
        *,
        threshold: float | None = None,
        max_drop: float | None = None,
        preset: str = "standard",
        verdict_scores: Mapping[Verdict, float] | None = None,
    ) -> None:
        super().__init__(threshold=threshold, max_drop=max_drop)
        if preset not in PRESETS:
            raise ValueError(f"unknown faithfulness preset {preset!r}")
        self.preset = preset
        self.weights = {**PRESETS[preset], **(verdict_scores or {})}

    @property
    def options(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "verdict_scores": {v.value: w for v, w in self.weights.items()},
        }

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        verdicts = judgement.verdicts or ()
        if not verdicts:
            return self.result(
                1.0,
                "The response makes no factual claims, so it is vacuously faithful.",
                {"note": NO_CLAIMS_NOTE, "claims": 0},
            )
        total = sum(self.weights[v.verdict] for v in verdicts)
        return self.result(
            total / len(verdicts),
            f"{len(verdicts)} claims: {verdict_counts(verdicts)}.",
            {"claims": len(verdicts)},
        )
