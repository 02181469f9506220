"""Markdown as the reports write it: table cells, code spans, shares, estimates with their reasons."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from speechkit.io.scores import Scores
from speechkit.metrics.catalog import Metric


def cell(text: Any, empty: str = "") -> str:
    """``text`` fit for a markdown table cell (no ``|``, one line)."""
    return " ".join(str(text).replace("|", "/").split()) if text else empty


def code(text: str) -> str:
    """``text`` as an inline code span fit for a table cell."""
    return "`" + cell(text).replace("`", "'") + "`"


def share(count: float, total: float, unit: str = "") -> str:
    """``count`` as a share of ``total`` with the count itself: ``0.080 (99)``, ``0.010 (1.2 s)``."""
    amount = f"{count:.1f} s" if unit == "s" else f"{count:g}"
    return f"{count / total:.3f} ({amount})" if total else f"n/a ({amount})"


def estimate(scores: Scores, metric: Metric, mean: bool = False) -> str:
    """An aggregate with its CI (the pooled figure, or with ``mean`` the mean of meetings), or ``n/a: <reason>``."""
    entry = scores.meeting_mean(metric.key) if mean else scores.aggregate(metric.key)
    if entry.get("value") is None:
        return f"n/a: {cell(scores.not_applicable(metric.key), 'no value')}"
    return metric.format_estimate(entry)


def per_meeting_table(scores: Scores, metrics: Sequence[Metric]) -> list[str]:
    """Markdown rows: one per meeting, the values of ``metrics``."""
    lines = ["| meeting | " + " | ".join(m.label for m in metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
    for mid, meeting in scores.meetings.items():
        lines.append(f"| {mid} | " + " | ".join(m.format(meeting.value(m.key)) for m in metrics) + " |")
    return lines


def not_applicable_lines(scores: Scores, metrics: Sequence[Metric]) -> list[str]:
    """One line per n/a reason of ``metrics`` in the per-meeting table: which metrics, in which meetings."""
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    by_metric: dict[tuple[Metric, str], list[str]] = {}
    for mid, meeting in scores.meetings.items():
        for metric in metrics:
            if meeting.value(metric.key) is None:
                by_metric.setdefault((metric, meeting.reason(metric.key)), []).append(mid)
    for (metric, reason), meetings in by_metric.items():
        groups.setdefault((reason, tuple(meetings)), []).append(metric.label)
    return [f"- n/a {', '.join(labels)} ({', '.join(meetings)}): {cell(reason)}."
            for (reason, meetings), labels in groups.items()]
