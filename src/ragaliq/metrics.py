"""Agreement between a judge and gold labels: confusion matrix, accuracy, balanced accuracy, kappa.

Plain Python over a confusion matrix ``{gold: {predicted: count}}``; a metric that cannot be
computed (an empty matrix, chance agreement of 1) is NaN, never a made-up number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "Confusion",
    "accuracy",
    "balanced_accuracy",
    "cohen_kappa",
    "confusion_matrix",
    "kappa_strength",
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
