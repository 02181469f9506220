"""Scoring's compute and aggregate layers: every family over the meetings, then each metric over
the meetings (micro ratios with bootstrap CIs), into the scores.json mapping.

The layout is docs/scores-schema.md's: ``schema``, ``source``, ``settings`` (the options', then
each family's entry), ``aggregate`` (micro ratios), ``meeting_mean`` (means of the meetings'
values), ``totals`` and ``not_applicable`` per metric (in catalogue order), ``components`` and
``baselines`` (the families'), ``meetings`` (each metric's value and the details, with the n/a
reasons). A metric that a format cannot support, or whose denominator
is 0, is not applicable: its value is null and the reason is recorded, never a zero.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from speechkit.metrics.bootstrap import Estimate, bootstrap, meeting_mean, micro
from speechkit.metrics.family import MeetingInputs, MeetingScore, ScoringRun
from speechkit.metrics.options import ScoreOptions
from speechkit.metrics.transcripts import missing_inputs
from speechkit.scoring.catalogue import catalogue
from speechkit.workspace import Person, TermSet

if TYPE_CHECKING:
    from speechkit.io.run_folder import RunFolder
    from speechkit.workspace import Workspace

SCHEMA = "speechkit.scores/1"


def score_meetings(pairs: Sequence[MeetingInputs], people: Mapping[str, Person], terms: TermSet | None,
                   options: ScoreOptions = ScoreOptions(), source: dict[str, Any] | None = None,
                   workspace: Workspace | None = None, folder: RunFolder | None = None) -> dict[str, Any]:
    """Score ``pairs`` and build the scores.json mapping.

    ``people`` maps each reference speaker id to its person (named-speaker accuracy); ``terms``
    is the workspace term set (None: number/term recall not applicable); ``workspace`` and
    ``folder``, the run's workspace and run folder, which the families of plug-ins read (None: a
    pair of files, whose notes and questions metrics are not applicable).
    """
    cat = catalogue()
    meetings = [MeetingScore(p, missing_inputs(p, terms))
                for p in tqdm(pairs, desc="scoring", unit="meeting", disable=None)]
    run = ScoringRun(meetings, options, people, terms, workspace, folder)
    settings = options.settings()
    components: dict[str, Any] = {}
    baselines: dict[str, Any] = {}
    for family in cat.meeting_families:
        entry = family.score(run)
        if entry is not None:
            settings[family.name] = entry
        components.update(family.components(run))
        baselines.update(family.baselines(run))
    scores = {"schema": SCHEMA, "source": source or {}, "settings": settings,
              **_aggregate(meetings, cat.metrics, options), "components": components, "baselines": baselines,
              "meetings": {m.id: _entry(m, cat.metrics) for m in meetings}}
    for family in cat.step_families:
        family.fold(scores, run)
    means = meeting_means(scores, options)
    return {key: value for name, entry in scores.items()
            for key, value in ((name, entry), *((("meeting_mean", means),) if name == "aggregate" else ()))}


def meeting_means(scores: Mapping[str, Any], options: ScoreOptions) -> dict[str, Any]:
    """scores.json ``meeting_mean``: each aggregated metric's mean over the meetings' own values, with
    its bootstrap CI and how many meetings had a value (beside ``aggregate``'s micro ratio)."""
    out = {}
    for metric in scores["aggregate"]:
        values = [entry.get(metric, {}).get("value") for entry in scores["meetings"].values()]
        out[metric] = {**meeting_mean(values, options.resamples, options.seed).as_dict(),
                       "meetings": sum(v is not None for v in values)}
    return out


def _aggregate(meetings: Sequence[MeetingScore], metrics: Iterable[str], options: ScoreOptions) -> dict[str, Any]:
    """scores.json ``aggregate``, ``totals`` and ``not_applicable`` of each of ``metrics``."""
    aggregate, totals, not_applicable = {}, {}, {}
    for metric in metrics:
        ratios = [m.ratios[metric] for m in meetings if metric in m.ratios]
        total = micro(ratios)
        totals[metric] = {"numerator": total.num, "denominator": total.den, "meetings": len(ratios)}
        if total.value is None:
            reasons = sorted({m.reasons[metric] for m in meetings if metric in m.reasons})
            not_applicable[metric] = "; ".join(reasons) or "no meetings"
        aggregate[metric] = bootstrap(ratios, options.resamples, options.seed).as_dict()
    return {"aggregate": aggregate, "totals": totals, "not_applicable": not_applicable}


def _entry(m: MeetingScore, metrics: Iterable[str]) -> dict[str, Any]:
    """A meeting's scores.json entry: each metric's value, then the details with the n/a reasons."""
    entry: dict[str, Any] = {metric: Estimate(m.ratios[metric].value if metric in m.ratios else None).as_dict()
                             for metric in metrics}
    entry["details"] = {**m.details, "not_applicable": dict(m.reasons)}
    if m.inputs.remarks:
        entry["details"]["notes"] = list(m.inputs.remarks)
    return entry
