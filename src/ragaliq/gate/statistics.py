"""How sure a comparison is: a confidence interval for the mean of paired per-case deltas.

With ten cases, one claim moves a mean by 0.1; a gate that fails on every such move cries wolf. So
an evaluator's drop fails the gate only when it is past ``max_drop`` *and* the suite can resolve it:
the interval for the mean change over the cases both runs share lies wholly below zero.

The interval is a percentile bootstrap of the paired deltas for suites under
``BOOTSTRAP_BELOW`` cases (resampled ``RESAMPLES`` times with a seed taken from the deltas
themselves, so the same inputs always give the same decision), and the normal interval
``mean ± z·sd/√n`` for larger suites, where the two agree and resampling would be slow.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = [
    "BOOTSTRAP_BELOW",
    "POWER",
    "RESAMPLES",
    "PairedDelta",
    "cases_to_resolve",
    "paired_delta",
]

RESAMPLES = 2000
BOOTSTRAP_BELOW = 200
POWER = 0.8
"""The chance of resolving a drop of ``max_drop`` that :func:`cases_to_resolve` plans for."""


@dataclass(frozen=True, kw_only=True)
class PairedDelta:
    """The mean change of one evaluator's score over the cases both runs scored."""

    mean: float
    low: float
    """The interval's lower end."""
    high: float
    """The interval's upper end."""
    cases: int
    sd: float
    """The standard deviation of the per-case changes."""

    @property
    def resolved_drop(self) -> bool:
        """Whether the whole interval is below zero: a drop the suite can tell from noise."""
        return self.high < 0


def paired_delta(deltas: Sequence[float], *, confidence: float) -> PairedDelta | None:
    """The mean of ``deltas`` with its ``confidence`` interval; None with fewer than two cases."""
    n = len(deltas)
    if n < 2:
        return None
    mean = math.fsum(deltas) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in deltas) / (n - 1))
    if sd == 0:
        return PairedDelta(mean=mean, low=mean, high=mean, cases=n, sd=0.0)
    alpha = 1 - confidence
    if n < BOOTSTRAP_BELOW:
        rng = random.Random(_seed(deltas))
        means = sorted(math.fsum(rng.choices(deltas, k=n)) / n for _ in range(RESAMPLES))
        low = means[max(0, math.floor(alpha / 2 * RESAMPLES))]
        high = means[min(RESAMPLES - 1, math.ceil((1 - alpha / 2) * RESAMPLES) - 1)]
    else:
        half = NormalDist().inv_cdf(1 - alpha / 2) * sd / math.sqrt(n)
        low, high = mean - half, mean + half
    return PairedDelta(mean=mean, low=low, high=high, cases=n, sd=sd)


def cases_to_resolve(sd: float, *, max_drop: float, confidence: float) -> int | None:
    """Roughly how many cases would resolve a drop of ``max_drop``, given this much noise.

    The usual sample size of a paired test: ``((z(1 - alpha/2) + z(power)) * sd / max_drop)^2``.
    None when there is no noise to beat or no drop to resolve.
    """
    if sd <= 0 or max_drop <= 0:
        return None
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2) + NormalDist().inv_cdf(POWER)
    return math.ceil((z * sd / max_drop) ** 2)


def _seed(deltas: Sequence[float]) -> int:
    material = ",".join(f"{d:.9f}" for d in deltas).encode()
    return int.from_bytes(hashlib.sha256(material).digest()[:8], "big")
