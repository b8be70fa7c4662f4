"""Relevance: how well the response answers the query, as the judge rates it.

A case the judge cannot rate (the offline judge, for a query without key terms) is skipped with
the judge's reason, never scored.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions
from ragaliq.evaluators.questions import RELEVANCE, Question
from ragaliq.models import EvaluationResult

__all__ = ["RelevanceEvaluator"]


class RelevanceEvaluator(Evaluator[EvaluatorOptions]):
    """The judge's 0..1 relevance score, with its reasoning."""

    name: ClassVar[str] = "relevance"
    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.7
    questions: ClassVar[tuple[Question[Any], ...]] = (RELEVANCE,)

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        if judgement.relevance is None:
            return self.error("The judge gave no relevance rating for this case.")
        rated = judgement.relevance
        if rated.score is None:
            return self.skipped(rated.reasoning)
        return self.result(rated.score, rated.reasoning)
