"""Micro aggregation and the bootstrap CI over meetings."""
from __future__ import annotations

import numpy as np
import pytest

from speechkit.metrics.bootstrap import PairRow, Ratio, bootstrap, micro, paired_bootstrap

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


# Speaker consistency is counted over pairs of meetings: four meetings, each pair's (same, shared).
PAIRS = {("a", "b"): (2, 2), ("a", "c"): (0, 1), ("b", "c"): (1, 2), ("c", "d"): (1, 1), ("a", "d"): (0, 2)}


def _rows(meetings: str) -> list[PairRow]:
    rows = []
    for m in meetings:
        pairs = {(o if x == m else x): c for (x, o), c in PAIRS.items() if m in (x, o)}
        rows.append(PairRow(sum(n for n, _ in pairs.values()), sum(d for _, d in pairs.values()), m, pairs))
    return rows


def test_pair_rows_are_counted_over_the_pairs_of_the_meetings_given():
    rows = _rows("abcd")
    assert micro(rows) == Ratio(2 * 4, 2 * 8)  # ordered pairs: each pair twice
    # without d, a's and c's pairs with d are left out (their rows' sums still hold them)
    assert micro(_rows("abc")) == Ratio(2 * 3, 2 * 5)
    assert micro([r for r in rows if r.meeting != "d"]) == micro(_rows("abc"))


def test_pair_rows_are_resampled_over_the_pairs_of_distinct_meetings_drawn():
    """Each draw's ratio sums the pairs of every two draws of distinct meetings, by hand."""
    rows = _rows("abcd")
    idx = np.random.default_rng(0).integers(0, 4, size=(1000, 4))
    ratios = []
    for draw in idx:
        num = den = 0
        for p in draw:
            for q in draw:
                pair = PAIRS.get((rows[p].meeting, rows[q].meeting)) or PAIRS.get((rows[q].meeting, rows[p].meeting))
                if p != q and pair:  # a meeting drawn twice is no pair with itself
                    num, den = num + pair[0], den + pair[1]
        if den:
            ratios.append(num / den)
    assert len(ratios) < 1000  # draws of one meeting only have no pair: dropped
    low, high = np.percentile(ratios, [2.5, 97.5])
    estimate = bootstrap(rows)
    assert estimate.value == 0.5 and (estimate.ci_low, estimate.ci_high) == (pytest.approx(low), pytest.approx(high))
    # resampling each meeting's row as if it stood alone gives another interval
    plain = bootstrap([Ratio(r.num, r.den) for r in rows])
    assert plain.value == estimate.value and (plain.ci_low, plain.ci_high) != (estimate.ci_low, estimate.ci_high)


def test_paired_bootstrap_of_pair_rows_uses_the_same_draws():
    rows = _rows("abcd")
    none_same = [PairRow(0, r.den, r.meeting, {o: (0, d) for o, (_, d) in r.pairs.items()}) for r in rows]
    delta = paired_bootstrap(none_same, rows)
    assert delta.value == 0.5
    # every draw's difference is that draw's consistency of ``rows``: the same draws as bootstrap()
    assert (delta.ci_low, delta.ci_high) == (bootstrap(rows).ci_low, bootstrap(rows).ci_high)
    with pytest.raises(ValueError, match="either all per meeting or all PairRows"):
        micro([rows[0], Ratio(1, 2)])
