"""Reports of a run: report.md and a self-contained report.html with plots; level comparisons.

report.md says where the errors are: the aggregate metrics grouped by which direction is better,
each n/a with its reason; WER split into substitutions, deletions and insertions; DER into missed
speech, false alarm and confusion, beside the trivial baselines (one label over the reference
speech, one over the system's speech); a per-speaker table; the missed terms; the names given
to each person per meeting with the wrong ones marked; the correction stage's edits. report.html is
the same Markdown rendered (markdown-it-py), with the plots (matplotlib, Agg) embedded as data URIs,
so it opens anywhere without the folder.
"""
from __future__ import annotations

import base64
import html
import io
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from speechkit.io.atomic import write_bytes, write_json, write_text
from speechkit.metrics.catalog import (DIRECTIONS, FRACTION, METRICS, NOTES_METRICS, QUESTION_METRICS, TABLE_ORDER,
                                       TRANSCRIPT_METRICS, by_direction)
from speechkit.metrics.diarization import BASELINES

if TYPE_CHECKING:
    from speechkit.compare import Comparison, Delta

#: The context levels, one sentence each (README.md says the same).
LEVELS = {
    1: "the meeting's audio alone.",
    2: "L1 plus the system's own outputs for the earlier meetings of the workspace (the words it was sure "
       "of, its speakers' voices and labels, its notes).",
    3: "L2 plus the workspace's artifacts: the roster, voice enrollments, jargon, the meeting's invite (its "
       "size is the diarizer's speaker count) and agenda, and the emails and slides dated up to the meeting.",
}
#: Correction edits listed per meeting (run.json holds them all).
MAX_EDITS = 10
#: Why the correction stage allowed an edit (its ``gate``), as the report explains it.
GATES = {"respelling": "the term was split over several words", "spoken-form": "the words were a spoken form "
         "of the term", "confidence": "the ASR was unsure of the words", "lm": "the workspace language model "
         "prefers the term", "llm": "an LLM proposed it and the guards passed it"}


def _estimate(scores: Mapping[str, Any], key: str) -> str:
    """An aggregate with its CI, or ``n/a: <reason>``."""
    entry = scores["aggregate"].get(key)
    if not entry or entry.get("value") is None:
        return f"n/a: {_cell(scores.get('not_applicable', {}).get(key), 'no value')}"
    return METRICS[key].format_estimate(entry)


def print_summary(scores: dict) -> None:
    """Print the aggregate figures with their 95% CIs (n/a with the reason)."""
    for key in TABLE_ORDER:
        print(f"  {METRICS[key].label:<22} {_estimate(scores, key)}")


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    return buffer.getvalue()


def _bars_with_ci(series: dict[str, dict], title: str) -> bytes | None:
    """Grouped bars with CI whiskers, one chart per direction (lower / higher is better, never
    mixed): one group per metric that has a value, one bar per series (a run or a level). None
    when no metric has a value."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    shown = [m for m in TABLE_ORDER if METRICS[m].unit == FRACTION
             and any((s.get(m) or {}).get("value") is not None for s in series.values())]
    groups = by_direction(shown)
    if not groups:
        return None
    widths = [max(2, len(keys)) for keys in groups.values()]
    fig, axes = plt.subplots(1, len(groups), squeeze=False, gridspec_kw={"width_ratios": widths},
                             figsize=(max(6, 1.1 * sum(widths) * max(1, len(series)) / 1.5), 3.6))
    width = 0.8 / max(1, len(series))
    for ax, (direction, metrics) in zip(axes[0], groups.items()):
        x = np.arange(len(metrics))
        for i, (name, agg) in enumerate(series.items()):
            entries = [agg.get(m) or {} for m in metrics]
            values = [e.get("value") or 0.0 for e in entries]  # a series without a value draws no bar
            low = [v - (e.get("ci_low") if e.get("ci_low") is not None else v) for v, e in zip(values, entries)]
            high = [(e.get("ci_high") if e.get("ci_high") is not None else v) - v for v, e in zip(values, entries)]
            ax.bar(x + i * width, values, width, yerr=[low, high], capsize=3, label=name)
        ax.set_xticks(x + width * (len(series) - 1) / 2, [METRICS[m].label for m in metrics], rotation=20, ha="right")
        ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))
        ax.set_title(f"{title}: {DIRECTIONS[direction]}")
        ax.legend(fontsize=8)
    return _png(fig)


def _per_meeting_wer(scores: dict) -> bytes | None:
    """Bars of WER per meeting (n/a written where a meeting has none); None when no meeting has one."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ids = list(scores["meetings"])
    values = [(scores["meetings"][m].get("wer") or {}).get("value") for m in ids]
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


def missed_terms(scores: dict) -> dict[str, list[str] | None]:
    """Meeting -> terms (jargon and numbers) spoken but not found in the hypothesis; None where the
    meeting's terms were not scored (no term list, or no words)."""
    out: dict[str, list[str] | None] = {}
    for mid, entry in scores["meetings"].items():
        details = entry.get("details", {})
        if "term_recall" not in details and "number_recall" not in details:
            out[mid] = None
            continue
        out[mid] = list(details.get("term_recall", {}).get("missed", [])) + \
            list(details.get("number_recall", {}).get("missed", []))
    return out


def _code(text: str) -> str:
    """``text`` as an inline code span fit for a table cell."""
    return "`" + _cell(text).replace("`", "'") + "`"


def _reason(entry: Mapping[str, Any], key: str) -> str:
    """A meeting's n/a reason for the metric ``key``."""
    return (entry.get("details") or {}).get("not_applicable", {}).get(key, "not scored")


def _na_lines(scores: dict, keys: tuple[str, ...]) -> list[str]:
    """One line per n/a reason of the metrics ``keys`` in the per-meeting table: which metrics, in
    which meetings."""
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    by_metric: dict[tuple[str, str], list[str]] = {}
    for mid, entry in scores["meetings"].items():
        for key in keys:
            if (entry.get(key) or {}).get("value") is None:
                by_metric.setdefault((key, _reason(entry, key)), []).append(mid)
    for (key, reason), meetings in by_metric.items():
        groups.setdefault((reason, tuple(meetings)), []).append(METRICS[key].label)
    return [f"- n/a {', '.join(labels)} ({', '.join(meetings)}): {_cell(reason)}."
            for (reason, meetings), labels in groups.items()]


def _share(count: float, total: float, unit: str = "") -> str:
    """``count`` as a share of ``total`` with the count itself: ``0.080 (99)``, ``0.010 (1.2 s)``."""
    amount = f"{count:.1f} s" if unit == "s" else f"{count:g}"
    return f"{count / total:.3f} ({amount})" if total else f"n/a ({amount})"


def _aggregate_section(scores: dict) -> list[str]:
    """The aggregate metrics, one table per direction; DER and JER beside their trivial baselines."""
    lines = ["## Aggregate (95% bootstrap CI over meetings)", ""]
    baselines = scores.get("baselines") or {}
    for direction, keys in by_direction(TABLE_ORDER).items():
        with_baselines = bool(baselines) and any(k in ("der", "jer") for k in keys)
        lines += [f"### {DIRECTIONS[direction].capitalize()}", "",
                  "| metric | value [95% CI] |" + (" trivial baselines [95% CI] |" if with_baselines else ""),
                  "|---|---|" + ("---|" if with_baselines else "")]
        for key in keys:
            row = f"| {METRICS[key].label} | {_estimate(scores, key)} |"
            if with_baselines:
                row += " " + "; ".join(f"{label} {METRICS[key].format_estimate(baselines[b].get(key))}"
                                       for b, label in BASELINES.items() if key in ("der", "jer") and b in baselines) + " |"
            lines.append(row)
        lines.append("")
    return lines


def _component_rows(scores: dict, metric: str, detail: str, parts: tuple[str, ...], total: str,
                    unit: str = "") -> list[str]:
    """Table rows: per meeting where ``details[detail]`` was computed, its ``total``, the metric and each
    of its ``parts`` as a share of the total; then the sums of scores.json ``components``."""
    shown = METRICS[metric]

    def row(name: str, d: Mapping[str, Any], value: float | None) -> str:
        size = f"{d[total]:.1f}" if unit == "s" else f"{d[total]}"
        return f"| {name} | {size} | {shown.format(value)} | " + " | ".join(_share(d[k], d[total], unit) for k in parts) + " |"

    rows = [row(mid, e["details"][detail], e[metric]["value"]) for mid, e in scores["meetings"].items()
            if detail in e.get("details", {})]
    summed = (scores.get("components") or {}).get(metric)
    return rows + ([row("all", summed, scores["aggregate"][metric]["value"])] if rows and summed else [])


def _word_errors(scores: dict) -> list[str]:
    """WER per meeting split into substitutions, deletions and insertions."""
    lines = ["## Word errors: substitutions, deletions, insertions", ""]
    rows = _component_rows(scores, "wer", "wer", ("substitutions", "deletions", "insertions"), "reference_words")
    if not rows:
        return lines + [f"Not applicable: {_cell(scores['not_applicable'].get('wer'), 'no meetings')}.", ""]
    return lines + ["Each a share of the reference words (after normalisation; the count in brackets); the three "
                    "add up to WER.", "", "| meeting | reference words | WER | substitutions | deletions | insertions |",
                    "|---|---|---|---|---|---|", *rows, ""]


def _diarization_errors(scores: dict) -> list[str]:
    """DER per meeting split into missed speech, false alarm and confusion; DER and JER beside the
    trivial baselines."""
    lines = ["## Diarization errors: missed speech, false alarm, confusion", ""]
    rows = {mid: e["details"]["diarization"] for mid, e in scores["meetings"].items()
            if "diarization" in e.get("details", {})}
    if not rows:
        return lines + [f"Not applicable: {_cell(scores['not_applicable'].get('der'), 'no meetings')}.", ""]
    scored: dict[str, list[str]] = {}
    for mid, d in rows.items():
        scored.setdefault(d.get("hypothesis", "speaker turns"), []).append(mid)
    der, jer = METRICS["der"], METRICS["jer"]
    lines += ["Each a share of the reference speech scored (seconds in brackets); the three add up to DER. Collar "
              f"{scores.get('settings', {}).get('der_collar_s', 0.25):g} s on each side of every reference boundary, "
              "overlapped speech scored. The system's side: "
              + "; ".join(f"{kind} ({', '.join(ids)})" for kind, ids in scored.items()) + ".", "",
              "| meeting | reference speech scored (s) | DER | missed speech | false alarm | confusion |",
              "|---|---|---|---|---|---|",
              *_component_rows(scores, "der", "diarization", ("missed_detection_s", "false_alarm_s", "confusion_s"),
                               "total_s", "s")]
    if not any("baselines" in d for d in rows.values()):
        return lines + [""]
    labels = list(BASELINES.values())
    lines += ["", "### DER and JER against doing nothing", "",
              f"Trivial diarizations scored as the system is: {labels[0]} (every reference turn given to one "
              f"speaker: speech found perfectly, no speaker told apart) and {labels[1]} (the system's turns given "
              "to one speaker). A DER not clearly below them tells speakers apart no better than one label.", "",
              f"| meeting | DER | DER, {labels[0]} | DER, {labels[1]} | JER | JER, {labels[0]} | JER, {labels[1]} |",
              "|---|---|---|---|---|---|---|"]

    def row(name: str, ders: list[float | None], jers: list[float | None]) -> str:
        return f"| {name} | " + " | ".join([*map(der.format, ders), *map(jer.format, jers)]) + " |"

    for mid, d in rows.items():
        base, entry = d.get("baselines") or {}, scores["meetings"][mid]
        lines.append(row(mid, [entry["der"]["value"], *(_der_of(base.get(b)) for b in BASELINES)],
                         [entry["jer"]["value"], *((base.get(b) or {}).get("jer") for b in BASELINES)]))
    aggregate = scores.get("baselines") or {}
    if aggregate:
        def value(baseline: str, metric: str) -> float | None:
            return ((aggregate.get(baseline) or {}).get(metric) or {}).get("value")
        lines.append(row("all", [scores["aggregate"]["der"]["value"], *(value(b, "der") for b in BASELINES)],
                         [scores["aggregate"]["jer"]["value"], *(value(b, "jer") for b in BASELINES)]))
    return lines + [""]


def _der_of(details: Mapping[str, Any] | None) -> float | None:
    """A meeting's DER from its components (None without reference speech)."""
    ratio = METRICS["der"].from_details({"diarization": details}) if details else None
    return ratio.value if ratio else None


def _per_speaker(scores: dict) -> list[str]:
    """Per meeting and person: the name given (✓ / ✗), reference words, WER under the cpWER
    assignment, speech time."""
    lines = ["## Per speaker", ""]
    rows = []
    for mid, entry in scores["meetings"].items():
        details = entry.get("details", {})
        named = (details.get("speakers") or {}).get("persons") or {}
        errors = (details.get("per_speaker") or {}).get("persons") or {}
        for person in sorted({*errors, *named}):
            n, e = named.get(person, {}), errors.get(person, {})
            right = {True: "✓", False: "✗"}.get(n.get("name_right"), "")
            speech = e.get("speech_s", n.get("speech_s"))
            rows.append(f"| {mid} | {_cell(person)} | {_cell(n.get('name'), '(unrouted)') if n else ''} | {right} | "
                        f"{e.get('words', '')} | {METRICS['wer'].format(e.get('wer')) if e else ''} | "
                        f"{'' if speech is None else f'{speech:.1f}'} |")
    if not rows:
        return lines + [f"Not applicable: {_cell(scores['not_applicable'].get('cpwer'), 'no meetings')}.", ""]
    return lines + [
        "Per person: the name the system gave them (the majority over their words; ✓ a name they answer to, "
        "✗ one they do not, blank where not judged), their reference words, their WER against the words of the "
        "system's speaker cpWER assigned them (their share of cpWER's errors), their speech in the reference turns.",
        "", "| meeting | person | name given | named right | reference words | WER | speech (s) |",
        "|---|---|---|---|---|---|---|", *rows, ""]


def _missed_terms_section(scores: dict) -> list[str]:
    """The terms spoken but not found, per meeting; or why terms were not scored."""
    lines = ["## Missed terms", ""]
    missed = missed_terms(scores)
    if all(terms is None for terms in missed.values()):
        reason = scores["not_applicable"].get("term_recall", "no meetings")
        return lines + [f"Not scored: {_cell(reason)}.", ""]
    for mid, terms in missed.items():
        if terms is None:
            lines.append(f"- {mid}: not scored ({_cell(_reason(scores['meetings'][mid], 'term_recall'))})")
        else:
            lines.append(f"- {mid}: " + (", ".join(_code(t) for t in terms) if terms else "none"))
    return lines + [""]


def corrections_section(corrections: Mapping[str, Mapping[str, Any]], has_correct: bool) -> list[str]:
    """The correction stage's edits per meeting (run.json ``stages.correct``; at most :data:`MAX_EDITS`
    listed per meeting) with why each was allowed, and what it rejected, counted by reason."""
    lines = ["## Corrections", ""]
    if not has_correct:
        return lines + ["The recipe has no correct stage.", ""]
    done = {mid: c for mid, c in corrections.items() if c}
    if not done:
        return lines + ["The correct stage changed nothing in any meeting.", ""]
    lines += ["Why an edit was allowed: " + "; ".join(f"{gate}: {why}" for gate, why in GATES.items())
              + f". At most {MAX_EDITS} edits are listed per meeting; run.json (stages.correct) holds them all.", "",
              "| meeting | corrector | edits | turns changed | rejected (by reason) |", "|---|---|---|---|---|"]
    for mid, c in done.items():
        rejected = sum((Counter(c.get(kind) or {}) for kind in
                        ("rejected_candidates", "rejected_turns", "rejected_batches", "failures")), Counter())
        lines.append(f"| {mid} | {_cell(c.get('backend'))} | {c.get('edits', 0)} | {c.get('turns_changed', 0)} of "
                     f"{c.get('turns', 0)} | {_cell(', '.join(f'{k} {v}' for k, v in rejected.items()), 'none')} |")
    lines += ["", "| meeting | turn | before | after | allowed by | score |", "|---|---|---|---|---|---|"]
    for mid, c in done.items():
        edits = (c.get("details") or {}).get("edits", [])
        for e in edits[:MAX_EDITS]:
            score = "" if e.get("score") is None else f"{e['score']:.2f}"
            lines.append(f"| {mid} | {e['segment']} | {_code(e['old'])} | {_code(e['new'])} | {_cell(e['gate'])} | "
                         f"{score} |")
        if len(edits) > MAX_EDITS:
            lines.append(f"| {mid} | | {len(edits) - MAX_EDITS} more | | | |")
    return lines + [""]


def _markdown(title: str, recipe: Any, ws: Any, scores: dict, plots: dict[str, str],
              corrections: Mapping[str, Mapping[str, Any]]) -> str:
    settings = scores.get("settings", {})
    level = getattr(recipe, "level", None)
    lines = [f"# {title}", "", f"Workspace `{ws.name}` ({len(ws.meetings)} meetings), recipe `{recipe.name}`"
             + (f", context level L{level}: {LEVELS[level]}" if level in LEVELS else "."), "",
             "Context levels:", "", *(f"- **L{n}**: {text}" for n, text in LEVELS.items()), "",
             "Scoring settings:", "",
             *(f"- {key}: {value}" for key, value in settings.items() if value is not None and not isinstance(value, dict)),
             ""]
    lines += _aggregate_section(scores)
    if "aggregate" in plots:
        lines += [f"![aggregate]({plots['aggregate']})", ""]
    lines += ["## Per meeting", "", f"Lower is better for {_lower_is_better()}; higher for the others.", ""]
    lines += _per_meeting_table(scores, TRANSCRIPT_METRICS) + [""] + _na_lines(scores, TRANSCRIPT_METRICS)
    if "wer" in plots:
        lines += ["", f"![per-meeting WER]({plots['wer']})"]
    lines += ["", *_word_errors(scores), *_diarization_errors(scores), *_per_speaker(scores),
              *_missed_terms_section(scores)]
    persons, meetings, cells = speaker_grid(scores)
    lines += ["## Speaker identity (name given to each person, per meeting; ✗: a name that breaks the "
              "person's identity)", ""]
    if persons:
        lines += ["| person | " + " | ".join(meetings) + " |", "|---" * (len(meetings) + 1) + "|"]
        lines += [f"| {p} | " + " | ".join(cells.get((p, m), "") for m in meetings) + " |" for p in persons]
    else:
        lines.append(f"Not applicable: {_cell(scores['not_applicable'].get('speaker_consistency'), 'no meetings')}.")
    lines += ["", *corrections_section(corrections, "correct" in (getattr(recipe, "stages", None) or {}))]
    return "\n".join(lines)


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


def judged_section(run: Path) -> str:
    """Markdown: the LLM-judged notes scores of ``run/judged.json`` (``speechkit judge``), the judge
    model beside every figure, after (never instead of) the deterministic ones; "" without the file."""
    path = Path(run) / "judged.json"
    if not path.is_file():
        return ""
    judged = json.loads(path.read_text())
    model = judged["judge_model"]
    lines = ["", f"## LLM-judged notes scores (judge: {_code(model)})", ""]
    if judged["reason"] is not None:
        return "\n".join(lines + [f"Not applicable: {judged['reason']}.", ""])
    check = judged.get("check") or {}
    if check.get("passed") is False:
        lines += [f"**The judge failed its check** ({check['reason']}): read these figures as noise.", ""]
    lines += ["Scores 1-5 of each summary against the gold summary (mean, 95% bootstrap CI over meetings); "
              "they add to the notes scores above and replace none.", "",
              "| dimension | mean | 95% CI | meetings judged | judge |", "|---|---|---|---|---|"]
    of = judged["not_judged"]["of"]
    for dim in judged["dimensions"]:
        a = judged["aggregate"][dim]
        ci = "n/a" if a["ci_low"] is None else f"[{a['ci_low']:.2f}, {a['ci_high']:.2f}]"
        lines.append(f"| {dim} | {a['mean']:.2f} | {ci} | {a['meetings']} of {of} | {_code(model)} |")
    r = judged["requests"]
    lines += ["", f"Requests: {r['requests']} ({r['cache_hits']} from the cache, {r['failed']} failed)."]
    lines += [f"- {mid} not judged: {_cell(m['reason'])}" for mid, m in judged["meetings"].items() if m["reason"]]
    return "\n".join(lines) + "\n"


def probe_section(run: Path) -> str:
    """Markdown: what ``speechkit probe`` found (``run/probe.json``): the finding rate and severity
    share over the judged probes, the model that played the roles, the findings by demand; ""
    without the file."""
    path = Path(run) / "probe.json"
    if not path.is_file():
        return ""
    probe = json.loads(path.read_text())
    s = probe["summary"]
    rate = "n/a (no probe was judged)" if s["finding_rate"] is None else f"{s['finding_rate']:.1%}"
    severe = "n/a (no finding)" if s["severity_share"] is None else f"{s['severity_share']:.1%}"
    lines = ["", f"## Adaptive probing (roles: {_code(probe['endpoint']['model'])})", "",
             f"{s['probes']} probes of {len(probe['meetings'])} meeting(s), {s['judged']} judged: finding rate "
             f"{rate}, severity share {severe}, {s['near_misses']} near misses. A finding is an answer the judge "
             "scored 3 or lower on faithfulness or completeness against the reference transcript (docs/qa.md).", ""]
    for demand, questions in s["findings_by_demand"].items():
        lines += [f"- {_cell(demand)}: " + "; ".join(_cell(q) for q in questions)]
    return "\n".join(lines) + "\n"


def _html_page(title: str, markdown_body: str, images: dict[str, bytes], grid: tuple) -> str:
    """report.html: ``markdown_body`` rendered (markdown-it-py, CommonMark with tables), its images
    embedded as data URIs, and a coloured speaker grid."""
    from markdown_it import MarkdownIt

    for name, data in images.items():
        markdown_body = markdown_body.replace(f"]({name})", f"](data:image/png;base64,{base64.b64encode(data).decode()})")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}img{max-width:100%}</style></head><body>",
             MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown_body)]
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


def asr_section(asr: Mapping[str, Mapping[str, Any]]) -> str:
    """Markdown: per meeting, what the ASR loop and hallucination control did (windows checked,
    flagged by reason, re-decoded without biasing / at a sampling temperature, cleaned); ``asr`` is
    run.json ``asr.meetings``."""
    rows = {mid: a for mid, a in asr.items() if a}
    if not rows:
        return ""
    lines = ["", "## ASR loop and hallucination control", "",
             "Windows flagged (repeated words or n-grams, compression, words outside speech) are decoded "
             "again without prompt and hot words, then at sampling temperatures; those still flagged are "
             "cleaned (repeats collapsed, words outside speech dropped). Speech no decoded word covered "
             "(skipped by the decoder) is decoded again on its own: the stretches and the words found there.", "",
             "| meeting | windows | flagged | reasons | re-decoded unbiased | re-decoded at temperature > 0 | cleaned "
             "| skipped speech decoded again | words found there |",
             "|---|---|---|---|---|---|---|---|---|"]
    keys = ("windows", "flagged_windows", "redecoded_unbiased", "redecoded_fallback", "cleaned", "missed_spans",
            "missed_words")
    totals = [0] * len(keys)
    for mid, a in rows.items():
        counts = [a.get(k, 0) for k in keys]
        totals = [t + c for t, c in zip(totals, counts)]
        reasons = ", ".join(f"{k} {v}" for k, v in (a.get("flagged") or {}).items()) or "-"
        lines.append(f"| {mid} | {counts[0]} | {counts[1]} | {reasons} | {' | '.join(map(str, counts[2:]))} |")
    lines.append(f"| all | {totals[0]} | {totals[1]} | | {' | '.join(map(str, totals[2:]))} |")
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
    """Write report.md, report.html and the plot PNGs of one run into ``out``; ``results`` are the
    run's cascade results (what the ASR loop control and the corrector did); ``notice``, if any, is
    the report's first line (e.g. the share of LLM requests that failed). ``cache`` (run.json
    ``cache``) is shown in report.html only: a rerun changes it, not the run's results."""
    results = results or {}
    _write_report(out, recipe, ws, scores, {mid: r.summaries.get("asr", {}) for mid, r in results.items()},
                  {mid: r.summaries.get("correct", {}) for mid, r in results.items()}, notice, cache)


def rewrite_report(run: Path) -> None:
    """Write the report of a finished run folder again from its scores.json and run.json (after the
    report changed); nothing is run or scored again."""
    from speechkit.llm.run import failure_notice

    run = Path(run)
    info = json.loads((run / "run.json").read_text())
    scores = json.loads((run / "scores.json").read_text())
    recipe = SimpleNamespace(name=info["recipe"]["name"], level=info["recipe"].get("level"),
                             stages=info["recipe"].get("stages") or {})
    ws = SimpleNamespace(name=info["workspace"]["name"], meetings=list(scores["meetings"]))
    _write_report(run, recipe, ws, scores, (info.get("asr") or {}).get("meetings") or {},
                  (info.get("stages") or {}).get("correct") or {}, failure_notice(info.get("llm")), info.get("cache"))


def _write_report(out: Path, recipe: Any, ws: Any, scores: dict, asr: Mapping[str, Mapping[str, Any]],
                  corrections: Mapping[str, Mapping[str, Any]], notice: str | None, cache: dict | None) -> None:
    """report.md, report.html and the plots from a run's scores and stage records (run.json's
    ``asr.meetings`` and ``stages.correct``); a plot with nothing to draw is not written."""
    drawn = {"aggregate.png": _bars_with_ci({recipe.name: scores["aggregate"]}, "Aggregate metrics"),
             "wer.png": _per_meeting_wer(scores)}
    images = {name: data for name, data in drawn.items() if data is not None}
    for name in drawn:
        if name in images:
            write_bytes(out / name, images[name])
        else:
            (out / name).unlink(missing_ok=True)  # an earlier report's plot of this folder
    title = f"speechkit report: {recipe.name} on {ws.name}"
    plots = {name.removesuffix(".png"): name for name in images}
    body = _markdown(title, recipe, ws, scores, plots, corrections)
    body += asr_section(asr)
    body += notes_section(scores)
    body += judged_section(out)
    body += probe_section(out)
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
    """A comparison as markdown: why no significance is claimed (too few meetings), if so; aggregates
    with CIs, paired deltas (the meeting-notes and question metrics in sections of their own, one line
    where no run has them), per-meeting values of the ``per_meeting`` metrics."""
    runs, base = comparison.runs, comparison.runs[0]
    shown = [METRICS[k] for k in comparison.metrics if k in TRANSCRIPT_METRICS]
    lines = [f"Few meetings: {reason}." for reason in comparison.significance_withheld]
    lines += [""] if lines else []
    if shown:
        lines += ["## Aggregate (95% bootstrap CI over meetings, each run alone)", "", *_aggregate_rows(runs, shown),
                  "", f"## Paired deltas against {base.name} (95% paired bootstrap CI over meetings)", "",
                  f"Each run minus {base.name}, both scored on the same {comparison.resamples} resamples of the "
                  f"meetings (seed {comparison.seed}); `*`: the CI excludes 0. Lower is better for "
                  f"{_lower_is_better()}; higher for the others.", "", *_delta_rows(comparison, shown)]
    for title, keys, what in (("Meeting notes", NOTES_METRICS, "notes"), ("Questions", QUESTION_METRICS, "question")):
        group = [METRICS[k] for k in comparison.metrics if k in keys]
        if not group:
            continue
        lines += ["", f"## {title}", ""]
        if any((r.scores["aggregate"].get(m.key) or {}).get("value") is not None for r in runs for m in group):
            lines += ["Each run alone (95% bootstrap CI over meetings):", "", *_aggregate_rows(runs, group), "",
                      f"Paired deltas against {base.name} (95% paired bootstrap CI over meetings, as above; "
                      f"higher is better for every {what} metric):", "", *_delta_rows(comparison, group)]
        else:
            reasons = dict.fromkeys(r.scores.get("not_applicable", {}).get(m.key, "no meetings")
                                    for r in runs for m in group)
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
    images = {"comparison.png": image} if image is not None else {}
    if image is not None:
        write_bytes(out / "comparison.png", image)
    body = (f"# {title}\n\nWorkspace `{comparison.runs[0].workspace}`; runs: "
            + ", ".join(f"{r.name} (`{r.path}`)" for r in comparison.runs) + ".\n\n"
            + comparison_markdown(comparison, per_meeting) + ("\n![runs](comparison.png)\n" if images else ""))
    write_text(out / "comparison.md", body)
    write_text(out / "comparison.html", _html_page(title, body, images, ([], [], {})))
    write_json(out / "comparison.json", comparison.as_dict())
