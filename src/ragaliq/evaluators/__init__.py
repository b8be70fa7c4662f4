"""Evaluators: faithfulness, hallucination and relevance, and the registry that builds them."""

from __future__ import annotations

from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.evaluators.faithfulness import PRESETS, FaithfulnessEvaluator
from ragaliq.evaluators.hallucination import HallucinationEvaluator
from ragaliq.evaluators.registry import EVALUATORS, build_evaluators
from ragaliq.evaluators.relevance import RelevanceEvaluator

__all__ = [
    "EVALUATORS",
    "PRESETS",
    "CaseJudgement",
    "Evaluator",
    "FaithfulnessEvaluator",
    "HallucinationEvaluator",
    "RelevanceEvaluator",
    "build_evaluators",
]
