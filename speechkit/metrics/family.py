"""Metric families: the metrics computed together, each with its catalogue entries.

Scoring (:mod:`speechkit.scoring`) runs in layers: inputs (a run folder and a workspace, or one
reference/hypothesis pair -> one :class:`MeetingInputs` per meeting), compute (each family in
catalogue order fills every meeting's ratios, n/a reasons and details), aggregate (micro ratios
with bootstrap CIs over meetings) and render. A family is one of:

- a :class:`MeetingFamily`: computed per meeting, from the meeting's inputs and whatever else of
  the run folder and workspace it reads (the notes family: the run's and the gold notes);
- a :class:`StepFamily`: taken from the document a post-run step wrote into the run folder
  (``qa.json``) and folded into scores.json after the meeting families, with the same bootstrap.

Families are declared by their owners: the transcript families by :mod:`speechkit.metrics.transcripts`,
a stage's or step's by its module (``METRICS``); :mod:`speechkit.scoring.catalogue` assembles them.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from speechkit.metrics.bootstrap import Estimate, Ratio, bootstrap, micro
from speechkit.metrics.catalog import Metric
from speechkit.metrics.options import ScoreOptions
from speechkit.transcript import Transcript
from speechkit.workspace import Person, TermSet

if TYPE_CHECKING:
    from speechkit.io.run_folder import RunFolder
    from speechkit.workspace import Workspace


@dataclass(frozen=True)
class MeetingInputs:
    """One meeting to score.

    ``hypothesis``: the system's transcript; ``reference``: the words with person ids as speakers
    (None if the meeting has no reference transcript); ``turns``: the reference speaker turns for
    DER/JER; ``terms``: the terms the manifest says were spoken (None: scan the reference);
    ``hypothesis_has_names``: False for a hypothesis that names no speaker; ``hypothesis_turns``:
    the system's speaker turns for DER/JER (its RTTM, or its transcript segments when asked for;
    None: DER/JER are not applicable); ``remarks``: what was left out of the input files (segments
    of other sessions), which go to ``details.notes``.
    """

    id: str
    hypothesis: Transcript
    reference: Transcript | None
    turns: Transcript | None
    terms: TermSet | None = None
    hypothesis_has_names: bool = True
    remarks: tuple[str, ...] = ()
    hypothesis_turns: Transcript | None = None


@dataclass
class MeetingScore:
    """One meeting while it is scored: its inputs, why it lacks an input a metric needs
    (``missing``: input name -> reason), and the ratios, n/a reasons and details so far;
    ``shared``: what one family leaves for another of the same meeting."""

    inputs: MeetingInputs
    missing: dict[str, str]
    ratios: dict[str, Ratio] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.inputs.id

    def set(self, metric: Metric, ratio: Ratio) -> None:
        """The meeting's ratio of ``metric`` (n/a with the metric's reason when its denominator is 0)."""
        self.ratios[metric.key] = ratio
        if ratio.den == 0:
            self.reasons[metric.key] = metric.empty

    def mark_missing(self, metrics: Iterable[Metric]) -> None:
        """Record for each of ``metrics`` the first input it needs that the meeting lacks."""
        for metric in metrics:
            reason = next((self.missing[i] for i in metric.needs if i in self.missing), None)
            if reason:
                self.reasons[metric.key] = reason

    def applies(self, metric: Metric) -> bool:
        """Whether ``metric`` has no n/a reason yet (its inputs are there)."""
        return metric.key not in self.reasons


@dataclass
class ScoringRun:
    """What every family of one scoring sees: the meetings, the settings, the people (reference
    speaker id -> person), the workspace term set (None: a pair scored without a workspace), and
    the workspace and run folder where there are (None for a reference/hypothesis pair)."""

    meetings: list[MeetingScore]
    options: ScoreOptions
    people: Mapping[str, Person]
    terms: TermSet | None = None
    workspace: Workspace | None = None
    folder: RunFolder | None = None


class MetricFamily:
    """Metrics computed together (base of :class:`MeetingFamily` and :class:`StepFamily`).

    ``name``: the family's name (its scores.json ``settings`` entry, where it has one).
    ``metrics``: its catalogue entries, in scores.json order. ``title``: the heading of the
    family's own table in the ``speechkit score`` table and in comparisons (None: the metrics
    are shown with the transcript metrics), and ``what``: how that prose names one of them.
    ``beside``: the metrics of other families a comparison shows beside this family's, in one
    table (the judged family: the exact metrics it is read against, as the paper's Table 4).
    """

    name: str = ""
    metrics: tuple[Metric, ...] = ()
    title: str | None = None
    what: str = ""
    beside: tuple[str, ...] = ()
    #: The numbers of scores.json ``details.<key>`` its metrics are read back from (checked on read).
    detail_numbers: Mapping[str, tuple[str, ...]] = {}

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(m.key for m in self.metrics)

    def table_note(self, settings: Mapping[str, Any]) -> str:
        """A line under the family's table saying how it was computed, from its ``settings`` entry
        ("": none)."""
        return ""


class MeetingFamily(MetricFamily):
    """A family computed per meeting (see the module docstring)."""

    def score(self, run: ScoringRun) -> dict[str, Any] | None:
        """Fill each meeting's ratios, reasons and details; the family's scores.json ``settings``
        entry (None: none)."""
        raise NotImplementedError

    def components(self, run: ScoringRun) -> dict[str, Any]:
        """Its part of scores.json ``components`` (error counts summed over meetings)."""
        return {}

    def baselines(self, run: ScoringRun) -> dict[str, Any]:
        """Its part of scores.json ``baselines`` (trivial systems scored alike)."""
        return {}


class StepFamily(MetricFamily):
    """A family read from a post-run step's document (see the module docstring)."""

    def fold(self, scores: dict[str, Any], run: ScoringRun) -> None:
        """Fill the family's metrics into the scores.json mapping ``scores`` (per meeting, the
        aggregate with the scores' bootstrap settings, totals, reasons, its ``settings`` entry)."""
        raise NotImplementedError

    def fold_ratios(self, scores: dict[str, Any], ratios: Mapping[str, Mapping[str, Ratio]],
                    reasons: Mapping[str, Mapping[str, str]]) -> None:
        """Put the family's metrics into the scores.json mapping ``scores``: each meeting's value
        (``ratios``: meeting -> metric key -> its ratio, where the metric applies) or why it has
        none (``reasons``: meeting -> metric key -> reason; a ratio whose denominator is 0 takes
        the metric's own), then each metric over the meetings: the micro ratio with the scores'
        bootstrap CI, its totals, and why it is not applicable where it is not."""
        boot = scores["settings"]["bootstrap"]
        for mid, entry in scores["meetings"].items():
            not_applicable = entry["details"].setdefault("not_applicable", {})
            for metric in self.metrics:
                ratio = ratios.get(mid, {}).get(metric.key)
                entry[metric.key] = Estimate(ratio.value if ratio else None).as_dict()
                reason = reasons.get(mid, {}).get(metric.key) or (
                    metric.empty if ratio is not None and not ratio.den else None)
                if reason:
                    not_applicable[metric.key] = reason
        for metric in self.metrics:
            given = [r[metric.key] for mid, r in ratios.items() if metric.key in r and mid in scores["meetings"]]
            total = micro(given)
            scores["aggregate"][metric.key] = bootstrap(given, boot["resamples"], boot["seed"]).as_dict()
            scores["totals"][metric.key] = {"numerator": total.num, "denominator": total.den, "meetings": len(given)}
            scores["not_applicable"].pop(metric.key, None)
            if total.value is None:
                why = {e["details"]["not_applicable"].get(metric.key) for e in scores["meetings"].values()} - {None}
                scores["not_applicable"][metric.key] = "; ".join(sorted(why)) or "no meetings"
