"""Micro aggregation and the bootstrap CI over meetings."""
from __future__ import annotations

import numpy as np
import pytest

from speechkit.metrics.bootstrap import Ratio, bootstrap, micro

RATIOS = [Ratio(3, 40), Ratio(10, 50), Ratio(0, 20), Ratio(7, 30), Ratio(2, 0), Ratio(12, 60)]


def test_micro_is_summed_ratio():
    total = micro(RATIOS)
    assert (total.num, total.den) == (34, 200)
    assert total.value == pytest.approx(0.17)
    assert Ratio(1, 0).value is None


def test_bootstrap_is_deterministic_and_contains_value():
    first, again = bootstrap(RATIOS), bootstrap(RATIOS)
    assert first == again
    assert first.value == pytest.approx(0.17)
    assert first.ci_low < first.value < first.ci_high
    assert bootstrap(RATIOS, seed=1) != first


def test_bootstrap_matches_a_direct_computation():
    """1,000 resamples of meetings with replacement from default_rng(0), percentiles 2.5 / 97.5."""
    nums = np.array([r.num for r in RATIOS], dtype=float)
    dens = np.array([r.den for r in RATIOS], dtype=float)
    idx = np.random.default_rng(0).integers(0, len(RATIOS), size=(1000, len(RATIOS)))
    ratios = nums[idx].sum(1) / dens[idx].sum(1)
    low, high = np.percentile(ratios, [2.5, 97.5])
    estimate = bootstrap(RATIOS)
    assert (estimate.ci_low, estimate.ci_high) == (pytest.approx(low), pytest.approx(high))


def test_one_meeting_ci_equals_value():
    estimate = bootstrap([Ratio(3, 7)])
    assert estimate.value == estimate.ci_low == estimate.ci_high == 3 / 7


def test_not_applicable_is_all_null():
    assert bootstrap([Ratio(0, 0), Ratio(0, 0)]).as_dict() == {"value": None, "ci_low": None, "ci_high": None}
    assert bootstrap([]).value is None
    assert bootstrap([Ratio(1, 2)], resamples=0).as_dict() == {"value": 0.5, "ci_low": None, "ci_high": None}
