"""Hallucination: the share of claims the context does not back, and which ones they are."""

from __future__ import annotations

from typing import Any, ClassVar

from ragaliq.evaluators._claims import NO_CLAIMS_NOTE
from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.models import ClaimVerdict, EvaluationResult, Verdict

__all__ = ["HallucinationEvaluator"]


class HallucinationEvaluator(Evaluator):
    """Score ``1 - hallucinated / claims``; a claim is hallucinated unless SUPPORTED.

    With ``min_confidence`` set, a SUPPORTED verdict below that confidence counts as hallucinated.
    """

    name: ClassVar[str] = "hallucination"
    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.8
    needs_claims: ClassVar[bool] = True

    def __init__(
        self,
        *,
        threshold: float | None = None,
        max_drop: float | None = None,
        min_confidence: float | None = None,
    ) -> None:
        super().__init__(threshold=threshold, max_drop=max_drop)
        self.min_confidence = min_confidence

    @property
    def options(self) -> dict[str, Any]:
        return {"min_confidence": self.min_confidence}

    def is_hallucinated(self, verdict: ClaimVerdict) -> bool:
        """Whether one claim counts as hallucinated under this evaluator's options."""
        if verdict.verdict is not Verdict.SUPPORTED:
            return True
        return self.min_confidence is not None and verdict.confidence < self.min_confidence

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        verdicts = judgement.verdicts or ()
        if not verdicts:
            return self.result(
                1.0,
                "The response makes no factual claims, so none is hallucinated.",
                {"note": NO_CLAIMS_NOTE, "claims": 0, "hallucinated_claims": []},
            )
        hallucinated = [i for i, v in enumerate(verdicts) if self.is_hallucinated(v)]
        listed = [
            {"index": i, "text": verdicts[i].text, "verdict": verdicts[i].verdict.value}
            for i in hallucinated
        ]
        reasoning = (
            f"{len(hallucinated)} of {len(verdicts)} claims are not supported by the context."
            if hallucinated
            else f"All {len(verdicts)} claims are supported by the context."
        )
        return self.result(
            1.0 - len(hallucinated) / len(verdicts),
            reasoning,
            {"claims": len(verdicts), "hallucinated_claims": listed},
        )
