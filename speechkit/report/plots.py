"""The report's plots (matplotlib, Agg): aggregates with CI whiskers, WER per meeting, as PNG bytes."""
from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from speechkit.io.scores import Scores
from speechkit.metrics.catalog import FRACTION
from speechkit.scoring.catalogue import DIRECTIONS, catalogue


def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def bars_with_ci(series: Mapping[str, Scores], title: str) -> bytes | None:
    """Grouped bars with CI whiskers, one chart per direction (lower / higher is better, never
    mixed): one group per metric that has a value, one bar per series (a run or a level). None
    when no metric has a value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    cat = catalogue()
    shown = [m for m in cat.table_order if cat.metrics[m].unit == FRACTION
             and any(s.value(m) is not None for s in series.values())]
    groups = cat.by_direction(shown)
    if not groups:
        return None
    widths = [max(2, len(keys)) for keys in groups.values()]
    fig, axes = plt.subplots(1, len(groups), squeeze=False, gridspec_kw={"width_ratios": widths},
                             figsize=(max(6, 1.1 * sum(widths) * max(1, len(series)) / 1.5), 3.6))
    width = 0.8 / max(1, len(series))
    for ax, (direction, metrics) in zip(axes[0], groups.items()):
        x = np.arange(len(metrics))
        for i, (name, scores) in enumerate(series.items()):
            entries = [scores.aggregate(m) for m in metrics]
            values = [e.get("value") or 0.0 for e in entries]  # a series without a value draws no bar
            low = [v - (e.get("ci_low") if e.get("ci_low") is not None else v) for v, e in zip(values, entries)]
            high = [(e.get("ci_high") if e.get("ci_high") is not None else v) - v for v, e in zip(values, entries)]
            ax.bar(x + i * width, values, width, yerr=[low, high], capsize=3, label=name)
        ax.set_xticks(x + width * (len(series) - 1) / 2, [cat.metrics[m].label for m in metrics], rotation=20,
                      ha="right")
        ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))
        ax.set_title(f"{title}: {DIRECTIONS[direction]}")
        ax.legend(fontsize=8)
    return _png(fig)


def wer_per_meeting(scores: Scores) -> bytes | None:
    """Bars of WER per meeting (n/a written where a meeting has none); None when no meeting has one."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ids = list(scores.meetings)
    values = [m.value("wer") for m in scores.meetings.values()]
    if all(v is None for v in values):
        return None
    fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(ids)), 3))
    ax.bar(ids, [v or 0.0 for v in values], color="#4a7bb7")
    top = max(0.1, max(v for v in values if v is not None) * 1.15)
    for i, v in enumerate(values):
        if v is None:
            ax.text(i, top * 0.02, "n/a", ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, top)
    ax.set_ylabel("WER (lower is better)")
    ax.set_title("WER per meeting")
    ax.tick_params(axis="x", rotation=45)
    return _png(fig)
