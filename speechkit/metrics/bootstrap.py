"""Aggregation over meetings: micro ratios with a percentile bootstrap CI over meetings.

Every metric reports, per meeting, a :class:`Ratio` (numerator, denominator). The figure over a
set of meetings is the micro ratio ``sum(num) / sum(den)``; its 95% CI comes from resampling the
meetings with replacement and recomputing that ratio on each resample.

The difference of two systems scored on the same meetings (:func:`paired_bootstrap`) is
resampled in pairs: each resample draws meetings once and recomputes both systems' micro ratios
on that draw, so the CI of the difference reflects how the systems differ meeting by meeting,
not how hard the meetings are.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

RESAMPLES = 1000
SEED = 0
MAX_RESAMPLES = 100_000
MAX_SEED = 2**63 - 1
_CELLS = 1_000_000  # resample x meeting indices drawn at once (memory stays bounded for any count)
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
    ``resamples`` must be 0 to :data:`MAX_RESAMPLES` and ``seed`` 0 to :data:`MAX_SEED`; the draws
    are made in blocks, so memory stays bounded (the numbers drawn are those of one big draw).
    """
    check_bootstrap_settings(resamples, seed)
    total = micro(ratios)
    if total.value is None:
        return Estimate(None)
    if resamples < 1:
        return Estimate(total.value)
    num_s, den_s = _resampled_sums([[r.num for r in ratios], [r.den for r in ratios]], resamples, seed)
    keep = den_s > 0
    if not keep.any():
        return Estimate(total.value, total.value, total.value)
    low, high = np.percentile(num_s[keep] / den_s[keep], PERCENTILES)
    return Estimate(total.value, float(low), float(high))


def paired_bootstrap(base: Sequence[Ratio], other: Sequence[Ratio], resamples: int = RESAMPLES,
                     seed: int = SEED) -> Estimate:
    """``micro(other) - micro(base)`` with a paired percentile bootstrap 95% CI.

    ``base[i]`` and ``other[i]`` are the same meeting scored for two systems. Each resample draws
    meetings with replacement (``numpy.random.default_rng(seed)``, the draws of :func:`bootstrap`)
    and takes the difference of the two micro ratios on that same draw; resamples where either
    denominator sums to 0 are dropped. None when either system's ratio is undefined.
    """
    check_bootstrap_settings(resamples, seed)
    if len(base) != len(other):
        raise ValueError(f"paired bootstrap needs one ratio per meeting for both systems, got {len(base)} and {len(other)}")
    a, b = micro(base), micro(other)
    if a.value is None or b.value is None:
        return Estimate(None)
    delta = b.value - a.value
    if resamples < 1:
        return Estimate(delta)
    a_num, a_den, b_num, b_den = _resampled_sums(
        [[r.num for r in base], [r.den for r in base], [r.num for r in other], [r.den for r in other]], resamples, seed)
    keep = (a_den > 0) & (b_den > 0)
    if not keep.any():
        return Estimate(delta, delta, delta)
    low, high = np.percentile(b_num[keep] / b_den[keep] - a_num[keep] / a_den[keep], PERCENTILES)
    return Estimate(delta, float(low), float(high))


def _resampled_sums(columns: Sequence[Sequence[float]], resamples: int, seed: int) -> list[np.ndarray]:
    """For each column (one value per meeting), its sum over each of ``resamples`` draws of the
    meetings with replacement; every column is summed over the same draws. The draws are made in
    blocks, so memory stays bounded (the numbers drawn are those of one big draw)."""
    values = [np.asarray(c, dtype=float) for c in columns]
    n = len(values[0])
    rng = np.random.default_rng(seed)
    block = max(1, _CELLS // n)
    sums = [np.empty(resamples) for _ in values]
    for lo in range(0, resamples, block):
        idx = rng.integers(0, n, size=(min(block, resamples - lo), n))
        for out, v in zip(sums, values):
            out[lo:lo + len(idx)] = v[idx].sum(axis=1)
    return sums


def check_bootstrap_settings(resamples: object, seed: object) -> None:
    """Raise ValueError unless ``resamples`` and ``seed`` are integers in their ranges."""
    for name, value, top in (("resamples", resamples, MAX_RESAMPLES), ("seed", seed, MAX_SEED)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
            raise ValueError(f"{name}: expected an integer from 0 to {top}, got {value!r}"[:200])
