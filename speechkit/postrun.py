"""Post-run steps over a run folder, whoever asks: a recipe's ``steps:`` or the command line.

Each step (:mod:`speechkit.steps`) is built from its spec and run on a level's run folder: the
files it writes are checked first (never over an input, never through a link), then the
per-meeting files it reads must be there, then it runs in an LLM session of its own whose
answers are cached in the run's response cache (so a step's document counts its own requests):
its :meth:`~speechkit.core.step.Step.check` (an LLM step's endpoint probe) before anything is
written, then :meth:`~speechkit.core.step.Step.run`. In a recipe run the steps run before scoring
(:func:`run_steps`: scores.json takes their metrics) inside the run's lock;
:func:`run_step_on_finished` runs one on a run that is already finished, under the run folder's
lock, and then makes its scores (where the step has metrics) and its report again from the folder,
as the run itself did.
"""
from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from speechkit.core.stage import Spec
from speechkit.core.step import Step, StepJob
from speechkit.errors import FormatError
from speechkit.io.atomic import check_output_file, check_output_folder
from speechkit.io.lock import run_folder_lock
from speechkit.io.run_folder import RunFolder
from speechkit.llm import session
from speechkit.steps import step_module


def build_step(spec: Spec) -> Step:
    """The step object of ``spec``."""
    return step_module(spec.name).STEP(spec)


def _run(run: RunFolder, spec: Spec, job: StepJob, llm_cache: Path | None, lock: bool) -> Any:
    """One step on ``run`` (see the module docstring); ``lock``: take the run folder's lock to write."""
    step = build_step(spec)
    for target in [job.out] if job.out is not None else [run.file(name) for name in step.writes]:
        check_output_file(target, {"the workspace manifest": job.workspace.manifest_path})
    meetings = run.meetings(job.workspace)
    for file in step.reads:
        if not any(run.meeting_file(file, m).is_file() for m in meetings):
            raise FormatError(run.root / file.folder, f"the {step.name} step reads {file.folder}/<meeting>"
                              f"{file.suffix}, and the run has none")
    with session.opened(llm_cache):
        step.check(run, job)
        with run_folder_lock(run.root) if lock else nullcontext():
            return step.run(run, job)


def run_steps(run: RunFolder, specs: Sequence[Spec], job: StepJob, llm_cache: Path | None) -> list[Any]:
    """Run the steps ``specs`` in order on ``run``, whose lock the caller holds (a run's
    :func:`~speechkit.lifecycle.run_folders`); the document each wrote."""
    return [_run(run, spec, job, llm_cache, lock=False) for spec in specs]


def run_step_on_finished(run: RunFolder, spec: Spec, job: StepJob, llm_cache: Path | None) -> Any:
    """Run one step on the finished run ``run`` (see the module docstring); the document it wrote."""
    from speechkit.report import write_report
    from speechkit.scoring import score_workspace

    if llm_cache is not None:
        check_output_folder(llm_cache)  # --cache-dir: before any request is sent
    document = _run(run, spec, job, llm_cache, lock=True)
    if job.out is None and run.is_finished() and run.scores.is_file():
        with run_folder_lock(run.root):
            if getattr(step_module(spec.name), "METRICS", ()):
                score_workspace(job.workspace, run, out=run.scores)
            write_report(run)
    return document
