"""Agreement between a judge and gold labels: confusion matrix, accuracy, balanced accuracy, kappa.

Plain Python over a confusion matrix ``{gold: {predicted: count}}``; a metric that cannot be
computed (an empty matrix, chance agreement of 1) is NaN, never a made-up number. The
:class:`Calibration` of a judge is measured here from its predictions (:func:`measure`), below
both the judges that make the predictions (:mod:`ragaliq.calibrate`) and the report that prints
them (:mod:`ragaliq.report.calibration`), so printing a calibration loads no judge.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaliq.labels import VERDICT_LABELS
from ragaliq.models import JudgeInfo, Usage, Verdict

__all__ = [
    "BINARY_LABELS",
    "BinaryCalibration",
    "Calibration",
    "ClaimPrediction",
    "Confusion",
    "JudgeFailure",
    "accuracy",
    "balanced_accuracy",
    "cohen_kappa",
    "confusion_matrix",
    "kappa_strength",
    "measure",
    "ratio",
]

Confusion = dict[str, dict[str, int]]
"""``{gold label: {predicted label: count}}``, every label a row and a column."""


def confusion_matrix(pairs: Iterable[tuple[str, str]], labels: Sequence[str]) -> Confusion:
    """Count (gold, predicted) pairs into a matrix with every label as a row and a column.

    Raises:
        ValueError: a pair uses a label not in ``labels``.
    """
    matrix: Confusion = {gold: dict.fromkeys(labels, 0) for gold in labels}
    for gold, predicted in pairs:
        if gold not in matrix or predicted not in matrix:
            raise ValueError(f"unknown label in ({gold!r}, {predicted!r}); labels are {labels}")
        matrix[gold][predicted] += 1
    return matrix


def _total(confusion: Mapping[str, Mapping[str, int]]) -> int:
    return sum(sum(row.values()) for row in confusion.values())


def accuracy(confusion: Mapping[str, Mapping[str, int]]) -> float:
    """The share of the pairs on the diagonal; NaN for an empty matrix."""
    total = _total(confusion)
    if total == 0:
        return math.nan
    return sum(row.get(gold, 0) for gold, row in confusion.items()) / total


def balanced_accuracy(confusion: Mapping[str, Mapping[str, int]]) -> float:
    """The mean recall over the gold labels that occur; NaN for an empty matrix.

    Unlike accuracy, it does not reward a judge for always giving the most common label.
    """
    recalls = [
        row.get(gold, 0) / sum(row.values()) for gold, row in confusion.items() if any(row.values())
    ]
    return sum(recalls) / len(recalls) if recalls else math.nan


def cohen_kappa(confusion: Mapping[str, Mapping[str, int]]) -> float:
    """Cohen's kappa, ``(p_o - p_e) / (1 - p_e)``; NaN when empty or when ``p_e`` is 1.

    ``p_o`` is the observed agreement and ``p_e`` the agreement expected if the judge gave its
    verdicts at its own rates regardless of the claims: the sum over labels of the product of the
    label's gold share and its predicted share.
    """
    total = _total(confusion)
    if total == 0:
        return math.nan
    labels = list(confusion)
    gold_share = {label: sum(confusion[label].values()) / total for label in labels}
    predicted_share = {
        label: sum(row.get(label, 0) for row in confusion.values()) / total for label in labels
    }
    observed = accuracy(confusion)
    expected = sum(gold_share[label] * predicted_share[label] for label in labels)
    if math.isclose(expected, 1.0):
        return math.nan
    return (observed - expected) / (1.0 - expected)


def ratio(numerator: int, denominator: int) -> float:
    """``numerator / denominator``, NaN for a zero denominator."""
    return numerator / denominator if denominator else math.nan


def kappa_strength(kappa: float) -> str:
    """A word for a kappa, on the scale of Landis and Koch (1977)."""
    if math.isnan(kappa):
        return "undefined"
    if kappa < 0:
        return "poor (worse than chance)"
    for bound, word in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if kappa <= bound:
            return word
    return "almost perfect"


# --- the calibration of a judge --------------------------------------------------------------

SUPPORTED_LABEL = "supported"
HALLUCINATED_LABEL = "hallucinated"
BINARY_LABELS: tuple[str, ...] = (SUPPORTED_LABEL, HALLUCINATED_LABEL)
"""The rows and columns of the supported-versus-hallucinated confusion matrix."""


@dataclass(frozen=True, kw_only=True)
class ClaimPrediction:
    """The judge's verdict on one labelled claim, beside the label."""

    id: str
    gold: Verdict
    predicted: Verdict
    confidence: float
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class JudgeFailure:
    """A labelled claim the judge could not verify."""

    id: str
    message: str


@dataclass(frozen=True, kw_only=True)
class BinaryCalibration:
    """Agreement on supported versus hallucinated (anything but SUPPORTED), as the gate counts it.

    ``precision`` and ``recall`` are about the hallucinated class: the share of the claims the judge
    flags that are really not supported, and the share of the unsupported claims it flags.
    """

    accuracy: float
    balanced_accuracy: float
    kappa: float
    precision: float
    recall: float
    labels: tuple[str, ...] = BINARY_LABELS
    confusion: Confusion = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """How far a judge agrees with labelled claims.

    Every metric is NaN when it is undefined: no claim was judged, or (for kappa) gold labels and
    verdicts all fall in one class. Kappa runs from -1 to 1; the others from 0 to 1.
    """

    n: int
    """Claims the judge gave a verdict for; claims it failed on are in ``errors`` instead."""
    accuracy: float
    balanced_accuracy: float
    """The mean of the per-label recalls, over the labels that occur among the gold labels."""
    kappa: float
    """Cohen's kappa: agreement corrected for the agreement expected by chance."""
    labels: tuple[str, ...]
    confusion: Confusion
    binary: BinaryCalibration
    errors: tuple[JudgeFailure, ...] = ()
    predictions: tuple[ClaimPrediction, ...] = ()
    judge: JudgeInfo | None = None
    usage: Usage = field(default_factory=Usage)
    min_confidence: float | None = None
    """A SUPPORTED verdict below this confidence counted as hallucinated in ``binary``."""
    stopped_early: str | None = None
    """Why some claims were not sent to the judge (the budget); None when all were."""

    @property
    def total(self) -> int:
        """Claims judged plus claims the judge failed on."""
        return self.n + len(self.errors)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view: every metric, both matrices, the errors and each prediction."""

        def num(value: float) -> float | None:
            return None if math.isnan(value) else round(value, 6)

        return {
            "judge": self.judge.model_dump(mode="json") if self.judge else None,
            "n": self.n,
            "errors": [{"id": e.id, "message": e.message} for e in self.errors],
            "stopped_early": self.stopped_early,
            "accuracy": num(self.accuracy),
            "balanced_accuracy": num(self.balanced_accuracy),
            "kappa": num(self.kappa),
            "labels": list(self.labels),
            "confusion": self.confusion,
            "binary": {
                "accuracy": num(self.binary.accuracy),
                "balanced_accuracy": num(self.binary.balanced_accuracy),
                "kappa": num(self.binary.kappa),
                "precision": num(self.binary.precision),
                "recall": num(self.binary.recall),
                "min_confidence": self.min_confidence,
                "labels": list(self.binary.labels),
                "confusion": self.binary.confusion,
            },
            "usage": self.usage.model_dump(mode="json"),
            "predictions": [
                {
                    "id": p.id,
                    "gold": p.gold.value,
                    "predicted": p.predicted.value,
                    "confidence": p.confidence,
                    "reason": p.reason,
                }
                for p in self.predictions
            ],
        }

    def to_json(self) -> str:
        """:meth:`as_dict` as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)


# --- the two views ---------------------------------------------------------------------------


def _binary(gold: Verdict) -> str:
    return SUPPORTED_LABEL if gold is Verdict.SUPPORTED else HALLUCINATED_LABEL


def _binary_prediction(prediction: ClaimPrediction, min_confidence: float | None) -> str:
    supported = prediction.predicted is Verdict.SUPPORTED and (
        min_confidence is None or prediction.confidence >= min_confidence
    )
    return SUPPORTED_LABEL if supported else HALLUCINATED_LABEL


def measure(
    predictions: Sequence[ClaimPrediction],
    *,
    errors: Sequence[JudgeFailure] = (),
    judge: JudgeInfo | None = None,
    usage: Usage | None = None,
    min_confidence: float | None = None,
    stopped_early: str | None = None,
) -> Calibration:
    """The calibration of a judge from its predictions on labelled claims."""
    four = confusion_matrix(
        ((p.gold.value, p.predicted.value) for p in predictions), VERDICT_LABELS
    )
    two = confusion_matrix(
        ((_binary(p.gold), _binary_prediction(p, min_confidence)) for p in predictions),
        BINARY_LABELS,
    )
    flagged = two[HALLUCINATED_LABEL][HALLUCINATED_LABEL]
    binary = BinaryCalibration(
        accuracy=accuracy(two),
        balanced_accuracy=balanced_accuracy(two),
        kappa=cohen_kappa(two),
        precision=ratio(flagged, flagged + two[SUPPORTED_LABEL][HALLUCINATED_LABEL]),
        recall=ratio(flagged, sum(two[HALLUCINATED_LABEL].values())),
        confusion=two,
    )
    return Calibration(
        n=len(predictions),
        accuracy=accuracy(four),
        balanced_accuracy=balanced_accuracy(four),
        kappa=cohen_kappa(four),
        labels=VERDICT_LABELS,
        confusion=four,
        binary=binary,
        errors=tuple(errors),
        predictions=tuple(predictions),
        judge=judge,
        usage=usage or Usage(),
        min_confidence=min_confidence,
        stopped_early=stopped_early,
    )
