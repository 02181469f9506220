"""Executors: where a recipe runs over workspaces, each into its run folder.

Every executor runs the same :mod:`~speechkit.lifecycle` and writes the same run folder (see
:mod:`speechkit.io.run_folder`) with the same stage code and the same stage cache (the job's
``cache``, shared between jobs where they name one
folder), so a run started by one executor is resumed by any other::

    from speechkit.executors import Job, make_executor

    executor = make_executor("ray", address="head-node:6379")  # or "local"
    results = executor.run(recipe, [Job(ws_a, Path("runs/a")), Job(ws_b, Path("runs/b"))])

- ``local``: one process on this machine, workspace after workspace, models loaded once.
- ``ray``: a Ray cluster (:mod:`speechkit.executors.ray`); needs ``pip install 'speechkit[ray]'``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from speechkit.errors import SpeechkitError
from speechkit.lifecycle import Job
from speechkit.recipe import Recipe
from speechkit.runner import RunResult

__all__ = ["EXECUTORS", "Executor", "Job", "LocalExecutor", "make_executor"]

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Runs a recipe over workspaces; returns their results in the order of ``jobs``."""

    name: str

    def run(self, recipe: Recipe, jobs: Sequence[Job], progress: bool = True) -> list[RunResult]:
        ...


class LocalExecutor:
    """Every workspace in this process, one after the other, with one :class:`~speechkit.cascade.Cascade`."""

    name = "local"

    def run(self, recipe: Recipe, jobs: Sequence[Job], progress: bool = True) -> list[RunResult]:
        from speechkit.cascade import Cascade
        from speechkit.lifecycle import preflight, run_folders
        from speechkit.runner import run_job

        checked = preflight(recipe)
        cascade = Cascade(recipe)
        with run_folders(jobs):
            return [run_job(recipe, job, cascade, checked, progress) for job in jobs]


def make_executor(name: str = "local", address: str | None = None) -> Executor:
    """The executor called ``name``; ``address`` is the Ray cluster to join (ray only)."""
    if name == "local":
        if address:
            raise SpeechkitError("--address names a Ray cluster; it needs --executor ray")
        return LocalExecutor()
    if name == "ray":
        from speechkit.executors.ray import RayExecutor
        return RayExecutor(address)
    raise SpeechkitError(f"unknown executor {name!r}; expected one of {', '.join(EXECUTORS)}")
