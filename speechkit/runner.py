"""Run a recipe over every meeting of a workspace, in calendar order, and score it.

Run folder layout (``OUT``)::

    transcripts/<meeting>.json   SegLST (speaker, speaker_name, word_times)
    transcripts/<meeting>.stm    STM
    transcripts/<meeting>.rttm   RTTM
    cache/<stage>/<key>.json     stage results; a rerun reuses them
    context/<meeting>.json       what the context builder added (sizes, budgets)
    scores.json                  see docs/scores-schema.md
    report.md, report.html       tables and plots
    run.json                     recipe, package versions, model hashes, timings

Every file is written atomically, and a meeting's transcripts are written only when the meeting
is finished, so an interrupted run loses nothing that was done and the rerun resumes. A process
killed during a write can leave its temporary file (``.NAME.*.tmp``) behind; the next run into
the folder deletes such leftovers before it starts.
"""
from __future__ import annotations

import importlib.metadata
import logging
import platform
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from speechkit.cache import StageCache
from speechkit.cascade import Cascade, CascadeResult
from speechkit.context import PriorMeeting, build_context
from speechkit.io.atomic import remove_leftovers, write_json
from speechkit.io.rttm import write_rttm
from speechkit.io.seglst import write_seglst
from speechkit.io.stm import write_stm
from speechkit.recipe import Recipe
from speechkit.workspace import Workspace

log = logging.getLogger(__name__)

PACKAGES = ("speechkit", "torch", "torchaudio", "faster-whisper", "ctranslate2", "pyannote.audio",
            "pyannote.metrics", "speechbrain", "pyctcdecode", "jiwer", "whisper-normalizer", "meeteval",
            "resemblyzer", "silero-vad", "numpy")


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


def default_out(recipe: Recipe, ws: Workspace) -> Path:
    return Path("runs") / f"{recipe.name}-{ws.name}"


def run_meetings(recipe: Recipe, ws: Workspace, out: Path, cascade: Cascade, cache: StageCache,
                 progress: bool = True) -> dict[str, CascadeResult]:
    """Run the cascade on each meeting in calendar order, writing its transcripts when it is done.

    Each meeting's L2/L3 context is built from the results of the meetings before it.
    """
    prior: list[PriorMeeting] = []
    results: dict[str, CascadeResult] = {}
    for meeting in tqdm(ws.meetings, desc=f"{recipe.name} {ws.name}", unit="meeting", disable=not progress):
        context = build_context(ws, meeting, recipe.level, prior, recipe.context)
        result = cascade.run(meeting.audio, context, cache, session_id=meeting.id)
        write_json(out / "context" / f"{meeting.id}.json", {"level": recipe.level, "additions": context.log,
                                                           "prompt": context.biasing.prompt,
                                                           "hotwords": context.biasing.hotwords})
        transcripts = out / "transcripts"
        write_stm(transcripts / f"{meeting.id}.stm", [result.transcript])
        write_rttm(transcripts / f"{meeting.id}.rttm", [result.transcript])
        write_seglst(transcripts / f"{meeting.id}.json", [result.transcript])
        results[meeting.id] = result
        prior.append(PriorMeeting(meeting.id, result.transcript, result.speakers))
    return results


def finish_run(recipe: Recipe, ws: Workspace, out: Path, results: dict[str, CascadeResult],
               elapsed_s: float, cache: StageCache | None = None, executor: str = "local") -> RunResult:
    """Score the transcripts of a run and write scores.json, run.json and the report."""
    from speechkit.report import write_report
    from speechkit.scoring import score_workspace

    scores = score_workspace(ws, out / "transcripts", out=out / "scores.json")
    write_json(out / "run.json", {
        "recipe": recipe.as_dict(), "workspace": {"name": ws.name, "root": str(ws.root)},
        "executor": executor, "packages": package_versions(), "models": model_hashes(recipe),
        "machine": {"platform": platform.platform(), "processor": platform.processor(),
                    "python": platform.python_version()},
        "timings": {"total_s": round(elapsed_s, 3),
                    "meetings": {mid: {k: round(v, 3) for k, v in r.timings.items()} for mid, r in results.items()}},
        "cache": {"hits": cache.hits, "misses": cache.misses} if cache else None,
        "correction": {mid: r.correction for mid, r in results.items() if r.correction},
    })
    write_report(out, recipe, ws, scores, results)
    return RunResult(out, scores, results)


def run_workspace(recipe: Recipe, ws: Workspace, out: str | Path | None = None,
                  cascade: Cascade | None = None, progress: bool = True) -> RunResult:
    """Run ``recipe`` on every meeting of ``ws`` into ``out`` on this machine, then score and report."""
    out = Path(out) if out else default_out(recipe, ws)
    started = time.perf_counter()
    removed = remove_leftovers(out)
    if removed:
        log.info("removed %d temporary file(s) left by an interrupted run in %s", len(removed), out)
    cache = StageCache(out / "cache")
    results = run_meetings(recipe, ws, out, cascade or Cascade(recipe), cache, progress)
    return finish_run(recipe, ws, out, results, time.perf_counter() - started, cache)


def model_hashes(recipe: Recipe) -> dict[str, str]:
    """Content hashes of the model files a recipe resolves through the registry (where it can)."""
    from speechkit.registry import model_hash
    out = {}
    for stage in ("vad", "asr"):
        options = recipe.stage(stage) or {}
        name = options.get("model")
        if isinstance(name, str):
            try:
                out[name] = model_hash(name)
            except Exception as exc:  # a hash is informative; never fail a run for it
                out[name] = f"unavailable: {exc}"
    return out
