"""Paired comparisons of runs of one workspace: per-metric deltas with paired bootstrap CIs.

Separate CIs per run say little about a difference: two runs on the same meetings share the
meetings' difficulty. :func:`compare` takes the runs' ``scores.json``, rebuilds each metric's
per-meeting ratio (numerator, denominator) from the per-meeting details (checked against the
totals), and gives each run's delta against the first run (the baseline) with a paired
percentile bootstrap 95% CI over meetings (:func:`speechkit.metrics.bootstrap.paired_bootstrap`:
both runs scored on the same resample). A delta whose CI excludes 0 is marked. The method is
documented in docs/scores-schema.md ("Paired comparisons").

Used by ``speechkit compare RUN_A RUN_B ...`` and by the level comparison that
``speechkit recipe --level all`` writes (``comparison.md``/``.html``).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from speechkit.errors import FormatError
from speechkit.metrics.bootstrap import RESAMPLES, SEED, Estimate, Ratio, micro, paired_bootstrap
from speechkit.report import LABELS, _estimate
from speechkit.report import _fmt as _cell

METRICS = ("wer", "cpwer", "tcpwer", "number_recall", "term_recall", "speaker_consistency",
           "named_speaker_accuracy", "der", "jer")
#: metrics where a lower value is better (the others: higher is better)
LOWER_IS_BETTER = frozenset({"wer", "cpwer", "tcpwer", "der", "jer"})


class CompareError(FormatError):
    """Runs that cannot be compared (other workspace, other meetings, unreadable scores)."""


@dataclass(frozen=True)
class Delta:
    """One metric's difference ``other - base`` over the meetings both apply to, with its paired
    bootstrap CI; ``meetings`` is how many meetings were paired."""

    metric: str
    base: float | None
    other: float | None
    estimate: Estimate
    meetings: int

    @property
    def significant(self) -> bool:
        """The 95% CI excludes 0."""
        e = self.estimate
        return e.ci_low is not None and (e.ci_low > 0 or e.ci_high < 0)

    @property
    def better(self) -> bool | None:
        """Whether the other run is better on this metric (None: no difference or no value)."""
        value = self.estimate.value
        if value is None or value == 0:
            return None
        return value < 0 if self.metric in LOWER_IS_BETTER else value > 0

    def as_dict(self) -> dict[str, Any]:
        return {"base": self.base, "other": self.other, **self.estimate.as_dict(), "meetings": self.meetings,
                "significant": self.significant, "better": self.better}


# How each metric's per-meeting ratio is read back from its scores.json details.
_DETAILS: dict[str, Callable[[dict], Ratio | None]] = {
    "wer": lambda d: d.get("wer") and Ratio(d["wer"]["errors"], d["wer"]["reference_words"]),
    "number_recall": lambda d: d.get("number_recall") and Ratio(len(d["number_recall"]["found"]),
                                                                len(d["number_recall"]["spoken"])),
    "term_recall": lambda d: d.get("term_recall") and Ratio(len(d["term_recall"]["found"]),
                                                            len(d["term_recall"]["spoken"])),
    "speaker_consistency": lambda d: (d.get("speakers") or {}).get("consistency") and Ratio(
        d["speakers"]["consistency"]["same_name_pairs"], d["speakers"]["consistency"]["pairs"]),
    "named_speaker_accuracy": lambda d: d.get("speakers") and d["speakers"].get("basis") != "seconds" and Ratio(
        sum(p["correctly_named_words"] for p in d["speakers"]["persons"].values()),
        sum(p["words"] for p in d["speakers"]["persons"].values())),
    "cpwer": lambda d: d.get("cpwer") and Ratio(d["cpwer"]["errors"], d["cpwer"]["length"]),
    "tcpwer": lambda d: d.get("tcpwer") and Ratio(d["tcpwer"]["errors"], d["tcpwer"]["length"]),
    "der": lambda d: d.get("diarization") and Ratio(
        d["diarization"]["confusion_s"] + d["diarization"]["missed_detection_s"] + d["diarization"]["false_alarm_s"],
        d["diarization"]["total_s"]),
    "jer": lambda d: d.get("diarization") and (Ratio(d["diarization"]["jer"], 1.0)
                                               if d["diarization"]["jer"] is not None else Ratio(0.0, 0.0)),
}


def meeting_ratios(scores: Mapping[str, Any], where: str | Path = "scores.json") -> dict[str, dict[str, Ratio]]:
    """Metric -> meeting -> the meeting's :class:`Ratio`, rebuilt from ``scores.json`` details.

    Only meetings where the metric applies appear. Each metric's ratios must add up to its
    ``totals`` entry, else a :class:`CompareError` names ``where``.
    """
    out: dict[str, dict[str, Ratio]] = {}
    for metric, read in _DETAILS.items():
        ratios = {}
        for mid, entry in scores.get("meetings", {}).items():
            try:
                ratio = read(entry.get("details") or {})
            except (KeyError, TypeError, AttributeError) as exc:
                raise CompareError(where, f"meetings.{mid}.details: cannot read {metric} ({exc!r})") from None
            if ratio:
                ratios[mid] = ratio
        total = (scores.get("totals") or {}).get(metric)
        summed = micro(list(ratios.values()))
        if total is not None and not (_close(summed.num, total["numerator"]) and _close(summed.den, total["denominator"])):
            raise CompareError(where, f"{metric}: per-meeting details add up to {summed.num:g}/{summed.den:g}, "
                                      f"totals say {total['numerator']:g}/{total['denominator']:g}")
        out[metric] = ratios
    return out


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def paired_deltas(base: Mapping[str, Any], other: Mapping[str, Any], metrics: tuple[str, ...] = METRICS,
                  resamples: int = RESAMPLES, seed: int = SEED, names: tuple[str, str] = ("base", "other"),
                  ) -> dict[str, Delta]:
    """Metric -> :class:`Delta` of ``other`` against ``base`` (two scores.json dicts of the same
    meetings), over the meetings where the metric applies in both."""
    a, b = meeting_ratios(base, names[0]), meeting_ratios(other, names[1])
    out = {}
    for metric in metrics:
        common = [m for m in a[metric] if m in b[metric]]
        ra, rb = [a[metric][m] for m in common], [b[metric][m] for m in common]
        out[metric] = Delta(metric, micro(ra).value, micro(rb).value,
                            paired_bootstrap(ra, rb, resamples, seed), len(common))
    return out


@dataclass
class Run:
    """A run to compare: its name in tables, its folder and its scores."""

    name: str
    path: Path
    scores: dict[str, Any]

    @property
    def workspace(self) -> str | None:
        return (self.scores.get("source") or {}).get("workspace")


def load_run(path: str | Path, name: str | None = None) -> Run:
    """A run folder (holding scores.json) or a scores.json file."""
    path = Path(path)
    file = path / "scores.json" if path.is_dir() else path
    try:
        scores = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompareError(file, "no scores.json: give a run folder (speechkit run/recipe) or its scores.json") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CompareError(file, f"cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise CompareError(file, f"invalid JSON: {exc}") from None
    if not isinstance(scores, dict) or not str(scores.get("schema", "")).startswith("speechkit.scores/") \
            or not isinstance(scores.get("meetings"), dict):
        raise CompareError(file, "not a speechkit scores.json (schema speechkit.scores/1)")
    return Run(name or (path.name if path.is_dir() else path.parent.name) or str(path), path, scores)


def check_comparable(runs: list[Run]) -> None:
    """Raise :class:`CompareError` unless every run scores the same workspace and meetings
    against the same references (equal reference word counts where WER applies)."""
    first = runs[0]
    for run in runs[1:]:
        if run.workspace != first.workspace:
            raise CompareError(run.path, f"scores workspace {run.workspace or '(none)'}, but {first.path} scores "
                                         f"{first.workspace or '(none)'}: a paired comparison needs runs of one workspace")
        if list(run.scores["meetings"]) != list(first.scores["meetings"]):
            raise CompareError(run.path, f"covers meetings {', '.join(run.scores['meetings'])}, but {first.path} "
                                         f"covers {', '.join(first.scores['meetings'])}: compare complete runs")
        for mid, entry in run.scores["meetings"].items():
            ref = ((entry.get("details") or {}).get("wer") or {}).get("reference_words")
            ref0 = ((first.scores["meetings"][mid].get("details") or {}).get("wer") or {}).get("reference_words")
            if ref is not None and ref0 is not None and ref != ref0:
                raise CompareError(run.path, f"meeting {mid} has {ref} reference words, {ref0} in {first.path}: "
                                             f"the runs were scored against different references")


@dataclass
class Comparison:
    """Runs of one workspace and each later run's :class:`Delta` per metric against the first."""

    runs: list[Run]
    deltas: dict[str, dict[str, Delta]]  # run name -> metric -> delta against runs[0]
    metrics: tuple[str, ...]
    resamples: int
    seed: int

    def as_dict(self) -> dict[str, Any]:
        return {"baseline": self.runs[0].name, "runs": {r.name: str(r.path) for r in self.runs},
                "workspace": self.runs[0].workspace,
                "bootstrap": {"resamples": self.resamples, "seed": self.seed, "unit": "meeting", "paired": True},
                "deltas": {name: {m: d.as_dict() for m, d in per.items()} for name, per in self.deltas.items()}}


def compare(runs: list[Run], metrics: tuple[str, ...] = METRICS, resamples: int = RESAMPLES,
            seed: int = SEED) -> Comparison:
    """Each run after the first against the first (see the module docstring)."""
    if len(runs) < 2:
        raise CompareError(runs[0].path if runs else None, "give at least two runs to compare")
    names = [r.name for r in runs]
    if len(set(names)) < len(names):
        for r in runs:
            r.name = str(r.path)
    check_comparable(runs)
    deltas = {r.name: paired_deltas(runs[0].scores, r.scores, metrics, resamples, seed,
                                    names=(str(runs[0].path), str(r.path))) for r in runs[1:]}
    return Comparison(runs, deltas, tuple(metrics), resamples, seed)


def format_delta(delta: Delta) -> str:
    """``+0.012 [-0.004, +0.031]``, with ``*`` when the CI excludes 0 (better or worse said)."""
    e = delta.estimate
    if e.value is None:
        return "n/a"
    text = f"{e.value:+.3f}"
    if e.ci_low is not None:
        text += f" [{e.ci_low:+.3f}, {e.ci_high:+.3f}]"
    if delta.significant:
        text += " * (better)" if delta.better else " * (worse)"
    return text


def markdown(comparison: Comparison, per_meeting: tuple[str, ...] = ("wer", "der")) -> str:
    """The comparison as markdown: aggregates with CIs, paired deltas, per-meeting values of the
    ``per_meeting`` metrics."""
    runs, base, metrics = comparison.runs, comparison.runs[0], comparison.metrics
    lines = ["## Aggregate (95% bootstrap CI over meetings, each run alone)", "",
             "| metric | " + " | ".join(r.name for r in runs) + " |", "|---" * (len(runs) + 1) + "|"]
    lines += [f"| {LABELS[m]} | " + " | ".join(_estimate(r.scores["aggregate"].get(m)) for r in runs) + " |"
              for m in metrics]
    lines += ["", f"## Paired deltas against {base.name} (95% paired bootstrap CI over meetings)", "",
              f"Each run minus {base.name}, both scored on the same {comparison.resamples} resamples of the "
              f"meetings (seed {comparison.seed}); `*`: the CI excludes 0. Lower is better for WER, cpWER, "
              "tcpWER, DER and JER; higher for the others.", "",
              "| metric | " + " | ".join(f"{r.name} - {base.name}" for r in runs[1:]) + " |", "|---" * len(runs) + "|"]
    lines += [f"| {LABELS[m]} | " + " | ".join(format_delta(comparison.deltas[r.name][m]) for r in runs[1:]) + " |"
              for m in metrics]
    for metric in per_meeting:
        lines += ["", f"## {LABELS[metric]} per meeting", "",
                  "| meeting | " + " | ".join(r.name for r in runs) + " | "
                  + " | ".join(f"{r.name} - {base.name}" for r in runs[1:]) + " |",
                  "|---" * (2 * len(runs)) + "|"]
        for mid in base.scores["meetings"]:
            values = [(r.scores["meetings"][mid].get(metric) or {}).get("value") for r in runs]
            deltas = ["n/a" if v is None or values[0] is None else f"{v - values[0]:+.3f}" for v in values[1:]]
            lines.append(f"| {mid} | " + " | ".join(_cell(v) for v in values) + " | " + " | ".join(deltas) + " |")
    return "\n".join(lines) + "\n"
