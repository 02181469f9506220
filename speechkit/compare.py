"""Paired comparisons of runs of one workspace: per-metric deltas with paired bootstrap CIs.

Separate CIs per run say little about a difference: two runs on the same meetings share the
meetings' difficulty. :func:`compare` takes the runs' ``scores.json``, rebuilds each metric's
per-meeting ratio (numerator, denominator) from the per-meeting details (checked against the
totals), and gives each run's delta against the first run (the baseline) with a paired
percentile bootstrap 95% CI over meetings (:func:`speechkit.metrics.bootstrap.paired_bootstrap`:
both runs scored on the same resample; speaker consistency, a property of pairs of meetings, is
recounted over the pairs of distinct meetings drawn). A delta whose CI excludes 0 is marked
significant, but only over at least ``min_meetings`` meetings (default
:data:`~speechkit.metrics.bootstrap.MIN_MEETINGS`): below that the delta carries the reason
(``n=2 meetings < 5: no significance claimed``) and the comparison logs it. The method is
documented in docs/scores-schema.md ("Paired comparisons").

The L3 ablation (:func:`ablation`, ``speechkit recipe --level all --ablations``) splits each
metric's L1 -> L3 gain between the L3 streams with the same paired deltas: L3 - L1, and L3 - L3
without each stream.

Used by ``speechkit compare RUN_A RUN_B ...`` and by the level comparison that
``speechkit recipe --level all`` writes; :mod:`speechkit.report` renders a :class:`Comparison`
(``comparison.md``/``.html``/``.json``).
"""
from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io.run_folder import RunFolder
from speechkit.io.scores import Scores, read_scores
from speechkit.metrics.bootstrap import MIN_MEETINGS, RESAMPLES, SEED, Estimate, Ratio, micro, paired_bootstrap
from speechkit.metrics.speakers import speaker_consistency
from speechkit.scoring.catalogue import catalogue, metric

log = logging.getLogger(__name__)


class CompareError(FormatError):
    """Runs that cannot be compared (other workspace, other meetings, unreadable scores)."""


@dataclass(frozen=True)
class Delta:
    """One metric's difference ``other - base`` over the meetings both apply to, with its paired
    bootstrap CI; ``meetings`` is how many meetings were paired, ``min_meetings`` the fewest over
    which a difference is called significant."""

    metric: str
    base: float | None
    other: float | None
    estimate: Estimate
    meetings: int
    min_meetings: int = MIN_MEETINGS

    @property
    def significance_withheld(self) -> str | None:
        """Why no significance is claimed whatever the CI (too few meetings); None otherwise."""
        if self.estimate.value is None or self.meetings >= self.min_meetings:
            return None
        return f"n={self.meetings} meetings < {self.min_meetings}: no significance claimed"

    @property
    def significant(self) -> bool:
        """The 95% CI excludes 0, over at least ``min_meetings`` meetings."""
        e = self.estimate
        return (e.ci_low is not None and (e.ci_low > 0 or e.ci_high < 0)
                and self.significance_withheld is None)

    @property
    def better(self) -> bool | None:
        """Whether the other run is better on this metric (None: no difference or no value)."""
        value = self.estimate.value
        if value is None or value == 0:
            return None
        return value < 0 if metric(self.metric).better == "lower" else value > 0

    def as_dict(self) -> dict[str, Any]:
        return {"base": self.base, "other": self.other, **self.estimate.as_dict(), "meetings": self.meetings,
                "significant": self.significant, "significance_withheld": self.significance_withheld,
                "better": self.better}


def meeting_ratios(scores: Scores, where: str | Path = RunFolder.SCORES) -> dict[str, dict[str, Ratio]]:
    """Metric -> meeting -> the meeting's :class:`Ratio`, rebuilt from ``scores.json`` details
    (each metric's ``from_details`` in the catalogue).

    Only meetings where the metric applies appear. Each metric's ratios must add up to its
    ``totals`` entry, else a :class:`CompareError` names ``where``. Speaker consistency's are the
    meetings' :class:`~speechkit.metrics.bootstrap.PairRow` s, rebuilt from the names the details
    give each person (and checked against the meetings' pair counts).
    """
    out: dict[str, dict[str, Ratio]] = {}
    for entry in catalogue().metrics.values():
        ratios = {}
        for mid, meeting in scores.meetings.items():
            try:
                ratio = entry.from_details(meeting.details)
            except (KeyError, TypeError, AttributeError) as exc:
                raise CompareError(where, f"meetings.{mid}.details: cannot read {entry.key} ({exc!r})") from None
            if ratio is not None:
                ratios[mid] = ratio
        total = scores.total(entry.key)
        summed = micro(list(ratios.values()))
        if total is not None and not (_close(summed.num, total["numerator"])
                                      and _close(summed.den, total["denominator"])):
            raise CompareError(where, f"{entry.key}: per-meeting details add up to {summed.num:g}/{summed.den:g}, "
                                      f"totals say {total['numerator']:g}/{total['denominator']:g}")
        out[entry.key] = ratios
    out["speaker_consistency"] = _consistency_rows(scores, out["speaker_consistency"], where)
    return out


def _consistency_rows(scores: Scores, ratios: Mapping[str, Ratio], where: str | Path) -> dict[str, Ratio]:
    """The meeting-pair rows of speaker consistency, from the names ``details.speakers.persons`` give."""
    meetings = scores.meetings
    try:
        names = {mid: {pid: p["name"] for pid, p in meetings[mid].details["speakers"]["persons"].items()}
                 for mid in ratios}
    except (KeyError, TypeError, AttributeError) as exc:
        raise CompareError(where, f"details.speakers: cannot read the persons' names ({exc!r})") from None
    rows = speaker_consistency(names)
    for mid, row in rows.items():
        if not (_close(row.num, ratios[mid].num) and _close(row.den, ratios[mid].den)):
            raise CompareError(where, f"meetings.{mid}.details.speakers: the persons' names give {row.num:g}/"
                                      f"{row.den:g} same-name meeting pairs, consistency says "
                                      f"{ratios[mid].num:g}/{ratios[mid].den:g}")
    return rows


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def paired_deltas(base: Scores, other: Scores, metrics: tuple[str, ...] | None = None,
                  resamples: int = RESAMPLES, seed: int = SEED, names: tuple[str, str] = ("base", "other"),
                  min_meetings: int = MIN_MEETINGS) -> dict[str, Delta]:
    """Metric (``metrics``; None: every one, in table order) -> :class:`Delta` of ``other`` against
    ``base`` (the scores of the same meetings), over the meetings where the metric applies in both
    (speaker consistency: over the pairs of those meetings)."""
    a, b = meeting_ratios(base, names[0]), meeting_ratios(other, names[1])
    out = {}
    for name in metrics or catalogue().table_order:
        common = [m for m in a[name] if m in b[name]]
        ra, rb = [a[name][m] for m in common], [b[name][m] for m in common]
        out[name] = Delta(name, micro(ra).value, micro(rb).value,
                          paired_bootstrap(ra, rb, resamples, seed), len(common), min_meetings)
    return out


@dataclass
class Run:
    """A run to compare: its name in tables, its folder and its scores."""

    name: str
    path: Path
    scores: Scores

    @property
    def workspace(self) -> str | None:
        return self.scores.workspace


def load_run(path: str | Path, name: str | None = None) -> Run:
    """A run folder (holding scores.json) or a scores.json file."""
    path = Path(path)
    file = RunFolder(path).scores if path.is_dir() else path
    scores = read_scores(file, CompareError, catalogue().detail_numbers)
    return Run(name or (path.name if path.is_dir() else path.parent.name) or str(path), path, scores)


def check_comparable(runs: list[Run]) -> None:
    """Raise :class:`CompareError` unless every run scores the same workspace and meetings
    against the same references (equal reference word counts where WER applies)."""
    first = runs[0]
    for run in runs[1:]:
        if run.workspace != first.workspace:
            raise CompareError(run.path, f"scores workspace {run.workspace or '(none)'}, but {first.path} scores "
                                         f"{first.workspace or '(none)'}: a paired comparison needs runs of one "
                                         "workspace")
        meetings, first_meetings = run.scores.meetings, first.scores.meetings
        if set(meetings) != set(first_meetings):  # the same meetings, in any key order
            raise CompareError(run.path, f"covers meetings {', '.join(meetings)}, but {first.path} "
                                         f"covers {', '.join(first_meetings)}: compare complete runs")
        for mid, meeting in meetings.items():
            ref = (meeting.detail("wer") or {}).get("reference_words")
            ref0 = (first_meetings[mid].detail("wer") or {}).get("reference_words")
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
    min_meetings: int = MIN_MEETINGS
    ablation: Ablation | None = None  # the L3 ablation, when it was run (--ablations)

    @property
    def significance_withheld(self) -> list[str]:
        """Each distinct reason why a delta claims no significance (too few meetings), in order."""
        deltas = [*self.deltas.values(), *(self.ablation.deltas().values() if self.ablation else ())]
        reasons = (d.significance_withheld for per in deltas for d in per.values())
        return list(dict.fromkeys(r for r in reasons if r))

    def as_dict(self) -> dict[str, Any]:
        return {"baseline": self.runs[0].name, "runs": {r.name: str(r.path) for r in self.runs},
                "workspace": self.runs[0].workspace,
                "bootstrap": {"resamples": self.resamples, "seed": self.seed, "unit": "meeting", "paired": True,
                              "speaker_consistency": "pairs of distinct meetings of each draw",
                              "min_meetings": self.min_meetings},
                "significance_withheld": self.significance_withheld,
                "figures": {r.name: {"aggregate": {m: dict(r.scores.aggregate(m)) for m in self.metrics},
                                     "meeting_mean": {m: dict(r.scores.meeting_mean(m)) for m in self.metrics}}
                            for r in self.runs},
                "deltas": {name: {m: d.as_dict() for m, d in per.items()} for name, per in self.deltas.items()},
                **({"ablation": self.ablation.as_dict()} if self.ablation else {})}


def compare(runs: list[Run], metrics: tuple[str, ...] | None = None, resamples: int = RESAMPLES,
            seed: int = SEED, min_meetings: int = MIN_MEETINGS) -> Comparison:
    """Each run after the first against the first on ``metrics`` (None: every one, in table order;
    see the module docstring); a delta over fewer than ``min_meetings`` meetings is never called
    significant, and the reason is logged."""
    metrics = metrics or catalogue().table_order
    if len(runs) < 2:
        raise CompareError(runs[0].path if runs else None, "give at least two runs to compare")
    names = [r.name for r in runs]
    if len(set(names)) < len(names):
        for r in runs:
            r.name = str(r.path)
    check_comparable(runs)
    deltas = {r.name: paired_deltas(runs[0].scores, r.scores, metrics, resamples, seed,
                                    names=(str(runs[0].path), str(r.path)), min_meetings=min_meetings)
              for r in runs[1:]}
    comparison = Comparison(runs, deltas, tuple(metrics), resamples, seed, min_meetings)
    for reason in comparison.significance_withheld:
        log.warning("%s", reason)
    return comparison



# The L3 ablation (``speechkit recipe --level all --ablations``; paper section 5.3).

@dataclass(frozen=True)
class Ablation:
    """The split of each metric's L1 -> L3 gain between the L3 streams: L1 (``base``), L3
    (``full``) and L3 without each stream (``without``: stream -> run, ``context.ablate``);
    ``gain``: metric -> L3 - L1; ``shares``: stream -> metric -> L3 - L3 without the stream (what
    the stream adds with the others present), each a paired :class:`Delta` as :func:`compare`
    gives. The shares need not add up to the gain: streams may overlap or need each other."""

    base: Run
    full: Run
    without: dict[str, Run]
    gain: dict[str, Delta]
    shares: dict[str, dict[str, Delta]]

    def deltas(self) -> dict[str, dict[str, Delta]]:
        """The gain and each stream's share, by name (``gain``, ``enrollments``, ``text``)."""
        return {"gain": self.gain, **self.shares}

    def as_dict(self) -> dict[str, Any]:
        return {"base": self.base.name, "full": self.full.name,
                "without": {stream: {"name": r.name, "path": str(r.path)} for stream, r in self.without.items()},
                "values": {r.name: {m: r.scores.value(m) for m in self.gain}
                           for r in (self.base, *self.without.values(), self.full)},
                "deltas": {name: {m: d.as_dict() for m, d in per.items()} for name, per in self.deltas().items()}}


def ablation(base: Run, full: Run, without: Mapping[str, Run], metrics: tuple[str, ...] | None = None,
             resamples: int = RESAMPLES, seed: int = SEED, min_meetings: int = MIN_MEETINGS) -> Ablation:
    """The L3 ablation of ``metrics`` (None: every one, in table order): the gain of ``full`` (L3)
    over ``base`` (L1) and what ``full`` loses without each stream (``without``), paired deltas
    over the meetings as in :func:`compare`; the runs must be comparable (:func:`check_comparable`)."""
    check_comparable([base, full, *without.values()])
    metrics = metrics or catalogue().table_order

    def delta(a: Run, b: Run) -> dict[str, Delta]:
        return paired_deltas(a.scores, b.scores, metrics, resamples, seed, names=(str(a.path), str(b.path)),
                             min_meetings=min_meetings)

    return Ablation(base, full, dict(without), delta(base, full),
                    {stream: delta(run, full) for stream, run in without.items()})
