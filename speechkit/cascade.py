"""The cascade: the stages of a recipe, in order, cached, timed, on one recording at a time.

A :class:`Cascade` builds each stage of a recipe once (a stage loads its model on first use, so
model weights load once per process and a rerun served from the cache loads none) and runs
them in the order of :data:`speechkit.stages.STAGES` on a
:class:`~speechkit.stages.record.MeetingRecord`::

    from speechkit.cascade import Cascade
    from speechkit.recipe import load_recipe

    cascade = Cascade(load_recipe("whisper"))
    result = cascade.run("meeting.flac")
    for seg in result.transcript.segments:
        print(seg.speaker_name or seg.speaker, seg.text)

The Cascade knows nothing of what a stage does: each stage says whether its result is cached
(its key) and how it is stored (see :mod:`speechkit.stages`). One stage can be run alone on a
record whose earlier results are there (:meth:`Cascade.run_stage`), which is what the Ray
executor and the benchmark do.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speechkit.cache import StageCache
from speechkit.context import MeetingContext
from speechkit.recipe import Recipe
from speechkit.stages import STAGES, Stage, build_stage
from speechkit.stages.record import MeetingRecord
from speechkit.transcript import Transcript


@dataclass
class CascadeResult:
    """One recording's speaker-attributed transcript, its speaker turns (the diarization, named)
    and what the system learnt about its voices."""

    transcript: Transcript
    speakers: dict[str, list[float]]  # the name or label each cluster was given -> its centroid
    names: dict[str, str | None]  # diarization label -> given name (None: left unnamed)
    timings: dict[str, float] = field(default_factory=dict)
    correction: dict[str, Any] = field(default_factory=dict)
    asr: dict[str, Any] = field(default_factory=dict)  # the recognizer's loop control (DecodeStats.as_dict)
    turns: Transcript | None = None  # who spoke when (no words): the RTTM; None: take the transcript's segments

    @classmethod
    def from_record(cls, record: MeetingRecord) -> "CascadeResult":
        """The result of a record every stage has run on."""
        names = record.identify or {}
        centroids = record.result("diarize").centroids
        speakers = {(names.get(label) or label): vec.tolist() for label, vec in centroids.items()}
        stats = getattr(record.asr, "stats", None)
        return cls(record.transcript(), speakers, names, record.timings,
                   record.correct.stats if record.correct else {}, stats.as_dict() if stats else {},
                   record.named_turns())

    @property
    def speaker_turns(self) -> Transcript:
        """Who spoke when: the named diarization turns, or the transcript's segments without them."""
        return self.turns if self.turns is not None else self.transcript


class Cascade:
    """The stages of a recipe, built once and applied to recordings."""

    def __init__(self, recipe: Recipe) -> None:
        self.recipe = recipe
        self._stages: dict[str, Stage] = {}

    @property
    def stage_names(self) -> list[str]:
        """The recipe's stages in the order they run."""
        return [name for name in STAGES if name in self.recipe.stages]

    def stage(self, name: str) -> Stage:
        """The stage object of ``name``, built on first use."""
        if name not in self._stages:
            inputs = {"diarize": self.stage("diarize")} if name == "identify" else {}
            self._stages[name] = build_stage(self.recipe.stages[name], self.recipe.device, **inputs)
        return self._stages[name]

    def record(self, audio_path: str | Path, context: MeetingContext | None = None,
               cache: StageCache | None = None, session_id: str | None = None,
               num_speakers: int | None = None, channel: int | None = None) -> MeetingRecord:
        """A fresh record of one recording (no context: audio only)."""
        return MeetingRecord(Path(audio_path), context or MeetingContext(), session_id or "", channel,
                             num_speakers, cache or StageCache(None))

    def run(self, audio_path: str | Path, context: MeetingContext | None = None,
            cache: StageCache | None = None, session_id: str | None = None,
            num_speakers: int | None = None, channel: int | None = None) -> CascadeResult:
        """Run every stage on one recording with the given context."""
        record = self.record(audio_path, context, cache, session_id, num_speakers, channel)
        for name in self.stage_names:
            self.run_stage(name, record)
        return CascadeResult.from_record(record)

    def run_stage(self, name: str, record: MeetingRecord) -> Any:
        """Run one stage on ``record`` (whose earlier results it reads), through the cache, and
        store its result on the record. ``record.timings[name]`` gets the seconds it took, less
        the audio decoding it did (counted under ``audio``)."""
        stage = self.stage(name)
        audio_before = record.timings.get("audio", 0.0)
        started = time.perf_counter()
        key = stage.cache_key(record)
        if key is None:
            result = stage.run(record)
        else:
            result = stage.decode(record.cache.get_or_compute(name, key, lambda: stage.encode(stage.run(record))))
        elapsed = time.perf_counter() - started - (record.timings.get("audio", 0.0) - audio_before)
        record.timings[name] = record.timings.get(name, 0.0) + elapsed
        record.keys[name] = key
        setattr(record, name, result)
        return result
