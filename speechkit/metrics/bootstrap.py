"""Aggregation over meetings: micro ratios with a percentile bootstrap CI over meetings.

Every metric reports, per meeting, a :class:`Ratio` (numerator, denominator). The figure over a
set of meetings is the micro ratio ``sum(num) / sum(den)``; its 95% CI comes from resampling the
meetings with replacement and recomputing that ratio on each resample.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

RESAMPLES = 1000
SEED = 0
PERCENTILES = (2.5, 97.5)


@dataclass(frozen=True)
class Ratio:
    """One meeting's contribution to a metric: ``value = num / den`` (None when ``den`` is 0)."""

    num: float
    den: float

    @property
    def value(self) -> float | None:
        return self.num / self.den if self.den else None


@dataclass(frozen=True)
class Estimate:
    """A figure over meetings with its bootstrap CI; all None when not applicable."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high}


def micro(ratios: Sequence[Ratio]) -> Ratio:
    """The summed ratio of ``ratios``."""
    return Ratio(sum(r.num for r in ratios), sum(r.den for r in ratios))


def bootstrap(ratios: Sequence[Ratio], resamples: int = RESAMPLES, seed: int = SEED) -> Estimate:
    """The micro ratio of ``ratios`` (one per meeting) with a percentile bootstrap 95% CI.

    Meetings are drawn with replacement ``resamples`` times by ``numpy.random.default_rng(seed)``;
    resamples whose denominators sum to 0 are dropped. One meeting gives a CI equal to the value.
    """
    total = micro(ratios)
    if total.value is None:
        return Estimate(None)
    if resamples < 1:
        return Estimate(total.value)
    nums = np.array([r.num for r in ratios], dtype=float)
    dens = np.array([r.den for r in ratios], dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(ratios), size=(resamples, len(ratios)))
    num_s, den_s = nums[idx].sum(axis=1), dens[idx].sum(axis=1)
    keep = den_s > 0
    if not keep.any():
        return Estimate(total.value, total.value, total.value)
    low, high = np.percentile(num_s[keep] / den_s[keep], PERCENTILES)
    return Estimate(total.value, float(low), float(high))
