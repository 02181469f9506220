"""The stage contract: what every stage of a cascade declares, and how its results are keyed.

A :class:`Stage` declares what it reads (:attr:`Stage.reads`: earlier stages' results;
:attr:`Stage.reads_audio`; :attr:`Stage.context_fields` and :meth:`Stage.extra_inputs`: what
else of the record it uses), runs on one meeting's :class:`~speechkit.core.record.MeetingRecord`
and returns its result, which the cascade stores on the record under the stage's name. From
those declarations the cascade derives every result's key (:func:`stage_key`); a stage with
:attr:`Stage.stored` has its result kept on disk under that key (its result type turns itself
into JSON and back: ``to_dict`` / ``from_dict``).

What a stage gives beyond its result, so that nothing else names it:

- :meth:`Stage.outputs`: its part of the meeting's outputs (:mod:`speechkit.core.record`: the
  transcript, the speaker turns, the voices, what later meetings' context learns from);
- :meth:`Stage.write`: the per-meeting files it writes into the run folder;
- :meth:`Stage.run_summary`: its block of run.json over the run's meetings.

Its metrics and its report section are declared by its module (``METRICS``, ``SECTIONS``), so
that scoring and reports find them without building the stage. See docs/architecture.md.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from speechkit.cache import digest
from speechkit.core.options import OptionError, StageOptions

if TYPE_CHECKING:
    from speechkit.core.record import MeetingRecord
    from speechkit.io.run_folder import RunFolder
    from speechkit.workspace import Workspace

R = TypeVar("R")


@dataclass(frozen=True)
class Spec:
    """A stage or a post-run step as a recipe gives it: its ``name``, the backend's name and its
    validated options."""

    name: str
    backend: str
    options: StageOptions

    def as_dict(self) -> dict[str, Any]:
        """The fully resolved options, defaults included (what run.json records)."""
        return {"backend": self.backend, **self.options.as_dict()}


class Stage(Generic[R]):
    """Base class of the stage objects that a stage module's ``build`` returns.

    ``name``: the stage's name (the record's key for its result, the cache folder).
    ``reads``: the stages whose results it reads (their keys are part of its key); ``build``
    hands it those stages' objects (``self.inputs``). ``reads_audio``: it reads the recording
    (the audio's identity is part of its key). ``context_fields``: the fields of the meeting's
    :class:`~speechkit.meeting_context.MeetingContext` it reads (what a distributed executor
    must give it). ``stored``: its result is kept in the stage cache (``result_type`` gives
    ``from_dict``; the result has ``to_dict``). ``caches``: the other folders of the stage cache
    it keeps entries in (identification: the enrollment vectors). ``version``: part of the key,
    raised when a stored result changes form, or what the stage computes from the same inputs, so
    that older entries are not read back.
    """

    name: str = ""
    reads: tuple[str, ...] = ()
    reads_audio: bool = False
    context_fields: tuple[str, ...] = ()
    stored: bool = False
    result_type: Any = None
    caches: tuple[str, ...] = ()
    version: int = 1

    def __init__(self, spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
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

    def extra_inputs(self, record: MeetingRecord) -> Any:
        """What the stage reads from ``record`` besides earlier results and the audio (its
        context, the speaker count, ...), as JSON-serialisable data for its key."""
        return None

    def start_run(self, workspace: Workspace, run: RunFolder) -> None:
        """Called by the runner before a run's first meeting with its workspace and run folder
        (nothing by default)."""

    def run(self, record: MeetingRecord) -> R:
        """The stage's result for one meeting."""
        raise NotImplementedError

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        """The meeting outputs this stage's result on ``record`` sets or refines, given those of
        the stages before it (``so_far``); see :mod:`speechkit.core.record`. None by default."""
        return {}

    def write(self, record: MeetingRecord, run: RunFolder) -> None:
        """Write this stage's per-meeting files of ``record`` into ``run`` (none by default)."""

    def run_summary(self, summaries: Mapping[str, Any]) -> Any:
        """This stage's block of run.json (under its name, after ``stages``) from each meeting's
        ``summary()`` of its result; None (the default): no block."""
        return None


class BackendStage(Stage[R]):
    """A stage that hands each meeting to one backend object, built from its spec on first use;
    ``backends``: the stage module's ``BACKENDS`` table."""

    backends: Mapping[str, str] = {}

    def __init__(self, spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
        super().__init__(spec, device, reads)
        self._backend: Any = None

    @property
    def backend(self) -> Any:
        """The backend (loading its model on first use)."""
        if self._backend is None:
            cls = registered_class(self.backends, self.spec.backend, f"stages.{self.name}.backend")
            self._backend = cls(self.spec.options, device=self.device)
        return self._backend


def stage_key(stage: Stage, record: MeetingRecord) -> str:
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


def registered_class(table: Mapping[str, str], name: str, where: str, kind: str = "backend") -> Any:
    """The class a ``name -> "module:Class"`` table registers for ``name``, imported now; an
    unknown name is an :class:`OptionError` at ``where`` naming the known ones."""
    if name not in table:
        raise OptionError(where, f"unknown {kind} {name!r}; expected one of {', '.join(table)}")
    module, cls = table[name].split(":")
    return getattr(importlib.import_module(module), cls)


def parse_spec(name: str, backends: Mapping[str, str], default: str, data: Mapping[str, Any] | None,
               where: str) -> Spec:
    """A recipe's mapping for stage or step ``name`` (None: all defaults) validated into a
    :class:`Spec` of one of ``backends`` (``default`` when it names none); raises :class:`OptionError`."""
    if data is not None and not isinstance(data, Mapping):
        raise OptionError(where, "expected a mapping of options")
    data = dict(data or {})
    backend = data.pop("backend", default)
    if not isinstance(backend, str):
        raise OptionError(f"{where}.backend", f"expected a backend name, got {backend!r}"[:200])
    options = registered_class(backends, backend, f"{where}.backend").Options.from_dict(data, where)
    return Spec(name, backend, options)
