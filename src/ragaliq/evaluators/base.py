"""The ``Evaluator`` base class: one score per case from the judge's shared answers."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from ragaliq.models import ClaimVerdict, EvaluationResult, EvaluatorInfo, RelevanceResult, TestCase

__all__ = ["CaseJudgement", "Evaluator"]


@dataclass(frozen=True, kw_only=True)
class CaseJudgement:
    """What the judge said about one case; every evaluator reads from this one record."""

    case: TestCase
    verdicts: tuple[ClaimVerdict, ...] | None = None
    """One verdict per claim, or None when no evaluator asked for claims."""
    relevance: RelevanceResult | None = None


class Evaluator(ABC):
    """Turns a :class:`CaseJudgement` into an :class:`EvaluationResult`.

    Subclasses set the class variables and implement :meth:`evaluate`; the runner asks the judge
    only for what some evaluator ``needs``, once per case.
    """

    name: ClassVar[str]
    version: ClassVar[str]
    """Bumped whenever scoring changes, so a changed score shows up as a changed evaluator."""
    default_threshold: ClassVar[float]
    needs_claims: ClassVar[bool] = False
    needs_relevance: ClassVar[bool] = False

    def __init__(self, *, threshold: float | None = None, max_drop: float | None = None) -> None:
        self.threshold = self.default_threshold if threshold is None else threshold
        self.max_drop = max_drop

    @property
    def options(self) -> dict[str, Any]:
        """Scoring options recorded in the report; empty for evaluators without any."""
        return {}

    def info(self) -> EvaluatorInfo:
        """How this evaluator is configured, for the report."""
        return EvaluatorInfo(threshold=self.threshold, version=self.version, options=self.options)

    @abstractmethod
    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        """Score one case."""

    def result(
        self, score: float, reasoning: str, details: dict[str, Any] | None = None
    ) -> EvaluationResult:
        """An ``ok`` result, passed when the score reaches the threshold."""
        score = round(min(1.0, max(0.0, score)), 6)
        return EvaluationResult(
            evaluator=self.name,
            score=score,
            passed=score >= self.threshold,
            reasoning=reasoning,
            details=details or {},
        )

    def error(self, reason: str) -> EvaluationResult:
        """An ``error`` result: the case could not be judged, so there is no score."""
        return EvaluationResult(
            evaluator=self.name, score=None, passed=None, status="error", reasoning=reason
        )
