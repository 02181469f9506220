"""Scoring's render layer: the text table ``speechkit score`` prints."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from speechkit.metrics.diarization import BASELINES
from speechkit.scoring.catalogue import catalogue, metric


def _table(scores: Mapping[str, Any], keys: Sequence[str]) -> list[str]:
    """The lines of a table of the metrics ``keys``: one row per meeting, the aggregate and its 95% CI."""
    agg = scores["aggregate"]
    shown = [metric(k) for k in keys]
    rows = [[mid] + [m.format(entry[m.key]["value"]) for m in shown] for mid, entry in scores["meetings"].items()]
    footer = [["aggregate"] + [m.format(agg[m.key]["value"]) for m in shown],
              ["95% CI"] + ["n/a" if agg[m.key]["ci_low"] is None
                            else f"{m.format(agg[m.key]['ci_low'])}-{m.format(agg[m.key]['ci_high'])}" for m in shown]]
    header = ["meeting"] + [m.short for m in shown]
    widths = [max(len(r[i]) for r in [header, *rows, *footer]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    rule = "-" * len(line(header))
    return [line(header), rule, *map(line, rows), rule, *map(line, footer)]


def _baseline_lines(scores: Mapping[str, Any]) -> list[str]:
    """DER and JER beside their trivial baselines (one line each), where DER was computed."""
    if scores["aggregate"]["der"]["value"] is None:
        return []
    return [f"{metric(k).short} {metric(k).format(scores['aggregate'][k]['value'])} against doing nothing: "
            + "; ".join(f"{label} {metric(k).format(scores['baselines'][b][k]['value'])}"
                        for b, label in BASELINES.items())
            for k in ("der", "jer")]


def format_table(scores: Mapping[str, Any]) -> str:
    """A readable table of ``scores``: one row per meeting, the aggregate and its 95% CI; each
    plug-in family's metrics (notes, questions) in a table of their own when any applies; the
    reasons of the metrics not applicable."""
    s, cat = scores["settings"], catalogue()
    out = [*_table(scores, cat.transcript_keys), "",
           f"DER/JER collar {s['der_collar_s']:g} s on each side of reference boundaries, overlap scored"
           + (f", inside the regions of {s['der_uem']}" if s.get("der_uem") else "")
           + f"; tcpWER collar {s['tcpwer_collar_s']:g} s.",
           f"Aggregate: micro over the meetings where a metric applies (JER: mean); 95% CI from "
           f"{s['bootstrap']['resamples']} bootstrap resamples of meetings (seed {s['bootstrap']['seed']})."]
    out += _baseline_lines(scores)
    out += [f"n/a {metric(k).short}: {reason}" for k, reason in scores["not_applicable"].items()
            if k in cat.transcript_keys]
    for family in cat.plugin_families:
        keys = cat.table_keys(family)
        shorts: dict[str, list[str]] = {}  # the family's metrics n/a, grouped by reason
        for key, reason in scores["not_applicable"].items():
            if key in keys:
                shorts.setdefault(reason, []).append(metric(key).short)
        if sum(map(len, shorts.values())) < len(keys):
            note = family.table_note(s.get(family.name) or {})
            out += ["", family.title or family.name, *_table(scores, keys), *(["", note] if note else [])]
        out += [f"n/a {', '.join(keys)}: {reason}" for reason, keys in shorts.items()]
    return "\n".join(out)
