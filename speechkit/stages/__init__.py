"""The stages of a cascade: the registry of stage modules, each one module (or subpackage) of the
same shape.

A stage module (``speechkit.stages.vad``, ``.asr``, ``.diarize``, ``.attribute``, ``.identify``,
``.correct``, ``.summarize``) provides:

- ``BACKENDS``: backend name -> ``"module:Class"``, imported only when used. Each backend class
  has an ``Options`` attribute: its :class:`~speechkit.core.options.StageOptions` dataclass.
- ``DEFAULT_BACKEND``: the backend a recipe gets when it names none.
- ``build(spec, device, reads) -> Stage``: the stage object (:class:`speechkit.core.stage.Stage`)
  for a :class:`~speechkit.core.stage.Spec`, given the stage objects of the stages it reads. A
  stage loads its model on first use, so a rerun served from the cache loads none.
- optionally ``METRICS`` (its metric families, :mod:`speechkit.metrics.family`) and ``SECTIONS``
  (its report sections, :class:`speechkit.core.section.Section`).
- optionally ``WHOLE = True``: the stage is a whole meeting system (audio and context in; the
  transcript, speaker turns, notes out: ``system``), and a recipe that names it names no other.

The contract itself is :mod:`speechkit.core.stage`. See docs/architecture.md.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from speechkit.core.stage import Spec, Stage, parse_spec, registered_class

#: Stage name -> module, in the order a cascade runs them.
STAGES: dict[str, str] = {
    "vad": "speechkit.stages.vad",
    "asr": "speechkit.stages.asr",
    "diarize": "speechkit.stages.diarize",
    "attribute": "speechkit.stages.attribute",
    "identify": "speechkit.stages.identify",
    "correct": "speechkit.stages.correct",
    "summarize": "speechkit.stages.summarize",
    "system": "speechkit.stages.system",
}
#: Stages every recipe names (but one of a whole system, :func:`whole_stages`).
REQUIRED_STAGES = ("vad", "asr", "diarize")
#: Stages that run with their defaults when a recipe leaves them out (the others are then skipped).
DEFAULT_STAGES = ("attribute", "identify")
#: Stages a recipe may leave out.
OPTIONAL_STAGES = tuple(name for name in STAGES if name not in REQUIRED_STAGES)


def stage_module(stage: str) -> Any:
    """The module of a stage by name."""
    if stage not in STAGES:
        raise KeyError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    return importlib.import_module(STAGES[stage])


def whole_stages() -> tuple[str, ...]:
    """The stages that are a whole meeting system (their module's ``WHOLE``): a recipe naming one names no other."""
    return tuple(name for name in STAGES if getattr(stage_module(name), "WHOLE", False))


def backend_class(stage: str, backend: str) -> Any:
    """The class registered for ``backend`` in a stage's ``BACKENDS`` table."""
    return registered_class(stage_module(stage).BACKENDS, backend, f"stages.{stage}.backend")


def parse_stage(stage: str, data: Mapping[str, Any] | None) -> Spec:
    """A recipe's mapping for ``stage`` (None: all defaults) validated into a :class:`Spec`."""
    module = stage_module(stage)
    return parse_spec(stage, module.BACKENDS, module.DEFAULT_BACKEND, data, f"stages.{stage}")


def build_stage(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> Stage:
    """The stage object for ``spec``; ``reads``: stage objects by name, at least those it reads."""
    return stage_module(spec.name).build(spec, device, reads)


def make_backend(stage: str, backend: str, device: str = "auto", **options: Any) -> Any:
    """A stage's backend object built from keyword options, validated as a recipe's would be."""
    spec = parse_stage(stage, {"backend": backend, **options})
    return backend_class(stage, backend)(spec.options, device=device)
