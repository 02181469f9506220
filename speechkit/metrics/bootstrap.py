"""Aggregation over meetings: micro ratios with a percentile bootstrap CI over meetings.

Every metric reports, per meeting, a :class:`Ratio` (numerator, denominator). The figure over a
set of meetings is the micro ratio ``sum(num) / sum(den)``; its 95% CI comes from resampling the
meetings with replacement and recomputing that ratio on each resample.

A metric counted over pairs of meetings (speaker consistency: does a person keep one name from
one meeting to another) reports per meeting a :class:`PairRow`, its counts with each other
meeting. Its figure is summed over the pairs of distinct meetings, and each resample recounts it
over the pairs of distinct meetings drawn (a meeting drawn twice is no pair with itself), so its
CI reflects which meetings were held, not each meeting's row as if it stood alone.

The difference of two systems scored on the same meetings (:func:`paired_bootstrap`) is
resampled in pairs: each resample draws meetings once and recomputes both systems' micro ratios
on that draw, so the CI of the difference reflects how the systems differ meeting by meeting,
not how hard the meetings are.

Beside the micro ratio, :func:`meeting_mean` gives the mean of the meetings' own values, the
figure the OSynth paper's tables hold: the micro ratio weighs a meeting by its denominator (a long
meeting counts more), the mean weighs every meeting alike. scores.json keeps them apart
(``aggregate`` and ``meeting_mean``).

Over few meetings a percentile CI is too narrow to mean anything (two meetings give a zero-width
interval when both move the same way): a comparison claims no significance over fewer than
:data:`MIN_MEETINGS` meetings (:mod:`speechkit.compare`).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

RESAMPLES = 1000
SEED = 0
MAX_RESAMPLES = 100_000
MAX_SEED = 2**63 - 1
_CELLS = 1_000_000  # resample x meeting indices drawn at once (memory stays bounded for any count)
PERCENTILES = (2.5, 97.5)
#: Fewest meetings over which a paired comparison claims a significant difference.
MIN_MEETINGS = 5
MAX_MIN_MEETINGS = 100_000


@dataclass(frozen=True)
class Ratio:
    """One meeting's contribution to a metric: ``value = num / den`` (None when ``den`` is 0)."""

    num: float
    den: float

    @property
    def value(self) -> float | None:
        return self.num / self.den if self.den else None


@dataclass(frozen=True)
class PairRow(Ratio):
    """One meeting's share of a metric counted over pairs of meetings (speaker consistency).

    ``num``/``den`` are summed over the meeting's pairs with the other meetings; ``pairs`` holds,
    per other meeting id, that pair's ``(num, den)``. :func:`micro` and the bootstrap count such
    rows over the pairs of distinct meetings among those given (module docstring).
    """

    meeting: str = ""
    pairs: Mapping[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Estimate:
    """A figure over meetings with its bootstrap CI; all None when not applicable."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high}


def micro(ratios: Sequence[Ratio]) -> Ratio:
    """The summed ratio of ``ratios``; for :class:`PairRow` s, summed over the pairs among their meetings."""
    if _over_pairs(ratios):
        meetings = {r.meeting for r in ratios}
        kept = [counts for r in ratios for other, counts in r.pairs.items() if other in meetings and other != r.meeting]
        return Ratio(sum(n for n, _ in kept), sum(d for _, d in kept))
    return Ratio(sum(r.num for r in ratios), sum(r.den for r in ratios))


def bootstrap(ratios: Sequence[Ratio], resamples: int = RESAMPLES, seed: int = SEED) -> Estimate:
    """The micro ratio of ``ratios`` (one per meeting) with a percentile bootstrap 95% CI.

    Meetings are drawn with replacement ``resamples`` times by ``numpy.random.default_rng(seed)``;
    resamples whose denominators sum to 0 are dropped. One meeting gives a CI equal to the value.
    :class:`PairRow` s are recounted over the pairs of distinct meetings of each draw.
    ``resamples`` must be 0 to :data:`MAX_RESAMPLES` and ``seed`` 0 to :data:`MAX_SEED`; the draws
    are made in blocks, so memory stays bounded (the numbers drawn are those of one big draw).
    """
    check_bootstrap_settings(resamples, seed)
    total = micro(ratios)
    if total.value is None:
        return Estimate(None)
    if resamples < 1:
        return Estimate(total.value)
    [(num_s, den_s)] = _resampled_totals([ratios], resamples, seed)
    keep = den_s > 0
    if not keep.any():
        return Estimate(total.value, total.value, total.value)
    low, high = np.percentile(num_s[keep] / den_s[keep], PERCENTILES)
    return Estimate(total.value, float(low), float(high))


def meeting_mean(values: Sequence[float | None], resamples: int = RESAMPLES, seed: int = SEED) -> Estimate:
    """The mean of the meetings' own values (the figure the paper's tables hold), with a percentile
    bootstrap 95% CI over those meetings; meetings without a value (None) are left out, and none
    left gives None. The draws are :func:`bootstrap`'s, over the meetings that have a value."""
    check_bootstrap_settings(resamples, seed)
    kept = np.array([v for v in values if v is not None], dtype=float)
    if not len(kept):
        return Estimate(None)
    mean = float(kept.mean())
    if resamples < 1:
        return Estimate(mean)
    means = np.concatenate([kept[idx].mean(axis=1) for idx in _draws(len(kept), resamples, seed)])
    low, high = np.percentile(means, PERCENTILES)
    return Estimate(mean, float(low), float(high))


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
        raise ValueError(f"paired bootstrap needs one ratio per meeting for both systems, "
                         f"got {len(base)} and {len(other)}")
    a, b = micro(base), micro(other)
    if a.value is None or b.value is None:
        return Estimate(None)
    delta = b.value - a.value
    if resamples < 1:
        return Estimate(delta)
    (a_num, a_den), (b_num, b_den) = _resampled_totals([base, other], resamples, seed)
    keep = (a_den > 0) & (b_den > 0)
    if not keep.any():
        return Estimate(delta, delta, delta)
    low, high = np.percentile(b_num[keep] / b_den[keep] - a_num[keep] / a_den[keep], PERCENTILES)
    return Estimate(delta, float(low), float(high))


def _over_pairs(ratios: Sequence[Ratio]) -> bool:
    """Whether ``ratios`` are :class:`PairRow` s (all of them: a mix is an error)."""
    kinds = {isinstance(r, PairRow) for r in ratios}
    if len(kinds) > 1:
        raise ValueError("a metric's ratios are either all per meeting or all PairRows")
    return kinds == {True}


def _pair_tables(rows: Sequence[PairRow]) -> tuple[np.ndarray, np.ndarray]:
    """Numerators and denominators of the pairs among the rows' meetings: ``[i, j]`` is the pair
    of ``rows[i]`` and ``rows[j]`` (0 on the diagonal; pairs with other meetings are left out)."""
    where = {r.meeting: i for i, r in enumerate(rows)}
    if len(where) < len(rows):
        raise ValueError("PairRows must be of distinct meetings")
    num, den = np.zeros((len(rows), len(rows))), np.zeros((len(rows), len(rows)))
    for i, row in enumerate(rows):
        for other, (n, d) in row.pairs.items():
            j = where.get(other)
            if j is not None and j != i:
                num[i, j], den[i, j] = n, d
    return num, den


def _draws(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """``resamples`` draws of ``n`` meeting indices with replacement from ``default_rng(seed)``, in
    blocks of rows (memory stays bounded; the numbers are those of one big draw)."""
    rng = np.random.default_rng(seed)
    block = max(1, _CELLS // n)
    for lo in range(0, resamples, block):
        yield rng.integers(0, n, size=(min(block, resamples - lo), n))


def _resampled_totals(systems: Sequence[Sequence[Ratio]], resamples: int, seed: int,
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each system (one ratio per meeting, the same meetings), its numerator and denominator
    summed over each of ``resamples`` draws of the meetings; every system on the same draws.
    :class:`PairRow` s are summed over the ordered pairs of draws of distinct meetings."""
    n = len(systems[0])
    tables = [_pair_tables(s) if _over_pairs(s) else (np.array([r.num for r in s], dtype=float),
                                                      np.array([r.den for r in s], dtype=float)) for s in systems]
    sums = [(np.empty(resamples), np.empty(resamples)) for _ in systems]
    lo = 0
    for idx in _draws(n, resamples, seed):
        rows = slice(lo, lo + len(idx))
        if any(num.ndim == 2 for num, _ in tables):
            counts = np.zeros((len(idx), n))  # how often each meeting was drawn
            np.add.at(counts, (np.repeat(np.arange(len(idx)), n), idx.ravel()), 1)
        for (num_out, den_out), (num, den) in zip(sums, tables):
            if num.ndim == 2:
                num_out[rows] = ((counts @ num) * counts).sum(axis=1)
                den_out[rows] = ((counts @ den) * counts).sum(axis=1)
            else:
                num_out[rows], den_out[rows] = num[idx].sum(axis=1), den[idx].sum(axis=1)
        lo += len(idx)
    return sums


def check_bootstrap_settings(resamples: object, seed: object) -> None:
    """Raise ValueError unless ``resamples`` and ``seed`` are integers in their ranges."""
    for name, value, top in (("resamples", resamples, MAX_RESAMPLES), ("seed", seed, MAX_SEED)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value <= top:
            raise ValueError(f"{name}: expected an integer from 0 to {top}, got {value!r}"[:200])
