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

from speechkit.io.atomic import write_bytes, write_json, write_text
from speechkit.metrics.catalog import FRACTION, METRICS, NOTES_METRICS, TABLE_ORDER, TRANSCRIPT_METRICS

if TYPE_CHECKING:
    from speechkit.compare import Comparison, Delta


def print_summary(scores: dict) -> None:
    """Print the aggregate figures with their 95% CIs."""
    for key in TABLE_ORDER:
        print(f"  {METRICS[key].label:<22} {METRICS[key].format_estimate(scores['aggregate'].get(key))}")


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

    metrics = [m for m in TABLE_ORDER if METRICS[m].unit == FRACTION
               and any((s.get(m) or {}).get("value") is not None for s in series.values())]
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(metrics) * max(1, len(series)) / 1.5), 3.6))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(metrics))
    for i, (name, agg) in enumerate(series.items()):
        values = [(agg.get(m) or {}).get("value") or 0.0 for m in metrics]
        low = [v - ((agg.get(m) or {}).get("ci_low") or v) for v, m in zip(values, metrics)]
        high = [((agg.get(m) or {}).get("ci_high") or v) - v for v, m in zip(values, metrics)]
        ax.bar(x + i * width, values, width, yerr=[low, high], capsize=3, label=name)
    ax.set_xticks(x + width * (len(series) - 1) / 2, [METRICS[m].label for m in metrics], rotation=20, ha="right")
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
    """Persons x meetings -> the name the system gave each person (majority of their words),
    marked ``✗`` where it breaks the person's identity (:func:`speechkit.metrics.speakers.wrong_names`)."""
    from speechkit.metrics.speakers import wrong_names

    rows: dict[str, dict[str, tuple[str | None, bool | None]]] = {}
    for mid, entry in scores["meetings"].items():
        persons = (entry.get("details", {}).get("speakers") or {}).get("persons") or {}
        for person, attribution in persons.items():
            rows.setdefault(person, {})[mid] = (attribution.get("name"), attribution.get("name_right"))
    wrong = wrong_names(rows)
    cells = {(p, m): (name or "(unrouted)") + (" ✗" if (p, m) in wrong else "")
             for p, row in rows.items() for m, (name, _) in row.items()}
    persons = sorted(rows)
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
    shown = [METRICS[k] for k in TABLE_ORDER]
    lines += [f"| {m.label} | {m.format_estimate(scores['aggregate'].get(m.key))} |" for m in shown]
    lines += ["", f"![aggregate]({plots['aggregate']})", "", "## Per meeting", ""]
    lines += _per_meeting_table(scores, TRANSCRIPT_METRICS)
    lines += ["", f"![per-meeting WER]({plots['wer']})", "", "## Missed terms", ""]
    missed = missed_terms(scores)
    lines += [f"- **{mid}**: {', '.join(f'`{t}`' for t in terms)}" for mid, terms in missed.items()] or ["none"]
    persons, meetings, cells = speaker_grid(scores)
    lines += ["", "## Speaker identity (name given to each person, per meeting; ✗: a name that breaks the "
              "person's identity)", "",
              "| person | " + " | ".join(meetings) + " |", "|---" * (len(meetings) + 1) + "|"]
    for p in persons:
        lines.append(f"| {p} | " + " | ".join(cells.get((p, m), "") for m in meetings) + " |")
    return "\n".join(lines) + "\n"


def _per_meeting_table(scores: dict, keys: tuple[str, ...]) -> list[str]:
    """Markdown rows: one per meeting, the values of the metrics ``keys``."""
    shown = [METRICS[k] for k in keys]
    lines = ["| meeting | " + " | ".join(m.label for m in shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for mid, entry in scores["meetings"].items():
        lines.append(f"| {mid} | " + " | ".join(m.format((entry.get(m.key) or {}).get("value")) for m in shown) + " |")
    return lines


def _cell(text: str | None, empty: str = "") -> str:
    """``text`` fit for a markdown table cell (no ``|``, one line)."""
    return " ".join(str(text).replace("|", "/").split()) if text else empty


def _assignee(match: dict) -> str:
    """The predicted assignee of a matched action item, marked ✓ (the gold person's canonical name) or
    ✗ (with the partial credit where it is not 0)."""
    name = _cell(match["predicted"]["assignee"], "(none)")
    if match["assignee_right"] is None:  # the gold item has no assignee: not scored
        return name
    if match["assignee_right"]:
        return f"{name} ✓"
    credit = match["assignee_credit"]
    return f"{name} ✗" + (f" (partial {credit:.2f})" if credit else "")


def _meeting_notes(mid: str, entry: dict) -> list[str]:
    """Markdown: one meeting's gold and predicted action items side by side and its decisions."""
    notes = (entry.get("details") or {}).get("meeting_notes")
    if not notes:
        reasons = (entry.get("details") or {}).get("not_applicable") or {}
        return [f"### {mid}", "", f"Not applicable: {reasons.get(NOTES_METRICS[0], 'not scored')}.", ""]
    lines = [f"### {mid}", "", f"Action items: {notes['matched_items']} of {notes['gold_items']} gold matched, "
             f"{notes['predicted_items']} predicted.", "",
             "| gold action item | gold assignee | predicted action item | predicted assignee | similarity |",
             "|---|---|---|---|---|"]
    for m in notes["matches"]:
        lines.append(f"| {_cell(m['gold']['description'])} | {_cell(m['gold']['assignee'], '(none)')} | "
                     f"{_cell(m['predicted']['description'])} | {_assignee(m)} | {m['similarity']:.2f} |")
    lines += [f"| {_cell(g['description'])} | {_cell(g['assignee'], '(none)')} | (missed) | | |"
              for g in notes["missed_items"]]
    lines += [f"| (extra) | | {_cell(p['description'])} | {_cell(p['assignee'], '(none)')} | |"
              for p in notes["extra_items"]]
    decisions = notes["decisions"]
    lines += ["", f"Decisions: {notes['decisions_found']} of {len(decisions)} found." if decisions
              else "Decisions: none in the gold notes.", ""]
    if decisions:
        lines += [f"- ✓ {_cell(d['topic'])}: {_cell(d['choice'])} (notes: {_cell(d['stated'])})" if d["found"]
                  else f"- ✗ missed: {_cell(d['topic'])}: {_cell(d['choice'])}" for d in decisions] + [""]
    if notes["facts_missed"]:
        lines += ["Gold facts the summary does not state: " + "; ".join(_cell(f).rstrip(".") for f in notes["facts_missed"]), ""]
    return lines


def notes_section(scores: dict) -> str:
    """Markdown: the notes metrics per meeting, then per meeting the gold and predicted action items
    side by side (matched pairs, missed gold items, extra predicted ones; each predicted assignee
    marked ✓ right or ✗ wrong) and the gold decisions found and missed. Where no meeting has both
    the run's notes and gold notes, one line says why."""
    lines = ["", "## Meeting notes", ""]
    if not any("meeting_notes" in (e.get("details") or {}) for e in scores["meetings"].values()):
        reasons = dict.fromkeys(scores["not_applicable"].get(k, "no meetings") for k in NOTES_METRICS)
        return "\n".join(lines + [f"Not applicable: {'; '.join(reasons)}."]) + "\n"
    settings = scores.get("settings", {}).get("notes") or {}
    model = f" ({settings['model']})" if settings.get("model") else ""
    lines += [f"Action items matched one-to-one by {settings.get('similarity')} similarity{model} >= "
              f"{settings.get('threshold')}. A predicted assignee is ✓ when written as the gold person's canonical "
              "name, else ✗ (partial credit: the share of the name's words it holds).", ""]
    lines += _per_meeting_table(scores, NOTES_METRICS) + [""]
    for mid, entry in scores["meetings"].items():
        lines += _meeting_notes(mid, entry)
    return "\n".join(lines)


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


def cache_section(cache: dict | None) -> str:
    """The stage cache's hits and misses per stage (run.json ``cache``), as markdown."""
    if not cache:
        return ""
    hits, misses = cache.get("hits", {}), cache.get("misses", {})
    lines = ["", "## Stage cache", "", "Results taken from the stage cache (hits) and computed (misses), per stage.", "",
             "| stage | hits | misses |", "|---|---|---|"]
    lines += [f"| {stage} | {hits.get(stage, 0)} | {misses.get(stage, 0)} |" for stage in dict.fromkeys([*hits, *misses])]
    return "\n".join(lines) + "\n"


def write_report(out: Path, recipe: Any, ws: Any, scores: dict, results: dict | None = None,
                 notice: str | None = None, cache: dict | None = None) -> None:
    """Write report.md, report.html and the plot PNGs of one run into ``out``; ``notice``, if
    any, is the report's first line (e.g. the share of LLM requests that failed). ``cache``
    (run.json ``cache``) is shown in report.html only: a rerun changes it, not the run's results."""
    images = {"aggregate.png": _bars_with_ci({recipe.name: scores["aggregate"]}, "Aggregate metrics"),
              "wer.png": _per_meeting_wer(scores)}
    for name, data in images.items():
        write_bytes(out / name, data)
    title = f"speechkit report: {recipe.name} on {ws.name}"
    body = _markdown(title, recipe, ws, scores, {"aggregate": "aggregate.png", "wer": "wer.png"})
    body += asr_section(results or {})
    body += notes_section(scores)
    if notice:
        body = f"{notice}\n\n{body}"
    write_text(out / "report.md", body)
    write_text(out / "report.html", _html_page(title, body + cache_section(cache), images, speaker_grid(scores)))


def format_delta(delta: "Delta") -> str:
    """``+0.012 [-0.004, +0.031]``, with ``*`` when the CI excludes 0 (better or worse said)."""
    e, metric = delta.estimate, METRICS[delta.metric]
    if e.value is None:
        return "n/a"
    text = metric.format(e.value, signed=True)
    if e.ci_low is not None:
        text += f" [{metric.format(e.ci_low, signed=True)}, {metric.format(e.ci_high, signed=True)}]"
    if delta.significant:
        text += " * (better)" if delta.better else " * (worse)"
    return text


def _lower_is_better() -> str:
    """The labels of the metrics where lower is better, as prose (``WER, cpWER, tcpWER, DER and JER``)."""
    labels = [METRICS[k].label for k in TABLE_ORDER if METRICS[k].better == "lower"]
    return " and ".join(filter(None, [", ".join(labels[:-1]), labels[-1]]))


def _aggregate_rows(runs: list, shown: list) -> list[str]:
    """Markdown rows: each metric of ``shown``, each run's aggregate with its CI."""
    return ["| metric | " + " | ".join(r.name for r in runs) + " |", "|---" * (len(runs) + 1) + "|",
            *(f"| {m.label} | " + " | ".join(m.format_estimate(r.scores["aggregate"].get(m.key)) for r in runs) + " |"
              for m in shown)]


def _delta_rows(comparison: "Comparison", shown: list) -> list[str]:
    """Markdown rows: each metric of ``shown``, each later run's paired delta against the first."""
    runs, base = comparison.runs, comparison.runs[0]
    return ["| metric | " + " | ".join(f"{r.name} - {base.name}" for r in runs[1:]) + " |", "|---" * len(runs) + "|",
            *(f"| {m.label} | " + " | ".join(format_delta(comparison.deltas[r.name][m.key]) for r in runs[1:]) + " |"
              for m in shown)]


def comparison_markdown(comparison: "Comparison", per_meeting: tuple[str, ...] = ("wer", "der")) -> str:
    """A comparison as markdown: aggregates with CIs, paired deltas (the meeting-notes metrics in a
    section of their own, one line where no run has them), per-meeting values of the ``per_meeting``
    metrics."""
    runs, base = comparison.runs, comparison.runs[0]
    shown = [METRICS[k] for k in comparison.metrics if k in TRANSCRIPT_METRICS]
    notes = [METRICS[k] for k in comparison.metrics if k in NOTES_METRICS]
    lines = []
    if shown:
        lines += ["## Aggregate (95% bootstrap CI over meetings, each run alone)", "", *_aggregate_rows(runs, shown),
                  "", f"## Paired deltas against {base.name} (95% paired bootstrap CI over meetings)", "",
                  f"Each run minus {base.name}, both scored on the same {comparison.resamples} resamples of the "
                  f"meetings (seed {comparison.seed}); `*`: the CI excludes 0. Lower is better for "
                  f"{_lower_is_better()}; higher for the others.", "", *_delta_rows(comparison, shown)]
    if notes:
        lines += ["", "## Meeting notes", ""]
        if any((r.scores["aggregate"].get(m.key) or {}).get("value") is not None for r in runs for m in notes):
            lines += ["Each run alone (95% bootstrap CI over meetings):", "", *_aggregate_rows(runs, notes), "",
                      f"Paired deltas against {base.name} (95% paired bootstrap CI over meetings, as above; "
                      "higher is better for every notes metric):", "", *_delta_rows(comparison, notes)]
        else:
            reasons = dict.fromkeys(r.scores.get("not_applicable", {}).get(m.key, "no meetings")
                                    for r in runs for m in notes)
            lines.append(f"Not applicable in any run: {'; '.join(reasons)}.")
    for metric in (METRICS[k] for k in per_meeting):
        lines += ["", f"## {metric.label} per meeting", "",
                  "| meeting | " + " | ".join(r.name for r in runs) + " | "
                  + " | ".join(f"{r.name} - {base.name}" for r in runs[1:]) + " |",
                  "|---" * (2 * len(runs)) + "|"]
        for mid in base.scores["meetings"]:
            values = [(r.scores["meetings"][mid].get(metric.key) or {}).get("value") for r in runs]
            deltas = [metric.format(None if v is None or values[0] is None else v - values[0], signed=True)
                      for v in values[1:]]
            lines.append(f"| {mid} | " + " | ".join(metric.format(v) for v in values) + " | " + " | ".join(deltas) + " |")
    return "\n".join(lines) + "\n"


def write_comparison(out: Path, comparison: "Comparison", title: str = "speechkit comparison",
                     per_meeting: tuple[str, ...] = ("wer", "der")) -> None:
    """comparison.md/.html/.json/.png of ``comparison`` (several runs of one workspace, e.g. L1, L2,
    L3, side by side, and each run's delta against the first with a paired bootstrap 95% CI over
    meetings, :mod:`speechkit.compare`) with per-meeting tables of the ``per_meeting`` metrics."""
    image = _bars_with_ci({r.name: r.scores["aggregate"] for r in comparison.runs}, "Runs compared")
    write_bytes(out / "comparison.png", image)
    body = (f"# {title}\n\nWorkspace `{comparison.runs[0].workspace}`; runs: "
            + ", ".join(f"{r.name} (`{r.path}`)" for r in comparison.runs) + ".\n\n"
            + comparison_markdown(comparison, per_meeting) + "\n![runs](comparison.png)\n")
    write_text(out / "comparison.md", body)
    write_text(out / "comparison.html", _html_page(title, body, {"comparison.png": image}, ([], [], {})))
    write_json(out / "comparison.json", comparison.as_dict())
