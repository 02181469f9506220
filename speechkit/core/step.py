"""The post-run step contract: work over a finished run's folder (answer questions, judge, probe).

A :class:`Step` is built from its :class:`~speechkit.core.stage.Spec` (the backend and options a
recipe's ``steps:`` block or the command line gives) and runs on one level's run folder. It
declares what it reads of the folder (:attr:`Step.reads`: per-meeting files a run must have
written for it to run) and the run files it writes (:attr:`Step.writes`, by name). Its metrics
and its report section are declared by its module (``METRICS``, ``SECTIONS``), as a stage's are.
Running steps, then the scores and the report made again from the folder, is
:func:`speechkit.steps.run.run_steps`'s job, whether a recipe or the command line asked.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speechkit.core.stage import Spec, registered_class

if TYPE_CHECKING:
    from speechkit.io.run_folder import MeetingFile, RunFolder
    from speechkit.workspace import Workspace


@dataclass(frozen=True)
class StepJob:
    """What a step is run with besides the folder: the run's ``workspace``, the bootstrap's
    ``resamples`` and ``seed`` (for the CIs a step reports), the ``meetings`` to cover (None: every
    meeting the run transcribed) and ``out``, a file to write instead of the step's own (None: its
    file in the run folder)."""

    workspace: Workspace
    resamples: int
    seed: int
    meetings: tuple[str, ...] | None = None
    out: Path | None = None


class Step:
    """Base class of the post-run steps (see the module docstring).

    ``name``: the step's name (its recipe key and command). ``reads``: the per-meeting files of
    the run folder it needs (at least one meeting must have each). ``writes``: the names of the
    run files it writes (:meth:`speechkit.io.run_folder.RunFolder.file`). ``backends``: its
    module's ``BACKENDS`` table.
    """

    name: str = ""
    reads: tuple[MeetingFile, ...] = ()
    writes: tuple[str, ...] = ()
    backends: dict[str, str] = {}

    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    def backend(self, *args: object) -> object:
        """The backend object of the spec, built from its options (and ``args``)."""
        cls = registered_class(self.backends, self.spec.backend, f"steps.{self.name}.backend")
        return cls(self.spec.options, *args)

    def check(self, run: RunFolder, job: StepJob) -> None:
        """What must hold before the step writes anything (an LLM step probes its endpoint);
        raises when it does not. Nothing by default."""

    def run(self, run: RunFolder, job: StepJob) -> Any:
        """Run the step on the finished run ``run``, writing its files; what it wrote (its document)."""
        raise NotImplementedError
