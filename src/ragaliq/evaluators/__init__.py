"""Evaluators: faithfulness, hallucination and relevance, and the registry that lists them."""

from __future__ import annotations

from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions
from ragaliq.evaluators.faithfulness import PRESETS, FaithfulnessEvaluator, FaithfulnessOptions
from ragaliq.evaluators.hallucination import HallucinationEvaluator, HallucinationOptions
from ragaliq.evaluators.registry import EVALUATORS, build_evaluators, evaluator_class
from ragaliq.evaluators.relevance import RelevanceEvaluator

__all__ = [
    "EVALUATORS",
    "PRESETS",
    "CaseJudgement",
    "Evaluator",
    "EvaluatorOptions",
    "FaithfulnessEvaluator",
    "FaithfulnessOptions",
    "HallucinationEvaluator",
    "HallucinationOptions",
    "RelevanceEvaluator",
    "build_evaluators",
    "evaluator_class",
]
