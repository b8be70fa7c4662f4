"""Evaluators by name, and building the configured suite."""

from __future__ import annotations

from ragaliq.config import EvaluatorsConfig
from ragaliq.evaluators.base import Evaluator
from ragaliq.evaluators.faithfulness import FaithfulnessEvaluator
from ragaliq.evaluators.hallucination import HallucinationEvaluator
from ragaliq.evaluators.relevance import RelevanceEvaluator

__all__ = ["EVALUATORS", "build_evaluators"]

EVALUATORS: dict[str, type[Evaluator]] = {
    cls.name: cls for cls in (FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator)
}


def build_evaluators(config: EvaluatorsConfig) -> list[Evaluator]:
    """The enabled evaluators, each with its own threshold (or its own default)."""
    suite: list[Evaluator] = []
    f, h, r = config.faithfulness, config.hallucination, config.relevance
    if f.enabled:
        suite.append(
            FaithfulnessEvaluator(
                threshold=f.threshold,
                max_drop=f.max_drop,
                preset=f.preset,
                verdict_scores=f.verdict_scores,
            )
        )
    if h.enabled:
        suite.append(
            HallucinationEvaluator(
                threshold=h.threshold, max_drop=h.max_drop, min_confidence=h.min_confidence
            )
        )
    if r.enabled:
        suite.append(RelevanceEvaluator(threshold=r.threshold, max_drop=r.max_drop))
    return suite
