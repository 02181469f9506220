"""Finding rates with confidence intervals, and the test of a difference between two strategies.

A finding rate is ``findings / judged`` probes, a binomial proportion; its 95% interval is
Wilson's score interval (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``), which
stays inside [0, 1] and means something at a handful of probes, where the normal one does not.
Two strategies' rates (the UCB search and the random baseline, each on its own budget of the
same size) are compared by their difference, with Newcombe's interval for a difference of two
independent proportions (his method 10, built from the two Wilson intervals), and by Fisher's
exact test of the 2x2 table (findings and other judged probes per strategy; two-sided,
``scipy.stats.fisher_exact``), exact at the small counts one demand gets. Probes are taken as
independent draws; nothing here corrects for testing several demands at once.
"""
from __future__ import annotations

import math
from typing import Any

from scipy import stats

CONFIDENCE = 0.95


def wilson(findings: int, judged: int, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Wilson's score interval of ``findings / judged`` (None when nothing was judged)."""
    if judged == 0:
        return None
    ci = stats.binomtest(findings, judged).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def newcombe(findings: int, judged: int, other_findings: int, other_judged: int,
             confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Newcombe's interval (method 10) of ``findings / judged - other_findings / other_judged``
    (None when either side judged nothing)."""
    one, two = wilson(findings, judged, confidence), wilson(other_findings, other_judged, confidence)
    if one is None or two is None:
        return None
    p1, p2 = findings / judged, other_findings / other_judged
    d = p1 - p2
    return (d - math.sqrt((p1 - one[0]) ** 2 + (two[1] - p2) ** 2),
            d + math.sqrt((one[1] - p1) ** 2 + (p2 - two[0]) ** 2))


def fisher_p(findings: int, judged: int, other_findings: int, other_judged: int) -> float | None:
    """The two-sided p-value of Fisher's exact test that two finding rates are equal (None when
    either side judged nothing)."""
    if judged == 0 or other_judged == 0:
        return None
    table = [[findings, judged - findings], [other_findings, other_judged - other_findings]]
    return float(stats.fisher_exact(table, alternative="two-sided").pvalue)


def rounded(value: float | None) -> float | None:
    """``value`` to 4 decimals, as probe.json holds figures (None stays None)."""
    return None if value is None else round(value, 4)


def interval(ci: tuple[float, float] | None) -> list[float] | None:
    """An interval as probe.json holds it: ``[low, high]`` to 4 decimals (None stays None)."""
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def rate(findings: int, judged: int) -> dict[str, Any]:
    """A finding rate as probe.json holds it: the counts, the rate and its Wilson interval."""
    return {"judged": judged, "findings": findings, "finding_rate": rounded(findings / judged if judged else None),
            "ci": interval(wilson(findings, judged))}


def difference(one: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """``one``'s rate minus ``other``'s (two :func:`rate` s): the difference, Newcombe's interval
    and Fisher's p-value (None where either judged nothing)."""
    counts = (one["findings"], one["judged"], other["findings"], other["judged"])
    value = counts[0] / counts[1] - counts[2] / counts[3] if counts[1] and counts[3] else None
    return {"difference": rounded(value), "ci": interval(newcombe(*counts)), "p_value": rounded(fisher_p(*counts))}
