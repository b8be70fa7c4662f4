"""Evaluators, one module each, and the registry that lists them."""

from __future__ import annotations

from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions
from ragaliq.evaluators.context_precision import ContextPrecisionEvaluator, rank_weighted_precision
from ragaliq.evaluators.context_recall import ContextRecallEvaluator
from ragaliq.evaluators.faithfulness import PRESETS, FaithfulnessEvaluator, FaithfulnessOptions
from ragaliq.evaluators.hallucination import HallucinationEvaluator, HallucinationOptions
from ragaliq.evaluators.registry import (
    EVALUATORS,
    build_evaluators,
    evaluator_class,
    response_judged_by,
)
from ragaliq.evaluators.relevance import RelevanceEvaluator

__all__ = [
    "EVALUATORS",
    "PRESETS",
    "CaseJudgement",
    "ContextPrecisionEvaluator",
    "ContextRecallEvaluator",
    "Evaluator",
    "EvaluatorOptions",
    "FaithfulnessEvaluator",
    "FaithfulnessOptions",
    "HallucinationEvaluator",
    "HallucinationOptions",
    "RelevanceEvaluator",
    "build_evaluators",
    "evaluator_class",
    "rank_weighted_precision",
    "response_judged_by",
]
