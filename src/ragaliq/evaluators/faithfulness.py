"""Faithfulness: how far the context backs the response, as the mean weight of its verdicts.

Claims the offline judge flags ``not_verifiable_offline`` weigh nothing either way: the mean is
over the other claims, and a case whose every claim is not verifiable is skipped (no score, never
0 or 1).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from ragaliq._fields import Weight
from ragaliq.evaluators._claims import (
    NO_CLAIMS_NOTE,
    UnverifiableClaims,
    checkable,
    describe_claims,
    none_verifiable,
    unchecked_details,
    verdict_counts,
)
from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions, VerdictLabel
from ragaliq.evaluators.questions import EXTRACT, VERIFY, Question
from ragaliq.models import CaseResult, EvaluationResult, Verdict, VerdictName, read_verdict
from ragaliq.text.counts import plural

__all__ = ["PRESETS", "FaithfulnessEvaluator", "FaithfulnessOptions"]

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


class FaithfulnessOptions(EvaluatorOptions):
    """Faithfulness: the mean weight of the claims' verdicts."""

    preset: Literal["standard", "axion", "strict"] = "standard"
    """Verdict weights: standard S=1 P=0.5 N=0 C=0; axion C=-1; strict N=-1 C=-1."""
    verdict_scores: dict[VerdictName, Weight] = Field(default_factory=dict)
    """Overrides of single verdict weights, each at most 1 (Axion's verdict names are read too).
    The mean is clamped to [0, 1]; a verdict is named as ours or as Axion's
    (``CONTRADICTORY: -2.0``), in any letter case."""

    @field_validator("verdict_scores", mode="before")
    @classmethod
    def _one_name_per_verdict(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        named: dict[Verdict, str] = {}
        for key in value:
            verdict = read_verdict(key)
            if not isinstance(verdict, Verdict):
                continue  # refused by the key's own validation, with the verdicts to choose from
            if verdict in named:
                raise ValueError(
                    f"{named[verdict]} and {key} name the same verdict ({verdict.value}); keep one"
                )
            named[verdict] = str(key)
        return value

    def weights(self) -> dict[Verdict, float]:
        """Every verdict's weight: the preset's, with the overrides."""
        return {**PRESETS[self.preset], **self.verdict_scores}

    def scoring(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "verdict_scores": {v.value: w for v, w in self.weights().items()},
        }


class FaithfulnessEvaluator(Evaluator[FaithfulnessOptions]):
    """Mean verdict weight over a response's claims, clamped to [0, 1].

    Claims not verifiable offline are left out of the mean; with only such claims the case is
    skipped.
    """

    name: ClassVar[str] = "faithfulness"
    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.7
    questions: ClassVar[tuple[Question[Any], ...]] = (EXTRACT, VERIFY)
    findings = (UnverifiableClaims,)
    Options = FaithfulnessOptions

    def __init__(self, options: FaithfulnessOptions | None = None, /, **values: Any) -> None:
        super().__init__(options, **values)
        self.weights = self.settings.weights()

    def describe_shortfall(self, case: CaseResult, *, label: VerdictLabel) -> list[str]:
        """The claims that weigh less than a full point, with their verdicts and reasons."""
        return describe_claims(
            (c for c in checkable(case.claims) if self.weights[c.verdict] < 1.0), label
        )

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        verdicts = judgement.verdicts or ()
        if not verdicts:
            return self.result(
                1.0,
                "The response makes no factual claims, so it is vacuously faithful.",
                {"note": NO_CLAIMS_NOTE, "claims": 0},
            )
        counted = checkable(verdicts)
        if not counted:
            return self.skipped(none_verifiable(len(verdicts)), unchecked_details(verdicts))
        total = sum(self.weights[v.verdict] for v in counted)
        return self.result(
            total / len(counted),
            f"{plural(len(verdicts), 'claim')}: {verdict_counts(verdicts)}.",
            dict(unchecked_details(verdicts)),
        )
