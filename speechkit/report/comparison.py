"""A comparison of runs rendered: comparison.md/.html/.json/.png (:mod:`speechkit.compare`)."""
from __future__ import annotations

from pathlib import Path

from speechkit.compare import Ablation, CompareError, Comparison, Delta, Run, compare, load_run
from speechkit.io.atomic import write_bytes, write_json, write_text
from speechkit.io.jsonfile import read_json
from speechkit.io.run_folder import LEVEL_FOLDERS, LevelsFolder
from speechkit.metrics.bootstrap import MAX_MIN_MEETINGS, MIN_MEETINGS, RESAMPLES, SEED, check_bootstrap_settings
from speechkit.metrics.catalog import Metric
from speechkit.metrics.family import MetricFamily
from speechkit.metrics.word_kinds import KINDS, OPERATIONS
from speechkit.report.html import html_page
from speechkit.report.plots import bars_with_ci
from speechkit.report.sections import lower_is_better
from speechkit.scoring.catalogue import catalogue, metric


def format_delta(delta: Delta) -> str:
    """``+0.012 [-0.004, +0.031]``, with ``*`` when the CI excludes 0 (better or worse said)."""
    e, shown = delta.estimate, metric(delta.metric)
    if e.value is None:
        return "n/a"
    text = shown.format(e.value, signed=True)
    if e.ci_low is not None:
        text += f" [{shown.format(e.ci_low, signed=True)}, {shown.format(e.ci_high, signed=True)}]"
    if delta.significant:
        text += " * (better)" if delta.better else " * (worse)"
    return text


def _label(m: Metric, runs: list[Run]) -> str:
    """The metric's label as the first run's scores show it (a judged metric's names its judge model)."""
    return m.label_in(runs[0].scores.settings)


def _aggregate_rows(runs: list[Run], shown: list[Metric]) -> list[str]:
    """Markdown rows: each metric of ``shown``, each run's pooled (micro) figure, then each run's
    mean of meetings, each with its CI."""
    return ["| metric | " + " | ".join(f"{r.name} pooled" for r in runs) + " | "
            + " | ".join(f"{r.name} mean of meetings" for r in runs) + " |", "|---" * (2 * len(runs) + 1) + "|",
            *(f"| {_label(m, runs)} | " + " | ".join(m.format_estimate(r.scores.aggregate(m.key)) for r in runs)
              + " | " + " | ".join(m.format_estimate(r.scores.meeting_mean(m.key)) for r in runs) + " |"
              for m in shown)]


def _delta_rows(comparison: Comparison, shown: list[Metric]) -> list[str]:
    """Markdown rows: each metric of ``shown``, each later run's paired delta against the first."""
    runs, base = comparison.runs, comparison.runs[0]
    return ["| metric | " + " | ".join(f"{r.name} - {base.name}" for r in runs[1:]) + " |", "|---" * len(runs) + "|",
            *(f"| {_label(m, runs)} | " + " | ".join(format_delta(comparison.deltas[r.name][m.key])
                                                     for r in runs[1:]) + " |" for m in shown)]


def _judges(comparison: Comparison, family: MetricFamily) -> list[str]:
    """Which model judged each run (a family's scores.json ``settings`` entry), and whether it failed
    its self-check: one line each."""
    settings = {r.name: r.scores.settings.get(family.name) or {} for r in comparison.runs}
    models = {name: s.get("judge_model") for name, s in settings.items() if s.get("judge_model")}
    if len(set(models.values())) == 1:
        lines = [f"Judge: `{next(iter(models.values()))}` in every run judged."]
    else:
        lines = ["Judges: " + ", ".join(f"{name} `{model}`" for name, model in models.items())
                 + ": the judged deltas compare judges as well as runs."] if models else []
    failed = [name for name, s in settings.items() if s.get("check_passed") is False]
    return lines + ([f"The judge failed its self-check in {', '.join(failed)}: read those judged scores as noise."]
                    if failed else [])


def _exact_and_judged(comparison: Comparison, family: MetricFamily) -> list[str]:
    """The paper's Table 4: the exact metrics ``family.beside`` and the family's judged ones, one row
    each with its type, each run's value and each later run's paired delta against the first."""
    cat, runs, base = catalogue(), comparison.runs, comparison.runs[0]
    head = ["", f"## Exact and judged, side by side ({family.title or family.name})", ""]
    own = [k for k in cat.table_keys(family) if k in comparison.metrics]
    if not any(r.scores.value(k) is not None for r in runs for k in own):
        reasons = dict.fromkeys(r.scores.not_applicable(k) or "no meetings" for r in runs for k in own)
        return [*head, f"No run has {family.what} scores: {'; '.join(reasons)}."]
    keys = [k for k in (*family.beside, *own) if k in comparison.metrics]
    rows, lower = [], [cat.metrics[k].label for k in keys if cat.metrics[k].better == "lower"]
    for m in (cat.metrics[k] for k in keys):
        kind = "judged" if m.judged else "exact"
        rows.append(f"| {kind} | {_label(m, runs)} | "
                    + " | ".join(m.format_estimate(r.scores.aggregate(m.key)) for r in runs) + " | "
                    + " | ".join(format_delta(comparison.deltas[r.name][m.key]) for r in runs[1:]) + " |")
    return [*head, *_judges(comparison, family),
            "", "Exact: computed against the gold data (a share, 0-1); judged: scored 1-5 by the LLM judge named in "
            f"its label. Each run alone (95% bootstrap CI over meetings), then each run minus {base.name} (95% "
            "paired bootstrap CI, as above); higher is better for "
            + (f"all but {', '.join(lower)}." if lower else "every one of them."), "",
            "| type | metric | " + " | ".join(r.name for r in runs) + " | "
            + " | ".join(f"{r.name} - {base.name}" for r in runs[1:]) + " |", "|---" * (2 * len(runs) + 1) + "|",
            *rows]


def comparison_markdown(comparison: Comparison, per_meeting: tuple[str, ...] = ("wer", "der"),
                        breakdown: bool = True) -> str:
    """A comparison as markdown: why no significance is claimed (too few meetings), if so; aggregates
    with CIs, paired deltas (each plug-in family's metrics, the notes' and the questions', in a
    section of its own, one line where no run has them), per-meeting values of the ``per_meeting``
    metrics; with ``breakdown``, then :func:`breakdown_markdown`."""
    runs, base, cat = comparison.runs, comparison.runs[0], catalogue()
    shown = [cat.metrics[k] for k in comparison.metrics if k in cat.transcript_keys]
    lines = [f"Few meetings: {reason}." for reason in comparison.significance_withheld]
    lines += [""] if lines else []
    if shown:
        lines += ["## Aggregate (95% bootstrap CI over meetings, each run alone)", "", *_aggregate_rows(runs, shown),
                  "", f"## Paired deltas against {base.name} (95% paired bootstrap CI over meetings)", "",
                  f"Each run minus {base.name}, both scored on the same {comparison.resamples} resamples of the "
                  f"meetings (seed {comparison.seed}); `*`: the CI excludes 0. Lower is better for "
                  f"{lower_is_better()}; higher for the others.", "", *_delta_rows(comparison, shown)]
    for family in cat.plugin_families:
        keys = cat.table_keys(family)
        group = [cat.metrics[k] for k in comparison.metrics if k in keys]
        if not group:
            continue
        if family.beside:
            lines += _exact_and_judged(comparison, family)
            continue
        lines += ["", f"## {family.title or family.name}", ""]
        if any(r.scores.value(m.key) is not None for r in runs for m in group):
            lines += ["Each run alone (95% bootstrap CI over meetings):", "", *_aggregate_rows(runs, group), "",
                      f"Paired deltas against {base.name} (95% paired bootstrap CI over meetings, as above; "
                      f"higher is better for every {family.what} metric):", "", *_delta_rows(comparison, group)]
        else:
            reasons = dict.fromkeys(r.scores.not_applicable(m.key) or "no meetings" for r in runs for m in group)
            lines.append(f"Not applicable in any run: {'; '.join(reasons)}.")
    for shown in (cat.metrics[k] for k in per_meeting):
        lines += ["", f"## {shown.label} per meeting", "",
                  "| meeting | " + " | ".join(r.name for r in runs) + " | "
                  + " | ".join(f"{r.name} - {base.name}" for r in runs[1:]) + " |",
                  "|---" * (2 * len(runs)) + "|"]
        for mid in base.scores.meetings:
            values = [r.scores.meetings[mid].value(shown.key) for r in runs]
            deltas = [shown.format(None if v is None or values[0] is None else v - values[0], signed=True)
                      for v in values[1:]]
            lines.append(f"| {mid} | " + " | ".join(shown.format(v) for v in values) + " | "
                         + " | ".join(deltas) + " |")
    return "\n".join(lines + (breakdown_markdown(comparison) if breakdown else [])) + "\n"


# Where the gains come from: the L3 ablation and the word errors by kind.

def breakdown_markdown(comparison: Comparison) -> list[str]:
    """The lines of the sections that say where the differences come from: the L3 ablation (when it
    was run) and each run's word errors by kind of word."""
    ablated = comparison.ablation
    lines = ["", *ablation_markdown(ablated, comparison.metrics, comparison.resamples)] if ablated else []
    return lines + word_error_kinds_markdown([*comparison.runs, *(ablated.without.values() if ablated else ())])


# WER's errors by kind of word, per run (the ASR error taxonomy).

def word_error_kinds_markdown(runs: list[Run]) -> list[str]:
    """The lines of the section of each run's WER errors by kind of word (errors, and in brackets
    substitutions/deletions/insertions), and each later run's change against the first; none
    where a run's scores have no kinds (scored before they were counted, or WER n/a)."""
    kinds = [r.scores.components.get("word_error_kinds") or {} for r in runs]
    if not all(k.get("meetings") for k in kinds):
        return []
    base = runs[0]

    def counts(entry: dict[str, int]) -> str:
        return f"{entry['errors']} ({'/'.join(str(entry[op]) for op in OPERATIONS.values())})"

    lines = ["", "## Word errors by kind of word", "",
             "Each run's WER errors by the kind of word they hit (docs/scores-schema.md, \"Word errors by kind\"): "
             "errors (substitutions/deletions/insertions), summed over the meetings; then each run's change in "
             f"errors against {base.name} (negative: errors context removed).", "",
             "| kind | " + " | ".join(r.name for r in runs) + " | "
             + " | ".join(f"{r.name} - {base.name}" for r in runs[1:]) + " |", "|---" * (2 * len(runs)) + "|"]
    for kind, label in KINDS.items():
        entries = [k["kinds"][kind] for k in kinds]
        lines.append(f"| {label} | " + " | ".join(map(counts, entries)) + " | "
                     + " | ".join(f"{e['errors'] - entries[0]['errors']:+d}" for e in entries[1:]) + " |")
    return lines


# The L3 ablation (``speechkit recipe --level all --ablations``).

def ablation_markdown(ablation: Ablation, metrics: tuple[str, ...], resamples: int) -> list[str]:
    """The lines of the ablation section: per metric (each of ``metrics`` that any run has), its
    value in L1, in L3 without each stream and in L3, then the L1 -> L3 gain and each stream's
    share of it (L3 minus L3 without the stream), paired deltas with their CIs."""
    base, full, without = ablation.base, ablation.full, ablation.without
    runs = [base, *without.values(), full]
    shown = [metric(k) for k in metrics if any(r.scores.value(k) is not None for r in runs)]
    shares = [f"{full.name} - {r.name}" for r in without.values()]
    lines = ["## The L3 ablation: which stream the L1 -> L3 gain comes from", "",
             f"{full.name} run again without one L3 stream (`context.ablate`): "
             + "; ".join(f"{r.name}: `{r.path}`" for r in without.values())
             + f". The gain is {full.name} - {base.name}; a stream's share is what {full.name} loses without it "
             "(the others present), so the shares need not add up to the gain. Paired deltas with 95% CIs "
             f"over {resamples} resamples of the meetings, as above; `*`: the CI excludes 0.", ""]
    lines += ["| metric | " + " | ".join(r.name for r in runs) + f" | gain {full.name} - {base.name} | "
              + " | ".join(shares) + " |", "|---" * (len(runs) + 2 + len(shares)) + "|"]
    for m in shown:
        deltas = [ablation.gain[m.key], *(ablation.shares[stream][m.key] for stream in without)]
        lines.append(f"| {m.label} | " + " | ".join(m.format(r.scores.value(m.key)) for r in runs) + " | "
                     + " | ".join(format_delta(d) for d in deltas) + " |")
    if not shown:
        lines.append("| (no metric applies in any run) |" + " |" * (len(runs) + 1 + len(shares)))
    return lines


def write_comparison(out: Path, comparison: Comparison, title: str = "speechkit comparison",
                     per_meeting: tuple[str, ...] = ("wer", "der")) -> None:
    """comparison.md/.html/.json/.png of ``comparison`` (several runs of one workspace, e.g. L1, L2,
    L3, side by side, and each run's delta against the first with a paired bootstrap 95% CI over
    meetings, :mod:`speechkit.compare`) with per-meeting tables of the ``per_meeting`` metrics; the
    plot of the runs, then where the differences come from (:func:`breakdown_markdown`)."""
    folder = LevelsFolder(out)
    image = bars_with_ci({r.name: r.scores for r in comparison.runs}, "Runs compared")
    png = folder.comparison(".png")
    images = {png.name: image} if image is not None else {}
    if image is not None:
        write_bytes(png, image)
    body = (f"# {title}\n\nWorkspace `{comparison.runs[0].workspace}`; runs: "
            + ", ".join(f"{r.name} (`{r.path}`)" for r in comparison.runs) + ".\n\n"
            + comparison_markdown(comparison, per_meeting, breakdown=False)
            + (f"\n![runs]({png.name})\n" if images else "") + "\n".join(breakdown_markdown(comparison)) + "\n")
    write_text(folder.comparison(".md"), body)
    write_text(folder.comparison(".html"), html_page(title, body, images))
    write_json(folder.comparison(".json"), comparison.as_dict())


def remake_level_comparison(root: Path) -> Path | None:
    """Make the comparison of a ``--level all`` folder again from its levels' scores.json (a step
    run on the levels changed them), with the bootstrap settings its comparison.json records, as
    ``speechkit recipe --level all`` made it; its comparison.md, None where ``root`` has no comparison
    or fewer than two levels with scores."""
    folder = LevelsFolder(root)
    path = folder.comparison(".json")
    if not path.is_file():
        return None
    data = read_json(path)
    made = (data.get("bootstrap") if isinstance(data, dict) else None) or {}
    resamples, seed = made.get("resamples", RESAMPLES), made.get("seed", SEED)
    least = made.get("min_meetings", MIN_MEETINGS)
    try:
        check_bootstrap_settings(resamples, seed)
    except ValueError as exc:
        raise CompareError(path, f"bootstrap.{exc}") from None
    if isinstance(least, bool) or not isinstance(least, int) or not 0 <= least <= MAX_MIN_MEETINGS:
        raise CompareError(path, f"bootstrap.min_meetings: expected an integer from 0 to {MAX_MIN_MEETINGS}")
    runs = [load_run(folder.level(n).root, f"L{n}") for n in LEVEL_FOLDERS if folder.level(n).scores.is_file()]
    if len(runs) < 2:
        return None
    write_comparison(root, compare(runs, resamples=resamples, seed=seed, min_meetings=least))
    return folder.comparison(".md")
