"""Calibrating a judge: how often its verdicts agree with claims a person has labelled.

``ragaliq calibrate --labels golden.jsonl`` verifies each labelled claim (:mod:`ragaliq.labels`)
against its context with the configured judge, one request per claim, run by the same bounded pool
as a suite (:mod:`ragaliq.pool`), and compares the verdicts with the labels. It reports accuracy,
balanced accuracy and Cohen's kappa twice: over the four verdicts, and over the
supported-versus-hallucinated view the gate acts on (a claim is hallucinated unless SUPPORTED, as
in the hallucination evaluator). A claim the judge could not verify is counted as an error and left
out of the numbers; it is never turned into a verdict.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.judges.base import Judge
from ragaliq.labels import VERDICT_LABELS, LabelledClaim
from ragaliq.metrics import (
    Confusion,
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    confusion_matrix,
    ratio,
)
from ragaliq.models import ClaimVerdict, JudgeInfo, Usage, Verdict
from ragaliq.pool import PoolRun, run_bounded

__all__ = [
    "BINARY_LABELS",
    "BinaryCalibration",
    "Calibration",
    "ClaimPrediction",
    "JudgeFailure",
    "calibrate",
    "measure",
]

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

    @property
    def correct(self) -> bool:
        """Whether the verdict equals the label."""
        return self.gold is self.predicted


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


# --- running the judge -----------------------------------------------------------------------


async def calibrate(
    labels: Sequence[LabelledClaim],
    *,
    judge: Judge,
    concurrency: int = 8,
    min_confidence: float | None = None,
    budget_usd: float | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Calibration:
    """Verify every labelled claim with ``judge`` and measure the agreement with the labels.

    Each claim is one ``verify_claims`` call with the claim as the only claim and its context as
    the case's context; at most ``concurrency`` calls are in flight. A claim whose call raises
    :class:`~ragaliq.errors.JudgeError` (or anything unexpected) is recorded in ``errors`` and
    left out of the metrics.

    Args:
        labels: The labelled claims.
        judge: The judge to calibrate.
        concurrency: Calls in flight at once.
        min_confidence: As ``evaluators.hallucination.min_confidence``: a SUPPORTED verdict below
            it counts as hallucinated in the binary view.
        budget_usd: Start no new claim once the next could take the spend past this (as a
            suite run does); the claims left are neither predictions nor errors, and
            ``stopped_early`` says so.
        on_progress: Called with (claims done, claims in all) after each claim, judged or not.

    Raises:
        JudgeUnavailableError: the judge cannot be used at all (a bad key, the API down).
        ValueError: ``concurrency`` is below 1.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
    slots = asyncio.Semaphore(concurrency)
    verdicts: list[ClaimVerdict | JudgeFailure | None] = [None] * len(labels)

    async def work(index: int, item: LabelledClaim) -> Usage:
        async with slots:
            verdicts[index], usage = await _verify_one(judge, item)
        return usage

    def done(index: int, pool: PoolRun) -> None:
        if on_progress is not None:
            on_progress(pool.done, len(labels))

    pool = await run_bounded(
        labels,
        work,
        workers=concurrency * 2,
        budget_usd=budget_usd,
        on_done=done,
        noun="claims",
    )
    predictions: list[ClaimPrediction] = []
    errors: list[JudgeFailure] = []
    for item, outcome in zip(labels, verdicts, strict=True):
        if isinstance(outcome, JudgeFailure):
            errors.append(outcome)
        elif outcome is not None:
            predictions.append(
                ClaimPrediction(
                    id=item.id,
                    gold=item.label,
                    predicted=outcome.verdict,
                    confidence=outcome.confidence,
                    reason=outcome.reason,
                )
            )
    stopped = None
    if pool.stopped_early is not None:
        left = len(labels) - pool.done
        stopped = f"{pool.stopped_early}; {left} of {len(labels)} claims were not judged"
    return measure(
        predictions,
        errors=errors,
        judge=judge.info,
        usage=pool.usage,
        min_confidence=min_confidence,
        stopped_early=stopped,
    )


async def _verify_one(
    judge: Judge, item: LabelledClaim
) -> tuple[ClaimVerdict | JudgeFailure, Usage]:
    """The judge's verdict on one labelled claim, or why there is none, and what it cost."""
    try:
        result = await judge.verify_claims(item.to_case(), [item.claim])
    except JudgeUnavailableError:
        raise
    except JudgeError as exc:
        return JudgeFailure(
            id=item.id, message=str(exc) or type(exc).__name__
        ), exc.usage or Usage()
    except Exception as exc:  # a bug on one claim must not lose the others
        return JudgeFailure(id=item.id, message=f"unexpected {type(exc).__name__}: {exc}"), Usage()
    if len(result.verdicts) != 1:
        message = f"the judge returned {len(result.verdicts)} verdicts for 1 claim"
        return JudgeFailure(id=item.id, message=message), result.usage
    return result.verdicts[0], result.usage
