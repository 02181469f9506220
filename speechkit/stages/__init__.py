"""The stages of a cascade, each one module (or subpackage) of the same shape.

A stage module (``speechkit.stages.vad``, ``.asr``, ``.diarize``, ``.attribute``, ``.identify``,
``.correct``) provides:

- ``BACKENDS``: backend name -> ``"module:Class"``, imported only when used. Each backend class
  has an ``Options`` attribute: its :class:`~speechkit.stages.options.StageOptions` dataclass.
- ``DEFAULT_BACKEND``: the backend a recipe gets when it names none.
- ``build(spec, device, **inputs) -> Stage``: the stage object for a :class:`StageSpec`. A stage
  loads its model on first use, so a rerun served from the cache loads none.

A :class:`Stage` runs on one meeting's :class:`~speechkit.stages.record.MeetingRecord` and
returns its result, which :class:`~speechkit.cascade.Cascade` stores on the record under the
stage's name. A stage whose :meth:`Stage.cache_key` is not None has its result cached on disk
(``encode``/``decode`` turn it into JSON and back); the key covers the stage's options, the
identity of its model files and the keys of the results it reads. See docs/architecture.md.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from speechkit.stages.options import OptionError, StageOptions

#: Stage name -> module, in the order a cascade runs them.
STAGES: dict[str, str] = {
    "vad": "speechkit.stages.vad",
    "asr": "speechkit.stages.asr",
    "diarize": "speechkit.stages.diarize",
    "attribute": "speechkit.stages.attribute",
    "identify": "speechkit.stages.identify",
    "correct": "speechkit.stages.correct",
}
#: Stages a recipe may leave out (attribute and identify run with their defaults; correct is skipped).
OPTIONAL_STAGES = ("attribute", "identify", "correct")

R = TypeVar("R")


@dataclass(frozen=True)
class StageSpec:
    """A stage as a recipe gives it: the backend's name and its validated options."""

    stage: str
    backend: str
    options: StageOptions

    def as_dict(self) -> dict[str, Any]:
        """The fully resolved options, defaults included (what run.json records)."""
        return {"backend": self.backend, **self.options.as_dict()}


class Stage(Generic[R]):
    """Base class of the stage objects that ``build`` returns.

    ``name`` is the stage's name (the cache folder and the record attribute its result fills).
    """

    name: str = ""

    def cache_key(self, record: Any) -> str | None:
        """The key of this stage's result for ``record``, or None when it is not cached."""
        return None

    def run(self, record: Any) -> R:
        """The stage's result for one meeting."""
        raise NotImplementedError

    def encode(self, result: R) -> Any:
        """``result`` as JSON-serialisable data (cached stages only)."""
        return result

    def decode(self, data: Any) -> R:
        """The result that :meth:`encode` turned into ``data``."""
        return data


class BackendStage(Stage[R]):
    """A stage that hands each meeting to one backend object, built from its spec on first use."""

    def __init__(self, spec: StageSpec, device: str = "auto") -> None:
        self.spec = spec
        self.device = device
        self._backend: Any = None

    @property
    def backend(self) -> Any:
        """The backend (loading its model on first use)."""
        if self._backend is None:
            self._backend = backend_class(self.name, self.spec.backend)(self.spec.options, device=self.device)
        return self._backend


def model_identity(options: StageOptions) -> str | None:
    """The identity of the model files a backend's ``model`` option names (None: no model)."""
    from speechkit import registry
    model = getattr(options, "model", None)
    return registry.identity(model) if model else None


def stage_module(stage: str) -> Any:
    """The module of a stage by name."""
    if stage not in STAGES:
        raise KeyError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    return importlib.import_module(STAGES[stage])


def backend_class(stage: str, backend: str) -> Any:
    """The class registered for ``backend`` in a stage's ``BACKENDS`` table."""
    table = stage_module(stage).BACKENDS
    if backend not in table:
        raise OptionError(f"stages.{stage}.backend",
                          f"unknown backend {backend!r}; expected one of {', '.join(table)}")
    module, cls = table[backend].split(":")
    return getattr(importlib.import_module(module), cls)


def parse_stage(stage: str, data: Mapping[str, Any] | None) -> StageSpec:
    """A recipe's mapping for ``stage`` (None: all defaults) validated into a :class:`StageSpec`."""
    where = f"stages.{stage}"
    if data is not None and not isinstance(data, Mapping):
        raise OptionError(where, "expected a mapping of options")
    data = dict(data or {})
    backend = data.pop("backend", stage_module(stage).DEFAULT_BACKEND)
    if not isinstance(backend, str):
        raise OptionError(f"{where}.backend", f"expected a backend name, got {backend!r}")
    options = backend_class(stage, backend).Options.from_dict(data, where)
    return StageSpec(stage, backend, options)


def build_stage(spec: StageSpec, device: str = "auto", **inputs: Any) -> Stage:
    """The stage object for ``spec`` (``inputs``: objects of other stages it needs, see ``build``)."""
    return stage_module(spec.stage).build(spec, device, **inputs)


def make_backend(stage: str, backend: str, device: str = "auto", **options: Any) -> Any:
    """A stage's backend object built from keyword options, validated as a recipe's would be."""
    spec = parse_stage(stage, {"backend": backend, **options})
    return backend_class(stage, backend)(spec.options, device=device)
