"""The metric catalogue: every metric speechkit scores, assembled once from the families that own them.

Scoring (scores.json), comparisons (``speechkit compare``) and reports read from here which
metrics there are (:data:`METRICS`, each a :class:`~speechkit.metrics.catalog.Metric`: label,
direction, unit, n/a reasons, display) and which family computes each (:data:`FAMILIES`). The
families are the transcript ones (:mod:`speechkit.metrics.transcripts`), then those the stage
modules declare (``METRICS``, in cascade order: the notes metrics of ``summarize``), then those
the post-run steps declare (in the steps' order: the question metrics of ``qa``). Adding a metric
is a catalogue entry in its family; a stage or step adds a family by naming it in its module.

Two orders, both derived from the entries: scores.json holds the metrics in the order of
:data:`METRICS` (the families' order; new entries go last, so existing files keep their layout);
tables and plots show them by group (:data:`GROUPS`, :data:`TABLE_ORDER`). Reports split the
aggregate tables and plots by which direction is better (:func:`by_direction`), never one chart
for both.
"""
from __future__ import annotations

import importlib

from speechkit.metrics.catalog import TRANSCRIPT_GROUPS, TRANSCRIPT_METRICS, Metric
from speechkit.metrics.family import MeetingFamily, MetricFamily, StepFamily
from speechkit.metrics.transcripts import TRANSCRIPT_FAMILIES
from speechkit.stages import STAGES
from speechkit.steps import STEPS


def _declared(modules: dict[str, str]) -> list[MetricFamily]:
    """The families the modules of a registry declare (``METRICS``), in the registry's order."""
    return [family for path in modules.values() for family in getattr(importlib.import_module(path), "METRICS", ())]


#: The families of plug-ins (stages, then steps): each with a table of its own.
PLUGIN_FAMILIES: tuple[MetricFamily, ...] = (*_declared(STAGES), *_declared(STEPS))
#: Every family, in the order they are computed.
FAMILIES: tuple[MetricFamily, ...] = (*TRANSCRIPT_FAMILIES, *PLUGIN_FAMILIES)
MEETING_FAMILIES: tuple[MeetingFamily, ...] = tuple(f for f in FAMILIES if isinstance(f, MeetingFamily))
STEP_FAMILIES: tuple[StepFamily, ...] = tuple(f for f in FAMILIES if isinstance(f, StepFamily))

#: Every metric, by key, in the order of scores.json.
METRICS: dict[str, Metric] = {m.key: m for m in (*TRANSCRIPT_METRICS, *(m for f in PLUGIN_FAMILIES for m in f.metrics))}
#: The kinds of metric, in the order tables show them.
GROUPS: tuple[str, ...] = tuple(dict.fromkeys([*TRANSCRIPT_GROUPS, *(m.group for m in METRICS.values())]))
#: The metric keys in the order tables and plots show them: by group, then as declared.
TABLE_ORDER: tuple[str, ...] = tuple(sorted(METRICS, key=lambda key: GROUPS.index(METRICS[key].group)))
#: The transcript metrics in table order: the main tables; each plug-in family has a table of its own.
TRANSCRIPT_KEYS: tuple[str, ...] = tuple(k for k in TABLE_ORDER if METRICS[k] in TRANSCRIPT_METRICS)
#: Which direction is better, as reports title the metrics of each (lower is better first).
DIRECTIONS = {"lower": "lower is better", "higher": "higher is better"}


def family(name: str) -> MetricFamily:
    """The family called ``name`` (``notes``, ``questions``, ``text``, ...)."""
    found = {f.name: f for f in FAMILIES}
    if name not in found:
        raise KeyError(f"no metric family {name!r}; the families: {', '.join(found)}")
    return found[name]


def table_keys(family: MetricFamily) -> tuple[str, ...]:
    """The keys of ``family``'s metrics in table order."""
    return tuple(k for k in TABLE_ORDER if k in family.keys)


def by_direction(keys: tuple[str, ...] | list[str]) -> dict[str, tuple[str, ...]]:
    """``keys`` split by which direction is better (:data:`DIRECTIONS` order), each in the order
    given; a direction none of them has is left out. Reports never show the two in one chart."""
    split = {direction: tuple(k for k in keys if METRICS[k].better == direction) for direction in DIRECTIONS}
    return {direction: group for direction, group in split.items() if group}
