"""The Ray executor: the same stage code on a Ray cluster, workspaces in parallel.

Two phases, each a Ray Data ``map_batches`` over stateful worker classes, so a worker loads a
stage's model once and keeps it for every meeting it is handed:

1. The stages that read the recording and whose results are stored (VAD, ASR, diarization:
   :attr:`Stage.reads_audio <speechkit.core.stage.Stage.reads_audio>`), over every meeting of every workspace where what
   they read of the context (:attr:`~speechkit.core.stage.Stage.context_fields`) is known
   without earlier meetings' outputs: every meeting at level 1, a workspace's first meeting, and
   every meeting for a stage that reads nothing the earlier meetings give
   (:func:`~speechkit.context.fields_from_earlier_meetings`: the diarizer's speaker count is the
   invite's). Each stage is one ``map_batches`` with its own workers (:class:`StageWorker`) and
   resources; a stage's results go into the job's stage cache (``OUT/cache/<stage>/<key>.json``
   unless the job names a shared one, written atomically), the same entries the local executor
   reads and writes. Stages run one after the other, each over the whole cluster, so a small
   cluster never waits on workers that cannot all start at once.
2. One row per workspace, ``map_batches(WorkspaceWorker, batch_size=1)``: a worker runs
   :func:`speechkit.runner.run_meetings` for a workspace, its meetings in calendar order with
   the context their predecessors give (phase-1 results come from the cache), then
   :func:`speechkit.runner.finish_run` (steps, scores, report). Workspaces run in parallel.

The driver runs the run's :mod:`~speechkit.lifecycle` before both: the preflight (LLM endpoints;
models and devices are the workers' to check, on their machines) and the run folders' checks,
locks and sweep; a workspace's worker opens its LLM session with what the preflight found.

Run folders (workspaces too) must be on a file system every node sees at the same path. Ray
restarts a killed worker and retries its work; a meeting's files are written only when it is
finished, so an interrupted run loses nothing and a rerun reuses every cached stage result.
"""
from __future__ import annotations

import json
import os
import pickle
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from speechkit.cache import StageCache
from speechkit.context import fields_from_earlier_meetings, run_context
from speechkit.core.stage import Stage
from speechkit.errors import SpeechkitError
from speechkit.io.run_folder import RunFolder
from speechkit.lifecycle import Job, Preflight, llm_session, preflight, run_folders
from speechkit.meeting_context import MeetingContext
from speechkit.recipe import WORKSPACE_WORKER, Recipe, StageResources
from speechkit.runner import RunResult


def reads_of(stage: Stage) -> list[Stage]:
    """``stage`` and the stages it reads, transitively, in cascade order (what runs it on a record)."""
    found: dict[str, Stage] = {}

    def visit(s: Stage) -> None:
        for earlier in s.inputs.values():
            visit(earlier)
        found.setdefault(s.name, s)
    visit(stage)
    return list(found.values())


def needs_earlier_meetings(stage: Stage, level: int) -> bool:
    """Whether ``stage`` or a stage it reads reads a context field that earlier meetings' outputs
    give at ``level``."""
    earlier = fields_from_earlier_meetings(level)
    return any(earlier.intersection(s.context_fields) for s in reads_of(stage))


class StageWorker:
    """Phase 1: one context-free stage for a batch of (job, meeting) rows, into the stage cache."""

    def __init__(self, recipe: Recipe, jobs: Sequence[Job], stage: str) -> None:
        from speechkit.cascade import Cascade
        self.recipe, self.jobs, self.stage = recipe, jobs, stage
        self.cascade = Cascade(recipe)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        stats = []
        chain = reads_of(self.cascade.stage(self.stage))
        fields = {field for s in chain for field in s.context_fields}
        for index, meeting_id in zip(batch["job"], batch["meeting"]):
            job = self.jobs[int(index)]
            meeting = job.workspace.meeting(str(meeting_id))
            # What these stages read of the context; only rows where that needs no earlier meeting come here.
            full = run_context(job.workspace, meeting, self.recipe.level, [], self.recipe.context)
            context = MeetingContext(**{field: getattr(full, field) for field in fields})
            cache = StageCache(job.cache_dir)
            record = self.cascade.record(meeting.audio, context, cache, session_id=meeting.id)
            for stage in chain:  # the stage after the stages it reads (the VAD's regions)
                self.cascade.run_stage(stage.name, record)
            stats.append(json.dumps({
                "misses": cache.misses.get(self.stage, 0),
                "timings": {k: v for k, v in record.timings.items() if k in (self.stage, "audio")}}))
        return {"job": batch["job"], "meeting": batch["meeting"], "stats": np.array(stats, dtype=object)}


class WorkspaceWorker:
    """Phase 2: a workspace's meetings in calendar order, then its scores and report."""

    def __init__(self, recipe: Recipe, jobs: Sequence[Job], started: float, checked: Preflight) -> None:
        from speechkit.cascade import Cascade
        self.recipe, self.jobs, self.started, self.checked = recipe, jobs, started, checked
        self.cascade = Cascade(recipe)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from speechkit.runner import finish_run, run_meetings
        results = []
        for index, phase1 in zip(batch["job"], batch["phase1"]):
            job = self.jobs[int(index)]
            cache = StageCache(job.cache_dir)
            run = RunFolder(job.out)
            with llm_session(cache.root, self.checked) as llm:
                meetings = run_meetings(self.recipe, job.workspace, run, self.cascade, cache, progress=False)
                _merge_phase1(cache, meetings, json.loads(phase1))
                result = finish_run(self.recipe, job.workspace, run, meetings, time.time() - self.started,
                                    llm, cache, executor="ray")
            results.append(pickle.dumps(result))
        return {"job": batch["job"], "result": np.array(results, dtype=object)}


def _merge_phase1(cache: StageCache, meetings: dict, phase1: dict) -> None:
    """Count phase 1's work in the run's cache figures and timings, as one local run would.

    Phase 2 read back every entry phase 1 computed: those reads are not hits of the run.
    """
    for stage, n in phase1["misses"].items():
        cache.misses[stage] = cache.misses.get(stage, 0) + n
        hits = cache.hits.get(stage, 0) - n
        if hits > 0:
            cache.hits[stage] = hits
        else:
            cache.hits.pop(stage, None)
    for meeting_id, timings in phase1["timings"].items():
        own = meetings[meeting_id].timings
        for stage, seconds in timings.items():
            own[stage] = own.get(stage, 0.0) + seconds


def _map(ray: Any, rows: list[dict], worker: type, resources: StageResources, kwargs: dict) -> list[dict]:
    """``rows`` through ``worker`` on an actor pool sized and resourced by ``resources``.

    Workers get the driver's ``OMP_NUM_THREADS`` (its cores when unset): Ray would set it to the
    worker's CPUs, and CTranslate2's int8 kernels give other word times with one OpenMP thread
    than with several, so a Ray run would not reproduce the local run's transcripts.
    """
    most = min(len(rows), resources.concurrency or len(rows))
    threads = os.environ.get("OMP_NUM_THREADS") or str(os.cpu_count() or 1)
    dataset = ray.data.from_items(rows).map_batches(
        worker, fn_constructor_kwargs=kwargs, batch_size=resources.batch_size,
        compute=ray.data.ActorPoolStrategy(min_size=1, max_size=most),
        num_cpus=resources.num_cpus, num_gpus=resources.num_gpus,
        runtime_env={"env_vars": {"OMP_NUM_THREADS": threads}})
    return dataset.take_all()


class RayExecutor:
    """Runs recipes on the Ray cluster at ``address`` (None: ``RAY_ADDRESS`` or a local Ray)."""

    name = "ray"

    def __init__(self, address: str | None = None) -> None:
        self.address = address

    def run(self, recipe: Recipe, jobs: Sequence[Job], progress: bool = True) -> list[RunResult]:
        try:
            import ray
            import ray.data
        except ImportError:
            raise SpeechkitError("the Ray executor needs Ray: pip install 'speechkit[ray]'") from None
        if not ray.is_initialized():
            ray.init(address=self.address)
        ray.data.DataContext.get_current().enable_progress_bars = progress
        started = time.time()
        jobs = [replace(job, out=Path(job.out).resolve(), cache=job.cache_dir.resolve()) for job in jobs]
        checked = preflight(recipe, here=False)  # the workers' machines check their models and devices
        with run_folders(jobs):  # one run per folder at a time, as with the local executor
            phase1 = self._context_free_stages(ray, recipe, jobs)
            rows = [{"job": i, "phase1": json.dumps(phase1[i])} for i in range(len(jobs))]
            done = _map(ray, rows, WorkspaceWorker, recipe.resources.get(WORKSPACE_WORKER, StageResources()),
                        {"recipe": recipe, "jobs": jobs, "started": started, "checked": checked})
        results = {int(row["job"]): pickle.loads(row["result"]) for row in done}
        return [results[i] for i in range(len(jobs))]

    def _context_free_stages(self, ray: Any, recipe: Recipe, jobs: list[Job]) -> list[dict]:
        """Phase 1; per job, the cache misses by stage and the timings by meeting it had."""
        from speechkit.cascade import Cascade
        cascade = Cascade(recipe)
        # a stage whose results are not stored (a whole system's) would only run twice: phase 2 runs it
        stages = [cascade.stage(name) for name in cascade.stage_names
                  if cascade.stage(name).reads_audio and cascade.stage(name).stored]
        rows = [{"job": i, "meeting": m.id, "first": k == 0}
                for i, job in enumerate(jobs) for k, m in enumerate(job.workspace.scored_meetings)]
        misses: list[Counter] = [Counter() for _ in jobs]
        timings: list[dict[str, Counter]] = [{} for _ in jobs]
        for stage_object in stages:
            stage = stage_object.name
            alone = not needs_earlier_meetings(stage_object, recipe.level)
            todo = [r for r in rows if alone or r["first"]]
            if not todo:
                continue
            for row in _map(ray, todo, StageWorker, recipe.resources.get(stage, StageResources()),
                            {"recipe": recipe, "jobs": jobs, "stage": stage}):
                index, stats = int(row["job"]), json.loads(row["stats"])
                if stats["misses"]:
                    misses[index][stage] += stats["misses"]
                timings[index].setdefault(str(row["meeting"]), Counter()).update(stats["timings"])
        return [{"misses": dict(m), "timings": {k: dict(v) for k, v in t.items()}} for m, t in zip(misses, timings)]
