"""Post-run steps: work over a finished run's folder, the registry of step modules.

A step module (``speechkit.steps.qa``, ``.align``, ``.judge``, ``.probe``) provides:

- ``BACKENDS``: backend name -> ``"module:Class"`` and ``DEFAULT_BACKEND``; each backend class
  has an ``Options`` attribute (a :class:`~speechkit.core.options.StageOptions` dataclass), as a
  stage's backends do, and is built as ``Backend(options)``.
- ``STEP``: the step's class (:class:`speechkit.core.step.Step`): what it reads of the run folder,
  what it writes, and how it runs.
- optionally ``METRICS`` (its metric families, :mod:`speechkit.metrics.family`) and ``SECTIONS``
  (its report sections, :class:`speechkit.core.section.Section`).

A recipe lists the steps to run after its meetings (``steps: {qa: {backend: extractive}}``), and
the command line runs any one of them on a finished run (``speechkit qa RUN``, ``speechkit judge
RUN``, ...); either way the scores and the report are then made again from the folder
(:func:`speechkit.steps.run.run_steps`). The contract is :mod:`speechkit.core.step`.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from speechkit.core.stage import Spec, parse_spec

#: Step name -> module, in the order a recipe's steps run.
STEPS: dict[str, str] = {
    "qa": "speechkit.steps.qa",
    "align": "speechkit.steps.align",
    "judge": "speechkit.steps.judge",
    "probe": "speechkit.steps.probe",
}


def step_module(step: str) -> Any:
    """The module of a step by name."""
    if step not in STEPS:
        raise KeyError(f"unknown step {step!r}; expected one of {', '.join(STEPS)}")
    return importlib.import_module(STEPS[step])


def parse_step(step: str, data: Mapping[str, Any] | None, where: str | None = None) -> Spec:
    """A recipe's mapping for ``step`` (None: all defaults) validated into a :class:`Spec`;
    raises :class:`~speechkit.core.options.OptionError`."""
    module = step_module(step)
    return parse_spec(step, module.BACKENDS, module.DEFAULT_BACKEND, data, where or f"steps.{step}")
