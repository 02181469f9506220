"""The metric catalogue: every metric speechkit scores, assembled from the families that own them.

Scoring (scores.json), comparisons (``speechkit compare``) and reports read from :func:`catalogue`
which metrics there are (:attr:`Catalogue.metrics`, each a :class:`~speechkit.metrics.catalog.Metric`:
label, direction, unit, n/a reasons, display) and which family computes each
(:attr:`Catalogue.families`). The families are the transcript ones
(:mod:`speechkit.metrics.transcripts`), then those the stage modules declare (``METRICS``, in
cascade order: the notes metrics of ``summarize``), then those the post-run steps declare (in the
steps' order: the question metrics of ``qa``). Adding a metric is a catalogue entry in its family;
a stage or step adds a family by naming it in its module. The catalogue is assembled when asked,
from the registries as they are then, so a plug-in registered at run time is in it.

Two orders, both derived from the entries: scores.json holds the metrics in the order of
:attr:`Catalogue.metrics` (the families' order; new entries go last, so existing files keep
their layout); tables and plots show them by group (:attr:`Catalogue.groups`,
:attr:`Catalogue.table_order`). Reports split the aggregate tables and plots by which direction
is better (:meth:`Catalogue.by_direction`), never one chart for both.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cached_property, lru_cache

from speechkit.metrics.catalog import TRANSCRIPT_GROUPS, TRANSCRIPT_METRICS, Metric
from speechkit.metrics.family import MeetingFamily, MetricFamily, StepFamily
from speechkit.metrics.transcripts import TRANSCRIPT_FAMILIES
from speechkit.stages import STAGES
from speechkit.steps import STEPS

#: Which direction is better, as reports title the metrics of each (lower is better first).
DIRECTIONS = {"lower": "lower is better", "higher": "higher is better"}


@dataclass(frozen=True)
class Catalogue:
    """The families of the transcript metrics and of the plug-ins (``plugin_families``: stages,
    then steps, each with a table of its own), and what is derived from them."""

    plugin_families: tuple[MetricFamily, ...]

    @cached_property
    def families(self) -> tuple[MetricFamily, ...]:
        """Every family, in the order they are computed."""
        return (*TRANSCRIPT_FAMILIES, *self.plugin_families)

    @cached_property
    def meeting_families(self) -> tuple[MeetingFamily, ...]:
        return tuple(f for f in self.families if isinstance(f, MeetingFamily))

    @cached_property
    def step_families(self) -> tuple[StepFamily, ...]:
        return tuple(f for f in self.families if isinstance(f, StepFamily))

    @cached_property
    def metrics(self) -> dict[str, Metric]:
        """Every metric, by key, in the order of scores.json."""
        return {m.key: m for m in (*TRANSCRIPT_METRICS, *(m for f in self.plugin_families for m in f.metrics))}

    @cached_property
    def groups(self) -> tuple[str, ...]:
        """The kinds of metric, in the order tables show them."""
        return tuple(dict.fromkeys([*TRANSCRIPT_GROUPS, *(m.group for m in self.metrics.values())]))

    @cached_property
    def table_order(self) -> tuple[str, ...]:
        """The metric keys in the order tables and plots show them: by group, then as declared."""
        return tuple(sorted(self.metrics, key=lambda key: self.groups.index(self.metrics[key].group)))

    @cached_property
    def transcript_keys(self) -> tuple[str, ...]:
        """The transcript metrics in table order: the main tables (each plug-in family has its own)."""
        return tuple(k for k in self.table_order if self.metrics[k] in TRANSCRIPT_METRICS)

    @cached_property
    def detail_numbers(self) -> dict[str, tuple[str, ...]]:
        """The numbers each family reads back from scores.json details (checked when scores are read)."""
        return {key: keys for family in self.families for key, keys in family.detail_numbers.items()}

    def family(self, name: str) -> MetricFamily:
        """The family called ``name`` (``notes``, ``questions``, ``text``, ...)."""
        found = {f.name: f for f in self.families}
        if name not in found:
            raise KeyError(f"no metric family {name!r}; the families: {', '.join(found)}")
        return found[name]

    def table_keys(self, family: MetricFamily) -> tuple[str, ...]:
        """The keys of ``family``'s metrics in table order."""
        return tuple(k for k in self.table_order if k in family.keys)

    def by_direction(self, keys: tuple[str, ...] | list[str]) -> dict[str, tuple[str, ...]]:
        """``keys`` split by which direction is better (:data:`DIRECTIONS` order), each in the order
        given; a direction none of them has is left out. Reports never show the two in one chart."""
        split = {direction: tuple(k for k in keys if self.metrics[k].better == direction) for direction in DIRECTIONS}
        return {direction: group for direction, group in split.items() if group}


def catalogue() -> Catalogue:
    """The catalogue of the stage and step modules registered now (:data:`speechkit.stages.STAGES`,
    :data:`speechkit.steps.STEPS`)."""
    return _assembled(tuple(STAGES.values()), tuple(STEPS.values()))


@lru_cache(maxsize=8)
def _assembled(stages: tuple[str, ...], steps: tuple[str, ...]) -> Catalogue:
    return Catalogue((*_declared(stages), *_declared(steps)))


def _declared(modules: tuple[str, ...]) -> list[MetricFamily]:
    """The families the modules declare (``METRICS``), in the order given."""
    return [family for path in modules for family in getattr(importlib.import_module(path), "METRICS", ())]


def metric(key: str) -> Metric:
    """The catalogue entry of metric ``key``."""
    return catalogue().metrics[key]

