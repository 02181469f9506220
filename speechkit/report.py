"""Reports of a run: report.md and a self-contained report.html with plots; level comparisons.

Plots are drawn with matplotlib (Agg) into PNG files beside the report and embedded in the HTML
as data URIs, so the HTML opens anywhere without the folder.
"""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speechkit.io.atomic import write_bytes, write_text

if TYPE_CHECKING:
    from speechkit.compare import Comparison

METRICS = ("wer", "cpwer", "number_recall", "term_recall", "speaker_consistency", "named_speaker_accuracy",
           "der", "jer")
LABELS = {"wer": "WER", "cpwer": "cpWER", "number_recall": "number recall", "term_recall": "term recall",
          "speaker_consistency": "speaker consistency", "named_speaker_accuracy": "named-speaker acc.",
          "der": "DER", "jer": "JER", "tcpwer": "tcpWER"}


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _estimate(entry: dict | None) -> str:
    if not entry or entry.get("value") is None:
        return "n/a"
    if entry.get("ci_low") is None:
        return _fmt(entry["value"])
    return f"{entry['value']:.3f} [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}]"


def print_summary(scores: dict) -> None:
    """Print the aggregate figures with their 95% CIs."""
    for metric in METRICS:
        print(f"  {LABELS[metric]:<22} {_estimate(scores['aggregate'].get(metric))}")


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    return buffer.getvalue()


def _bars_with_ci(series: dict[str, dict], title: str) -> bytes:
    """Grouped bars: one group per metric, one bar per series (a run or a level), CI whiskers."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    metrics = [m for m in METRICS if any((s.get(m) or {}).get("value") is not None for s in series.values())]
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(metrics) * max(1, len(series)) / 1.5), 3.6))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(metrics))
    for i, (name, agg) in enumerate(series.items()):
        values = [(agg.get(m) or {}).get("value") or 0.0 for m in metrics]
        low = [v - ((agg.get(m) or {}).get("ci_low") or v) for v, m in zip(values, metrics)]
        high = [((agg.get(m) or {}).get("ci_high") or v) - v for v, m in zip(values, metrics)]
        ax.bar(x + i * width, values, width, yerr=[low, high], capsize=3, label=name)
    ax.set_xticks(x + width * (len(series) - 1) / 2, [LABELS[m] for m in metrics], rotation=20, ha="right")
    ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _png(fig)


def _per_meeting_wer(scores: dict) -> bytes:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ids = list(scores["meetings"])
    values = [(scores["meetings"][m].get("wer") or {}).get("value") or 0.0 for m in ids]
    fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(ids)), 3))
    ax.bar(ids, values, color="#4a7bb7")
    ax.set_ylim(0, max(0.1, max(values, default=0.0) * 1.15))
    ax.set_ylabel("WER")
    ax.set_title("WER per meeting")
    ax.tick_params(axis="x", rotation=45)
    return _png(fig)


def speaker_grid(scores: dict) -> tuple[list[str], list[str], dict[tuple[str, str], str]]:
    """Persons x meetings -> the name the system gave each person (majority of their words)."""
    cells: dict[tuple[str, str], str] = {}
    for mid, entry in scores["meetings"].items():
        persons = (entry.get("details", {}).get("speakers") or {}).get("persons") or {}
        for person, attribution in persons.items():
            cells[(person, mid)] = attribution.get("name") or "(unrouted)"
    persons = sorted({p for p, _ in cells})
    return persons, list(scores["meetings"]), cells


def missed_terms(scores: dict) -> dict[str, list[str]]:
    """Meeting -> terms (jargon and numbers) spoken but not found in the hypothesis."""
    out = {}
    for mid, entry in scores["meetings"].items():
        details = entry.get("details", {})
        missed = list(details.get("term_recall", {}).get("missed", [])) + \
            list(details.get("number_recall", {}).get("missed", []))
        if missed:
            out[mid] = missed
    return out


def _markdown(title: str, recipe: Any, ws: Any, scores: dict, plots: dict[str, str]) -> str:
    settings = scores.get("settings", {})
    lines = [f"# {title}", "", f"Workspace `{ws.name}` ({len(ws.meetings)} meetings), recipe `{recipe.name}` "
             f"(context level L{recipe.level}).", "",
             *(f"- {key}: {value}" for key, value in settings.items() if not isinstance(value, dict)), "",
             "## Aggregate (95% bootstrap CI over meetings)", "", "| metric | value [95% CI] |", "|---|---|"]
    lines += [f"| {LABELS[m]} | {_estimate(scores['aggregate'].get(m))} |" for m in METRICS]
    lines += ["", f"![aggregate]({plots['aggregate']})", "", "## Per meeting", "",
              "| meeting | " + " | ".join(LABELS[m] for m in METRICS) + " |", "|---" * (len(METRICS) + 1) + "|"]
    for mid, entry in scores["meetings"].items():
        lines.append(f"| {mid} | " + " | ".join(_fmt((entry.get(m) or {}).get("value")) for m in METRICS) + " |")
    lines += ["", f"![per-meeting WER]({plots['wer']})", "", "## Missed terms", ""]
    missed = missed_terms(scores)
    lines += [f"- **{mid}**: {', '.join(f'`{t}`' for t in terms)}" for mid, terms in missed.items()] or ["none"]
    persons, meetings, cells = speaker_grid(scores)
    lines += ["", "## Speaker identity (name given to each person, per meeting)", "",
              "| person | " + " | ".join(meetings) + " |", "|---" * (len(meetings) + 1) + "|"]
    for p in persons:
        lines.append(f"| {p} | " + " | ".join(cells.get((p, m), "") for m in meetings) + " |")
    return "\n".join(lines) + "\n"


def _html_page(title: str, markdown_body: str, images: dict[str, bytes], grid: tuple) -> str:
    """A minimal HTML rendering of the report with embedded images and a coloured speaker grid."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}img{max-width:100%}</style></head><body>"]
    in_table = False
    for line in markdown_body.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if set("".join(cells)) <= set("-"):
                continue
            if not in_table:
                parts.append("<table>")
                in_table = True
            parts.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
            continue
        if in_table:
            parts.append("</table>")
            in_table = False
        if line.startswith("!["):
            name = line[line.index("(") + 1:-1]
            data = base64.b64encode(images[name]).decode()
            parts.append(f"<p><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'></p>")
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            parts.append(f"<h{level}>{html.escape(line.lstrip('# '))}</h{level}>")
        elif line.strip():
            parts.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        parts.append("</table>")
    persons, meetings, cells = grid
    if persons:
        palette = ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5"]
        colours: dict[str, str] = {}
        parts.append("<h2>Speaker-consistency grid</h2><table><tr><th>person</th>" +
                     "".join(f"<th>{html.escape(m)}</th>" for m in meetings) + "</tr>")
        for p in persons:
            row = []
            for m in meetings:
                name = cells.get((p, m), "")
                colour = colours.setdefault(name, palette[len(colours) % len(palette)]) if name else "#fff"
                row.append(f"<td style='background:{colour}'>{html.escape(name)}</td>")
            parts.append(f"<tr><th>{html.escape(p)}</th>{''.join(row)}</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def asr_section(results: dict) -> str:
    """Markdown: per meeting, what the ASR loop and hallucination control did (windows checked,
    flagged by reason, re-decoded without biasing / at a sampling temperature, cleaned)."""
    rows = {mid: r.asr for mid, r in results.items() if getattr(r, "asr", None)}
    if not rows:
        return ""
    lines = ["", "## ASR loop and hallucination control", "",
             "Windows flagged (repeated words or n-grams, compression, words outside speech) are decoded "
             "again without prompt and hot words, then at sampling temperatures; those still flagged are "
             "cleaned (repeats collapsed, words outside speech dropped).", "",
             "| meeting | windows | flagged | reasons | re-decoded unbiased | re-decoded at temperature > 0 | cleaned |",
             "|---|---|---|---|---|---|---|"]
    totals = [0, 0, 0, 0, 0]
    for mid, a in rows.items():
        counts = [a.get(k, 0) for k in ("windows", "flagged_windows", "redecoded_unbiased", "redecoded_fallback",
                                        "cleaned")]
        totals = [t + c for t, c in zip(totals, counts)]
        reasons = ", ".join(f"{k} {v}" for k, v in (a.get("flagged") or {}).items()) or "-"
        lines.append(f"| {mid} | {counts[0]} | {counts[1]} | {reasons} | {counts[2]} | {counts[3]} | {counts[4]} |")
    lines.append(f"| all | {totals[0]} | {totals[1]} | | {totals[2]} | {totals[3]} | {totals[4]} |")
    return "\n".join(lines) + "\n"


def write_report(out: Path, recipe: Any, ws: Any, scores: dict, results: dict | None = None) -> None:
    """Write report.md, report.html and the plot PNGs of one run into ``out``."""
    images = {"aggregate.png": _bars_with_ci({recipe.name: scores["aggregate"]}, "Aggregate metrics"),
              "wer.png": _per_meeting_wer(scores)}
    for name, data in images.items():
        write_bytes(out / name, data)
    title = f"speechkit report: {recipe.name} on {ws.name}"
    body = _markdown(title, recipe, ws, scores, {"aggregate": "aggregate.png", "wer": "wer.png"})
    body += asr_section(results or {})
    write_text(out / "report.md", body)
    write_text(out / "report.html", _html_page(title, body, images, speaker_grid(scores)))


def write_comparison(out: Path, runs: "dict[str, dict] | Comparison", title: str = "speechkit comparison",
                     resamples: int | None = None, seed: int | None = None,
                     per_meeting: tuple[str, ...] = ("wer", "der")) -> "Comparison":
    """comparison.md/.html/.json/.png: several runs of one workspace (e.g. L1, L2, L3) side by side,
    and each run's delta against the first with a paired bootstrap 95% CI over meetings
    (:mod:`speechkit.compare`) and per-meeting tables of the ``per_meeting`` metrics. ``runs``:
    name -> scores.json dict (in order, the first is the baseline), or a ready
    :class:`~speechkit.compare.Comparison`."""
    from speechkit.compare import Comparison, Run, compare, markdown
    from speechkit.metrics.bootstrap import RESAMPLES, SEED

    if not isinstance(runs, Comparison):
        runs = compare([Run(name, Path(out) / name.lower(), scores) for name, scores in runs.items()],
                       resamples=RESAMPLES if resamples is None else resamples, seed=SEED if seed is None else seed)
    comparison = runs
    image = _bars_with_ci({r.name: r.scores["aggregate"] for r in comparison.runs}, "Runs compared")
    write_bytes(out / "comparison.png", image)
    body = (f"# {title}\n\nWorkspace `{comparison.runs[0].workspace}`; runs: "
            + ", ".join(f"{r.name} (`{r.path}`)" for r in comparison.runs) + ".\n\n"
            + markdown(comparison, per_meeting) + "\n![runs](comparison.png)\n")
    write_text(out / "comparison.md", body)
    write_text(out / "comparison.html", _html_page(title, body, {"comparison.png": image}, ([], [], {})))
    from speechkit.io.atomic import write_json
    write_json(out / "comparison.json", comparison.as_dict())
    return comparison
