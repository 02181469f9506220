"""Run a recipe over every meeting of a workspace, in calendar order, and score it.

The run folder's layout is :mod:`speechkit.io.run_folder`'s: the runner writes each meeting's
transcripts and context, each stage its own per-meeting files (:meth:`~speechkit.core.stage.Stage.write`),
then the post-run steps, scores.json, run.json and the report.

The stage cache (:mod:`speechkit.cache`) may be shared by several runs (``cache_dir``; ``speechkit
recipe --level all`` shares one between its levels): a result's key says everything it depends
on and nothing about the run folder, so a run reuses every identical VAD, ASR and diarization
result another run computed, and runs sharing it concurrently stay safe (entries are written
atomically, read whole).

Every file is written atomically, and a meeting's transcripts are written only when the meeting
is finished, so an interrupted run loses nothing that was done and the rerun resumes. A process
killed during a write can leave its temporary file (``.NAME.*.tmp``) behind; the next run into
the folder deletes such leftovers before it starts.

Runs are reproducible: before each meeting Python's, NumPy's and torch's generators are seeded
with the run's seed (:func:`speechkit.lifecycle.run_seed`: the recognizer's ``seed``), and the Whisper backend seeds
CTranslate2's sampling before every decoding call, so the same inputs, recipe and machine give
byte-identical transcripts and scores.
"""
from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from speechkit.cache import StageCache
from speechkit.cascade import Cascade, CascadeResult
from speechkit.context import PriorMeeting, run_context
from speechkit.core.step import StepJob
from speechkit.io.atomic import write_json
from speechkit.io.jsonfile import read_json
from speechkit.io.rttm import write_rttm
from speechkit.io.run_folder import TRANSCRIPT_STM, TURNS_RTTM, RunFolder, default_run
from speechkit.io.seglst import write_seglst
from speechkit.io.stm import write_stm
from speechkit.lifecycle import (
    Job,
    Preflight,
    llm_session,
    preflight,
    run_folders,
    run_seed,
    seed_everything,
    stage_options,
)
from speechkit.llm import run as llm_run
from speechkit.llm.session import Session
from speechkit.metrics.bootstrap import RESAMPLES, SEED
from speechkit.metrics.exposure import meeting_exposure, run_exposure
from speechkit.recipe import Recipe, RecipeError
from speechkit.workspace import Workspace

PACKAGES = ("speechkit", "torch", "torchaudio", "faster-whisper", "ctranslate2", "pyannote.audio",
            "pyannote.metrics", "speechbrain", "pyctcdecode", "jiwer", "whisper-normalizer", "meeteval",
            "resemblyzer", "silero-vad", "onnxruntime", "numpy")


@dataclass
class RunResult:
    """A finished run: its folder, its scores (the scores.json mapping) and each meeting's cascade result."""

    out: Path
    scores: dict
    results: dict[str, CascadeResult]


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a run depends on (None where absent)."""
    out = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def runtime_info(recipe: Recipe) -> dict:
    """What decides a run's numbers besides its inputs and recipe: device, each stage's compute
    type and threads where its options have them, and the seeds (run.json ``runtime``)."""
    from speechkit.devices import default_compute_type, resolve_device
    try:
        device = resolve_device(recipe.device)
    except Exception as exc:  # informative only
        device = f"unresolved: {exc}"
    resolved = not device.startswith("unresolved")
    compute = {f"{name}_compute_type": value if value is not None or not resolved else default_compute_type(device)
               for name, value in stage_options(recipe, "compute_type").items()}  # None: the device's default
    threads: dict = {"cpu_count": os.cpu_count(),
                     **{f"{name}_cpu_threads": value for name, value in stage_options(recipe, "cpu_threads").items()},
                     **{name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}}
    if "torch" in sys.modules:
        threads["torch"] = sys.modules["torch"].get_num_threads()
    return {"device": device, **compute, "threads": threads,
            "seeds": {"run": run_seed(recipe), **stage_options(recipe, "seed")}}


def default_out(recipe: Recipe, ws: Workspace) -> Path:
    """The default run folder of a recipe at its level: ``runs/<recipe family>-<workspace>/l<level>``."""
    return default_run(recipe.family, ws.name, recipe.level).root


def run_meetings(recipe: Recipe, ws: Workspace, run: RunFolder, cascade: Cascade, cache: StageCache,
                 progress: bool = True) -> dict[str, CascadeResult]:
    """Run the cascade on each meeting in calendar order, writing its files when it is done.

    Each meeting's L2/L3 context is built from the outputs of the meetings before it; its context
    file records, beside what was added, which of its scored terms each stream held
    (:func:`~speechkit.metrics.exposure.meeting_exposure`, computed here, never by the context
    builder). Enrollment-only meetings are skipped: they supplied voice enrollments and are neither
    run nor scored.
    """
    if recipe.level is None:
        raise RecipeError(recipe.path, "no context level: give --level 1, 2 or 3 (or set level: in the recipe)")
    prior: list[PriorMeeting] = []
    results: dict[str, CascadeResult] = {}
    for name in cascade.stage_names:
        cascade.stage(name).start_run(ws, run)
    for meeting in tqdm(ws.scored_meetings, desc=f"{recipe.name} {ws.name}", unit="meeting", disable=not progress):
        seed_everything(run_seed(recipe))
        context = run_context(ws, meeting, recipe.level, prior, recipe.context)
        result = cascade.run(meeting.audio, context, cache, session_id=meeting.id)
        write_json(run.context(meeting.id),
                   {"level": recipe.level, "additions": context.log, "prompt": context.biasing.prompt,
                    "hotwords": context.biasing.hotwords, "notes_context": context.notes.as_dict(),
                    "scored_term_exposure": meeting_exposure(ws, meeting, context)})
        write_stm(run.meeting_file(TRANSCRIPT_STM, meeting.id), [result.transcript])
        write_rttm(run.meeting_file(TURNS_RTTM, meeting.id), [result.speaker_turns])
        write_seglst(run.transcript(meeting.id), [result.transcript])
        for stage in result.record.stages:
            stage.write(result.record, run)
        results[meeting.id] = result
        prior.append(PriorMeeting.of(meeting.id, result.outputs))
    return results


def finish_run(recipe: Recipe, ws: Workspace, run: RunFolder, results: dict[str, CascadeResult],
               elapsed_s: float, llm: Session, cache: StageCache | None = None, executor: str = "local") -> RunResult:
    """Finish a run whose meetings are done: its post-run steps, scores.json, run.json and the report."""
    from speechkit.postrun import run_steps
    from speechkit.report import write_report
    from speechkit.scoring import score_workspace

    run_steps(run, list(recipe.steps.values()), StepJob(ws, RESAMPLES, SEED),
              cache.root / "llm" if cache is not None and cache.root is not None else None)
    used = llm_run.run_summary(recipe, llm)  # fails the run when more LLM requests failed than allowed
    summaries = stage_summaries(results)
    scores = score_workspace(ws, run, out=run.scores)
    stages = cascade_stages(recipe)
    cache_counts = cache.counts([name for stage in stages for name in (stage.name, *stage.caches)]) if cache else None
    write_json(run.run_json, {
        "recipe": recipe.to_dict(), "workspace": {"name": ws.name, "root": str(ws.root)},
        "executor": executor, "packages": package_versions(), "models": model_hashes(recipe),
        "machine": {"platform": platform.platform(), "processor": platform.processor(),
                    "python": platform.python_version()},
        "runtime": runtime_info(recipe),
        "timings": {"total_s": round(elapsed_s, 3),
                    "meetings": {mid: {k: round(v, 3) for k, v in r.timings.items()} for mid, r in results.items()}},
        "cache": cache_counts,
        "stages": summaries,
        **run_summaries(stages, summaries),
        "llm": used,
        "scored_term_exposure": run_exposure({mid: read_json(run.context(mid)).get("scored_term_exposure")
                                              for mid in results}),
    })
    write_report(run)
    return RunResult(run.root, scores, results)


def stage_summaries(results: dict[str, CascadeResult]) -> dict[str, dict[str, dict]]:
    """run.json ``stages``: per stage, per meeting, what its result reports (its ``summary()``;
    left out where empty), e.g. ``stages.correct.<meeting>``: what the corrector did."""
    out: dict[str, dict[str, dict]] = {}
    for mid, result in results.items():
        for stage, summary in result.summaries.items():
            if summary:
                out.setdefault(stage, {})[mid] = summary
    return out


def run_summaries(stages: list, summaries: dict[str, dict[str, dict]]) -> dict[str, Any]:
    """The run.json blocks of the stages that give one (:meth:`~speechkit.core.stage.Stage.run_summary`),
    by stage name, in cascade order."""
    out = {}
    for stage in stages:
        block = stage.run_summary(summaries.get(stage.name, {}))
        if block is not None:
            out[stage.name] = block
    return out


def cascade_stages(recipe: Recipe) -> list:
    """The recipe's stage objects in cascade order (built, no model loaded)."""
    cascade = Cascade(recipe)
    return [cascade.stage(name) for name in cascade.stage_names]


def run_job(recipe: Recipe, job: Job, cascade: Cascade, checked: Preflight, progress: bool = True,
            executor: str = "local") -> RunResult:
    """Run one job whose folders :func:`~speechkit.lifecycle.run_folders` holds: its meetings in
    its LLM session, then :func:`finish_run`."""
    started = time.perf_counter()
    cache = StageCache(job.cache_dir)
    run = RunFolder(job.out)
    with llm_session(cache.root, checked) as session:
        results = run_meetings(recipe, job.workspace, run, cascade, cache, progress)
        return finish_run(recipe, job.workspace, run, results, time.perf_counter() - started, session, cache, executor)


def run_workspace(recipe: Recipe, ws: Workspace, out: str | Path | None = None,
                  cascade: Cascade | None = None, progress: bool = True,
                  cache_dir: str | Path | None = None) -> RunResult:
    """Run ``recipe`` on every meeting of ``ws`` into ``out`` on this machine, then score and report
    (the whole :mod:`~speechkit.lifecycle`: preflight, folders, LLM session, seeds).

    Stage results are cached in ``cache_dir`` (None: ``out/cache``), which other runs may share.
    The run holds the lock of ``out`` throughout (:mod:`speechkit.io.lock`): a second run into the
    same folder meanwhile is refused.
    """
    checked = preflight(recipe)
    job = Job(ws, Path(out) if out else default_out(recipe, ws), Path(cache_dir) if cache_dir is not None else None)
    with run_folders([job]):
        return run_job(recipe, job, cascade or Cascade(recipe), checked, progress)


def model_hashes(recipe: Recipe) -> dict[str, str]:
    """Content hashes of the model files a recipe resolves through the registry (where it can)."""
    from speechkit.registry import model_hash, models_named
    out = {}
    for spec in recipe.stages.values():
        for name in models_named(spec.as_dict()):
            try:
                out[name] = model_hash(name)
            except Exception as exc:  # a hash is informative; never fail a run for it
                out[name] = f"unavailable: {exc}"
    return out
