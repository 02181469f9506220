"""One run's lifecycle, the same for every executor.

1. :func:`preflight`, once per run before any audio is read: every model the recipe names is on
   this machine and its device is usable (where the stages run here), and every LLM stage's
   endpoint answers (:func:`speechkit.llm.run.probe_endpoints`).
2. :func:`run_folders`: each job's run folder, then its stage cache folder, is checked
   (``error: PATH: ...`` for a folder the user cannot write, a cache that is a run folder or
   lies in one outside its ``cache/``: :func:`check_cache_folder`), locked for the run
   (:mod:`speechkit.io.lock`: a second run into one folder meanwhile is refused), and swept of
   the temporary files an interrupted run left.
3. Per workspace, :func:`llm_session`: the run's LLM session with its response cache, holding
   what the preflight found of each endpoint; per meeting, :func:`seed_everything` with the
   run's seed (:func:`run_seed`).
4. The runner finishes the run (:func:`speechkit.runner.finish_run`): steps, scores, run.json,
   report.

The local executor runs all of it in this process; the Ray executor runs 1-2 on the driver and
3-4 in the worker that runs a workspace's meetings.
"""
from __future__ import annotations

import logging
import random
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speechkit.errors import OutputError
from speechkit.io.atomic import check_output_folder, remove_leftovers
from speechkit.io.lock import run_folder_lock
from speechkit.io.run_folder import RunFolder
from speechkit.llm import run as llm_run
from speechkit.llm import session
from speechkit.recipe import Recipe
from speechkit.workspace import Workspace

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    """One workspace to run, the run folder it goes to, and the stage cache folder it reads and
    writes (``cache``; None: the run folder's own ``cache/``). Jobs may share a cache folder."""

    workspace: Workspace
    out: Path
    cache: Path | None = None

    @property
    def cache_dir(self) -> Path:
        """The stage cache folder the job uses."""
        return Path(self.cache) if self.cache is not None else Path(self.out) / "cache"


@dataclass(frozen=True)
class Preflight:
    """What was checked before any audio was read: ``endpoints``, each LLM endpoint (base URL,
    model) as probing it found it."""

    endpoints: dict[tuple[str, str], session.EndpointUsage] = field(default_factory=dict)


def preflight(recipe: Recipe, here: bool = True) -> Preflight:
    """Check the recipe before any audio is read: with ``here`` (the stages run in this process),
    its models and its device; always its LLM endpoints. Raises the error of the first check
    that fails."""
    if here:
        from speechkit.devices import resolve_device
        from speechkit.preflight import check_models
        check_models(recipe)  # every model is here: fail before torch loads or audio is read
        resolve_device(recipe.device)
    return Preflight(llm_run.probe_endpoints(recipe))


@contextmanager
def run_folders(jobs: Sequence[Job]) -> Iterator[None]:
    """Every job's run folder and stage cache checked, the run folders locked for the block and
    swept of an interrupted run's temporary files."""
    for job in jobs:
        check_output_folder(job.out)  # the folder the user named first: its error is the one to see
        check_cache_folder(job)
    with ExitStack() as locks:
        for job in jobs:
            locks.enter_context(run_folder_lock(job.out))
            removed = remove_leftovers(job.out)
            if removed:
                log.info("removed %d temporary file(s) left by an interrupted run in %s", len(removed), job.out)
        yield


def check_cache_folder(job: Job) -> None:
    """The job's stage cache is a folder it can write that lies in no run folder (its own or one
    holding run.json) but as that run's ``cache/`` or below it: a cache is shared, a run folder is not."""
    cache = job.cache_dir.resolve()
    own = Path(job.out).resolve()
    for folder in (cache, *cache.parents):
        run = RunFolder(folder)
        if folder == own or run.run_json.is_file():
            if folder == cache:
                raise OutputError(job.cache_dir, f"is a run folder; give a stage cache of its own (such as "
                                                 f"{run.cache}, which runs may share)")
            if cache != run.cache and run.cache not in cache.parents:
                raise OutputError(job.cache_dir, f"lies inside the run folder {folder}, outside its stage cache "
                                                 f"{run.cache} (which runs may share)")
            break
    check_output_folder(job.cache_dir)


@contextmanager
def llm_session(cache_dir: Path | None, checked: Preflight) -> Iterator[session.Session]:
    """The run's LLM session: answers cached under ``cache_dir/llm`` (None: not cached), each
    endpoint's probe as the preflight found it."""
    with session.opened(cache_dir / "llm" if cache_dir is not None else None, checked.endpoints) as opened:
        yield opened


def run_seed(recipe: Recipe) -> int:
    """The seed of a run's random generators: the ``seed`` option of the first stage that has one
    (the recognizer's; 0 when none has)."""
    seeds = stage_options(recipe, "seed")
    return int(next(iter(seeds.values()), None) or 0)


def stage_options(recipe: Recipe, option: str) -> dict[str, Any]:
    """Stage name -> its value of ``option``, for the recipe's stages whose options have it, in cascade order."""
    return {name: getattr(spec.options, option) for name, spec in recipe.stages.items()
            if hasattr(spec.options, option)}


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's global and (when imported) torch's and CTranslate2's generators."""
    import numpy as np
    random.seed(seed)
    np.random.seed(seed % 2**32)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
    if "ctranslate2" in sys.modules:
        sys.modules["ctranslate2"].set_random_seed(seed)
