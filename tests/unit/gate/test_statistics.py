"""The interval behind "regressed" and "inconclusive", pinned at its boundaries.

The figures the comment shows (the interval, the cases that would resolve a drop) come from here;
each expected value below is computed from the formula the module documents, not read back from it.
"""

from __future__ import annotations

import math
import random
from statistics import NormalDist, fmean, stdev

import pytest

from ragaliq.gate.statistics import BOOTSTRAP_BELOW, cases_to_resolve, paired_delta

Z95 = NormalDist().inv_cdf(0.975)
Z80 = NormalDist().inv_cdf(0.8)


def noisy(n: int, *, mean: float, sd: float, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(mean, sd) for _ in range(n)]


@pytest.mark.parametrize("deltas", [[], [-0.5]])
def test_fewer_than_two_shared_cases_give_no_interval(deltas):
    assert paired_delta(deltas, confidence=0.95) is None


def test_two_shared_cases_that_agree_resolve_their_drop():
    change = paired_delta([-0.5, -0.5], confidence=0.95)
    assert change is not None
    assert (change.mean, change.low, change.high, change.cases, change.sd) == (
        -0.5,
        -0.5,
        -0.5,
        2,
        0.0,
    )
    assert change.resolved_drop


def test_two_shared_cases_that_disagree_give_an_interval_around_their_mean():
    change = paired_delta([-0.6, -0.2], confidence=0.95)
    assert change is not None
    assert change.cases == 2
    assert change.mean == pytest.approx(-0.4)
    assert change.sd == pytest.approx(stdev([-0.6, -0.2]))
    # Resampling two values: every resampled mean is one of -0.6, -0.4 and -0.2.
    assert (change.low, change.high) == pytest.approx((-0.6, -0.2))
    assert change.resolved_drop


def test_no_change_at_all_is_not_a_drop():
    change = paired_delta([0.0, 0.0, 0.0], confidence=0.95)
    assert change is not None
    assert (change.low, change.high, change.sd) == (0.0, 0.0, 0.0)
    assert not change.resolved_drop


def test_an_interval_ending_exactly_at_zero_is_not_a_resolved_drop():
    change = paired_delta([-0.2, 0.0], confidence=0.95)
    assert change is not None
    assert change.high == pytest.approx(0.0)
    assert not change.resolved_drop


def test_a_constant_change_of_one_is_still_an_interval_of_no_width():
    change = paired_delta([1.0, 1.0, 1.0], confidence=0.95)
    assert change is not None
    assert (change.low, change.high, change.sd) == (1.0, 1.0, 0.0)


def test_one_case_lost_everything_and_one_gained_everything_is_the_widest_interval():
    # The changes -1, 0 and +1 have a standard deviation of exactly 1. Resampled, all three
    # draws are -1 in 1/27 of the means (3.7%, over the 2.5% tail), and likewise +1.
    change = paired_delta([-1.0, 0.0, 1.0], confidence=0.95)
    assert change is not None
    assert (change.mean, change.sd, change.low, change.high) == (0.0, 1.0, -1.0, 1.0)
    assert not change.resolved_drop


def test_the_sd_is_the_sample_standard_deviation_of_the_changes():
    deltas = [0.1, -0.3, 0.4, -0.2, 0.0]
    change = paired_delta(deltas, confidence=0.95)
    assert change is not None
    assert change.mean == pytest.approx(fmean(deltas))
    assert change.sd == pytest.approx(stdev(deltas))


@pytest.mark.parametrize("n", [BOOTSTRAP_BELOW, BOOTSTRAP_BELOW + 50])
def test_large_suites_use_the_normal_interval(n):
    deltas = noisy(n, mean=-0.02, sd=0.3)
    change = paired_delta(deltas, confidence=0.95)
    assert change is not None
    half = Z95 * stdev(deltas) / math.sqrt(n)
    assert change.cases == n
    assert change.mean == pytest.approx(fmean(deltas))
    assert change.low == pytest.approx(fmean(deltas) - half, abs=1e-12)
    assert change.high == pytest.approx(fmean(deltas) + half, abs=1e-12)


def test_the_normal_interval_narrows_with_the_confidence_asked_for():
    deltas = noisy(400, mean=0.0, sd=0.2)
    wide = paired_delta(deltas, confidence=0.99)
    narrow = paired_delta(deltas, confidence=0.8)
    assert wide is not None and narrow is not None
    z99, z80 = NormalDist().inv_cdf(0.995), NormalDist().inv_cdf(0.9)
    assert (wide.high - wide.low) / (narrow.high - narrow.low) == pytest.approx(z99 / z80)


def test_just_under_the_normal_range_the_bootstrap_agrees_with_it():
    # 199 cases are resampled: a percentile interval, not mean ± z·sd/√n to the last digit, but of
    # about the same width, around the same mean.
    n = BOOTSTRAP_BELOW - 1
    deltas = noisy(n, mean=-0.05, sd=0.3)
    change = paired_delta(deltas, confidence=0.95)
    assert change is not None
    half = Z95 * stdev(deltas) / math.sqrt(n)
    assert change.low != pytest.approx(fmean(deltas) - half, abs=1e-9)
    assert change.low == pytest.approx(fmean(deltas) - half, abs=0.15 * half)
    assert change.high == pytest.approx(fmean(deltas) + half, abs=0.15 * half)
    assert change.low < change.mean < change.high


def test_the_bootstrap_interval_covers_about_the_confidence_asked_for():
    # 95% of resampled means lie inside: the ends sit at the 2.5th and 97.5th percentiles, which for
    # 60 cases are near mean ± 1.96·sd/√n (and far from the 80% interval's ± 1.28·sd/√n).
    deltas = noisy(60, mean=0.0, sd=0.25, seed=11)
    change = paired_delta(deltas, confidence=0.95)
    assert change is not None
    half = (change.high - change.low) / 2
    expected = Z95 * stdev(deltas) / math.sqrt(60)
    assert half == pytest.approx(expected, rel=0.12)


def test_the_same_changes_always_give_the_same_interval():
    deltas = noisy(40, mean=-0.03, sd=0.2)
    assert paired_delta(deltas, confidence=0.95) == paired_delta(list(deltas), confidence=0.95)


def test_cases_to_resolve_is_the_paired_sample_size():
    # ((z(0.975) + z(0.8)) * 0.3 / 0.05)^2 = 282.6, rounded up.
    assert cases_to_resolve(0.3, max_drop=0.05, confidence=0.95) == math.ceil(
        ((Z95 + Z80) * 0.3 / 0.05) ** 2
    )
    assert cases_to_resolve(0.3, max_drop=0.05, confidence=0.95) == 283


def test_cases_to_resolve_grows_with_the_confidence_asked_for():
    z90 = NormalDist().inv_cdf(0.95)
    assert cases_to_resolve(0.2, max_drop=0.1, confidence=0.9) == math.ceil(
        ((z90 + Z80) * 0.2 / 0.1) ** 2
    )
    assert cases_to_resolve(0.2, max_drop=0.1, confidence=0.9) == 25


@pytest.mark.parametrize(
    ("sd", "max_drop"), [(0.0, 0.05), (0.3, 0.0), (0.0, 0.0), (-0.1, 0.05), (0.3, -0.05)]
)
def test_cases_to_resolve_is_none_without_noise_or_without_a_drop(sd, max_drop):
    assert cases_to_resolve(sd, max_drop=max_drop, confidence=0.95) is None
