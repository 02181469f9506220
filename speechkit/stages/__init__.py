"""The stages of a cascade, each one module (or subpackage) of the same shape.

A stage module (``speechkit.stages.vad``, ``.asr``, ``.diarize``, ``.attribute``, ``.identify``,
``.correct``, ``.summarize``) provides:

- ``BACKENDS``: backend name -> ``"module:Class"``, imported only when used. Each backend class
  has an ``Options`` attribute: its :class:`~speechkit.stages.options.StageOptions` dataclass.
- ``DEFAULT_BACKEND``: the backend a recipe gets when it names none.
- ``build(spec, device, reads) -> Stage``: the stage object for a :class:`StageSpec`, given the
  stage objects of the stages it reads. A stage loads its model on first use, so a rerun
  served from the cache loads none.

A :class:`Stage` declares what it reads (:attr:`Stage.reads`: earlier stages' results;
:attr:`Stage.reads_audio`; :meth:`Stage.extra_inputs`: what else of the record it uses), runs on
one meeting's :class:`~speechkit.stages.record.MeetingRecord` and returns its result, which
:class:`~speechkit.cascade.Cascade` stores on the record under the stage's name. From those
declarations the Cascade derives every result's key (:func:`stage_key`); a stage with
:attr:`Stage.stored` has its result kept on disk under that key (its result type turns itself
into JSON and back: ``to_dict`` / ``from_dict``). See docs/architecture.md.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from speechkit.cache import digest
from speechkit.stages.options import OptionError, StageOptions

#: Stage name -> module, in the order a cascade runs them.
STAGES: dict[str, str] = {
    "vad": "speechkit.stages.vad",
    "asr": "speechkit.stages.asr",
    "diarize": "speechkit.stages.diarize",
    "attribute": "speechkit.stages.attribute",
    "identify": "speechkit.stages.identify",
    "correct": "speechkit.stages.correct",
    "summarize": "speechkit.stages.summarize",
}
#: Stages every recipe names.
REQUIRED_STAGES = ("vad", "asr", "diarize")
#: Stages a recipe may leave out (attribute and identify run with their defaults; others are skipped).
OPTIONAL_STAGES = tuple(name for name in STAGES if name not in REQUIRED_STAGES)

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

    ``name``: the stage's name (the record's key for its result, the cache folder).
    ``reads``: the stages whose results it reads (their keys are part of its key); ``build``
    hands it those stages' objects (``self.inputs``). ``reads_audio``: it reads the recording
    (the audio's identity is part of its key). ``stored``: its result is kept in the stage cache
    (``result_type`` gives ``from_dict``; the result has ``to_dict``). ``version``: part of the
    key, raised when a stored result changes form, or what the stage computes from the same
    inputs, so that older entries are not read back.
    """

    name: str = ""
    reads: tuple[str, ...] = ()
    reads_audio: bool = False
    stored: bool = False
    result_type: Any = None
    version: int = 1

    def __init__(self, spec: StageSpec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
        self.spec = spec
        self.device = device
        reads = reads or {}
        missing = [name for name in self.reads if name not in reads]
        if missing:
            raise ValueError(f"stage {self.name!r} reads {', '.join(missing)}, which does not run before it")
        self.inputs: dict[str, Stage] = {name: reads[name] for name in self.reads}

    def identity(self) -> Any:
        """What besides its options decides this stage's results: the identity of its model files
        (:func:`model_identity`; None: no model)."""
        return model_identity(self.spec.options)

    def extra_inputs(self, record: Any) -> Any:
        """What the stage reads from ``record`` besides earlier results and the audio (its
        context, the speaker count, ...), as JSON-serialisable data for its key."""
        return None

    def run(self, record: Any) -> R:
        """The stage's result for one meeting."""
        raise NotImplementedError


class BackendStage(Stage[R]):
    """A stage that hands each meeting to one backend object, built from its spec on first use."""

    def __init__(self, spec: StageSpec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
        super().__init__(spec, device, reads)
        self._backend: Any = None

    @property
    def backend(self) -> Any:
        """The backend (loading its model on first use)."""
        if self._backend is None:
            self._backend = backend_class(self.name, self.spec.backend)(self.spec.options, device=self.device)
        return self._backend


def stage_key(stage: Stage, record: Any) -> str:
    """The key of ``stage``'s result on ``record``: a digest of everything the result depends
    on (the stage's name, version and resolved options, its :meth:`~Stage.identity`, the keys of
    the results it reads, the audio's identity where it reads audio, and its
    :meth:`~Stage.extra_inputs`). Never None, whether or not the result is stored."""
    missing = [name for name in stage.reads if name not in record.keys]
    if missing:
        raise RuntimeError(f"stage {stage.name!r} reads {', '.join(missing)}, which has not run on {record.audio}")
    return digest(stage.name, stage.version, stage.spec.as_dict(), stage.identity(),
                  {name: record.keys[name] for name in stage.reads},
                  record.audio_key if stage.reads_audio else None, stage.extra_inputs(record))


def model_identity(options: StageOptions) -> str | None:
    """The identity of the model files a backend's ``model`` option names (None: no model);
    options that resolve their model elsewhere (an LLM endpoint) give their own ``identity()``."""
    from speechkit import registry
    if hasattr(options, "identity"):
        return options.identity()
    model = getattr(options, "model", None)
    return registry.identity(model) if model else None


def stage_module(stage: str) -> Any:
    """The module of a stage by name."""
    if stage not in STAGES:
        raise KeyError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    return importlib.import_module(STAGES[stage])


def backend_class(stage: str, backend: str) -> Any:
    """The class registered for ``backend`` in a stage's ``BACKENDS`` table."""
    return registered_class(stage_module(stage).BACKENDS, backend, f"stages.{stage}.backend")


def registered_class(table: Mapping[str, str], name: str, where: str, kind: str = "backend") -> Any:
    """The class a ``name -> "module:Class"`` table registers for ``name``, imported now; an
    unknown name is an :class:`OptionError` at ``where`` naming the known ones."""
    if name not in table:
        raise OptionError(where, f"unknown {kind} {name!r}; expected one of {', '.join(table)}")
    module, cls = table[name].split(":")
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


def build_stage(spec: StageSpec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> Stage:
    """The stage object for ``spec``; ``reads``: stage objects by name, at least those it reads."""
    return stage_module(spec.stage).build(spec, device, reads)


def make_backend(stage: str, backend: str, device: str = "auto", **options: Any) -> Any:
    """A stage's backend object built from keyword options, validated as a recipe's would be."""
    spec = parse_stage(stage, {"backend": backend, **options})
    return backend_class(stage, backend)(spec.options, device=device)
