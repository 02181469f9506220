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
with the run's seed (:func:`run_seed`: the ASR options' ``seed``), and the Whisper backend seeds
CTranslate2's sampling before every decoding call, so the same inputs, recipe and machine give
byte-identical transcripts and scores.
"""
from __future__ import annotations

import importlib.metadata
import logging
import os
import platform
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from speechkit.cache import StageCache
from speechkit.cascade import Cascade, CascadeResult
from speechkit.context import PriorMeeting, build_context
from speechkit.io.atomic import check_output_folder, remove_leftovers, write_json
from speechkit.io.lock import run_folder_lock
from speechkit.io.rttm import write_rttm
from speechkit.io.run_folder import TRANSCRIPT_STM, TURNS_RTTM, RunFolder, default_run
from speechkit.io.seglst import write_seglst
from speechkit.io.stm import write_stm
from speechkit.llm import run as llm_run
from speechkit.recipe import Recipe
from speechkit.workspace import Workspace

log = logging.getLogger(__name__)

PACKAGES = ("speechkit", "torch", "torchaudio", "faster-whisper", "ctranslate2", "pyannote.audio",
            "pyannote.metrics", "speechbrain", "pyctcdecode", "jiwer", "whisper-normalizer", "meeteval",
            "resemblyzer", "silero-vad", "onnxruntime", "numpy")


@dataclass
class RunResult:
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


def run_seed(recipe: Recipe) -> int:
    """The seed of a run's random generators: the ``seed`` option of the first stage that has one
    (the recognizer's; 0 when none has)."""
    seeds = _stage_options(recipe, "seed")
    return int(next(iter(seeds.values()), None) or 0)


def _stage_options(recipe: Recipe, option: str) -> dict[str, Any]:
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


def runtime_info(recipe: Recipe) -> dict:
    """What decides a run's numbers besides its inputs and recipe: device, compute type,
    threads and seeds (run.json ``runtime``)."""
    from speechkit.devices import default_compute_type, resolve_device
    try:
        device = resolve_device(recipe.device)
    except Exception as exc:  # informative only
        device = f"unresolved: {exc}"
    resolved = not device.startswith("unresolved")
    compute = {f"{name}_compute_type": value if value is not None or not resolved else default_compute_type(device)
               for name, value in _stage_options(recipe, "compute_type").items()}  # None: the device's default
    threads: dict = {"cpu_count": os.cpu_count(),
                     **{f"{name}_cpu_threads": value for name, value in _stage_options(recipe, "cpu_threads").items()},
                     **{name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}}
    if "torch" in sys.modules:
        threads["torch"] = sys.modules["torch"].get_num_threads()
    return {"device": device, **compute, "threads": threads,
            "seeds": {"run": run_seed(recipe), **_stage_options(recipe, "seed")}}


def default_out(recipe: Recipe, ws: Workspace) -> Path:
    """The default run folder of a recipe at its level: ``runs/<recipe family>-<workspace>/l<level>``."""
    return default_run(recipe.family, ws.name, recipe.level).root


def run_meetings(recipe: Recipe, ws: Workspace, out: Path, cascade: Cascade, cache: StageCache,
                 progress: bool = True) -> dict[str, CascadeResult]:
    """Run the cascade on each meeting in calendar order, writing its transcripts when it is done.

    Each meeting's L2/L3 context is built from the results of the meetings before it. Enrollment-only
    meetings are skipped: they supplied voice enrollments and are neither run nor scored.
    """
    if recipe.level is None:
        from speechkit.recipe import RecipeError
        raise RecipeError(recipe.path, "no context level: give --level 1, 2 or 3 (or set level: in the recipe)")
    llm_run.start_run(recipe, cache.root / "llm" if cache.root is not None else None)  # probes, before any audio
    run = RunFolder(out)
    prior: list[PriorMeeting] = []
    results: dict[str, CascadeResult] = {}
    for meeting in tqdm(ws.scored_meetings, desc=f"{recipe.name} {ws.name}", unit="meeting", disable=not progress):
        seed_everything(run_seed(recipe))
        context = build_context(ws, meeting, recipe.level, prior, recipe.context)
        result = cascade.run(meeting.audio, context, cache, session_id=meeting.id)
        write_json(run.context(meeting.id),
                   {"level": recipe.level, "additions": context.log, "prompt": context.biasing.prompt,
                    "hotwords": context.biasing.hotwords, "notes_context": context.notes.as_dict()})
        write_stm(run.meeting_file(TRANSCRIPT_STM, meeting.id), [result.transcript])
        write_rttm(run.meeting_file(TURNS_RTTM, meeting.id), [result.speaker_turns])
        write_seglst(run.transcript(meeting.id), [result.transcript])
        for stage in result.record.stages:
            stage.write(result.record, run)
        results[meeting.id] = result
        prior.append(PriorMeeting.of(meeting.id, result.outputs))
    return results


def finish_run(recipe: Recipe, ws: Workspace, out: Path, results: dict[str, CascadeResult],
               elapsed_s: float, cache: StageCache | None = None, executor: str = "local") -> RunResult:
    """Score the transcripts of a run and write scores.json, run.json and the report."""
    from speechkit.report import write_report
    from speechkit.scoring import score_workspace

    if recipe.qa is not None:  # answered before scoring, which reads qa.json
        from speechkit.qa.run import answer_run
        answer_run(ws, out, recipe.qa)
    llm = llm_run.finish_run(recipe)  # fails the run when more LLM requests failed than allowed
    summaries = stage_summaries(results)
    scores = score_workspace(ws, out / "transcripts", out=out / "scores.json")
    stages = cascade_stages(recipe)
    cache_counts = cache.counts([name for stage in stages for name in (stage.name, *stage.caches)]) if cache else None
    write_json(out / "run.json", {
        "recipe": recipe.as_dict(), "workspace": {"name": ws.name, "root": str(ws.root)},
        "executor": executor, "packages": package_versions(), "models": model_hashes(recipe),
        "machine": {"platform": platform.platform(), "processor": platform.processor(),
                    "python": platform.python_version()},
        "runtime": runtime_info(recipe),
        "timings": {"total_s": round(elapsed_s, 3),
                    "meetings": {mid: {k: round(v, 3) for k, v in r.timings.items()} for mid, r in results.items()}},
        "cache": cache_counts,
        "stages": summaries,
        **run_summaries(stages, summaries),
        "llm": llm,
    })
    write_report(out, recipe, ws, scores, results, notice=llm_run.failure_notice(llm), cache=cache_counts)
    return RunResult(out, scores, results)


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


def run_workspace(recipe: Recipe, ws: Workspace, out: str | Path | None = None,
                  cascade: Cascade | None = None, progress: bool = True,
                  cache_dir: str | Path | None = None) -> RunResult:
    """Run ``recipe`` on every meeting of ``ws`` into ``out`` on this machine, then score and report.

    Stage results are cached in ``cache_dir`` (None: ``out/cache``), which other runs may share.
    The run holds the lock of ``out`` throughout (:mod:`speechkit.io.lock`): a second run into the
    same folder meanwhile is refused.
    """
    from speechkit.preflight import check_models
    check_models(recipe)  # every model the recipe names is here, before any audio is read
    out = Path(out) if out else default_out(recipe, ws)
    cache_root = Path(cache_dir) if cache_dir is not None else out / "cache"
    check_output_folder(out)  # the folder the user named first: its error is the one to see
    check_output_folder(cache_root)
    started = time.perf_counter()
    with run_folder_lock(out):
        removed = remove_leftovers(out)
        if removed:
            log.info("removed %d temporary file(s) left by an interrupted run in %s", len(removed), out)
        cache = StageCache(cache_root)
        results = run_meetings(recipe, ws, out, cascade or Cascade(recipe), cache, progress)
        return finish_run(recipe, ws, out, results, time.perf_counter() - started, cache)


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
