"""The cascade: the stages of a recipe, in order, cached, timed, on one recording at a time.

A :class:`Cascade` builds each stage of a recipe once (a stage loads its model on first use, so
model weights load once per process and a rerun served from the cache loads none) and runs
them in the order of :data:`speechkit.stages.STAGES` on a
:class:`~speechkit.core.record.MeetingRecord`::

    from speechkit.cascade import Cascade
    from speechkit.recipe import load_recipe

    cascade = Cascade(load_recipe("whisper"))
    result = cascade.run("meeting.flac")
    for seg in result.transcript.segments:
        print(seg.speaker_name or seg.speaker, seg.text)

The Cascade knows nothing of what a stage does: each stage declares what it reads, and the
Cascade keys every result from that (:func:`speechkit.stages.stage_key`), serves stored results
from the stage cache and stores new ones (see :mod:`speechkit.stages`). One stage can be run
alone on a record whose earlier results are there (:meth:`Cascade.run_stage`), which is what the
Ray executor and the benchmark do.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from speechkit.cache import StageCache
from speechkit.core.record import NOTES, TRANSCRIPT, TURNS, VOICES, MeetingRecord, seconds_in_this_thread
from speechkit.core.stage import Stage, stage_key
from speechkit.meeting_context import MeetingContext
from speechkit.notes import Notes
from speechkit.recipe import Recipe
from speechkit.stages import STAGES, build_stage
from speechkit.transcript import Transcript


@dataclass
class CascadeResult:
    """One recording's outputs (:mod:`speechkit.core.record`: its speaker-attributed transcript,
    its speaker turns, the voices the system learnt, what later meetings learn from), the record
    they come from, and what its stages report for run.json."""

    record: MeetingRecord
    outputs: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)  # stage -> its result's summary()

    @classmethod
    def from_record(cls, record: MeetingRecord) -> CascadeResult:
        """The result of a record every stage has run on."""
        summaries = {name: result.summary() for name, result in record.results.items() if hasattr(result, "summary")}
        return cls(record, record.outputs(), record.timings, summaries)

    @property
    def transcript(self) -> Transcript:
        """The speaker-attributed words, named and corrected where the stages did."""
        return self.outputs[TRANSCRIPT]

    @property
    def speaker_turns(self) -> Transcript:
        """Who spoke when: the named diarization turns, or the transcript's segments without them."""
        return self.outputs.get(TURNS, self.transcript)

    @property
    def speakers(self) -> dict[str, list[float]]:
        """The name or label each voice was given -> its centroid."""
        return self.outputs.get(VOICES, {})

    @property
    def notes(self) -> Notes | None:
        """The meeting's notes (None: the recipe takes none)."""
        return self.outputs.get(NOTES)


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
        """The stage object of ``name``, built on first use with the stages that run before it
        (it keeps those it reads)."""
        if name not in self._stages:
            names = self.stage_names
            earlier = {n: self.stage(n) for n in names[:names.index(name)]}
            self._stages[name] = build_stage(self.recipe.stages[name], self.recipe.device, earlier)
        return self._stages[name]

    def record(self, audio_path: str | Path, context: MeetingContext | None = None,
               cache: StageCache | None = None, session_id: str | None = None,
               num_speakers: int | None = None, channel: int | None = None) -> MeetingRecord:
        """A fresh record of one recording (no context: audio only)."""
        return MeetingRecord(Path(audio_path), context or MeetingContext(), session_id or "", channel,
                             num_speakers, cache or StageCache(None),
                             stages=[self.stage(name) for name in self.stage_names])

    def run(self, audio_path: str | Path, context: MeetingContext | None = None,
            cache: StageCache | None = None, session_id: str | None = None,
            num_speakers: int | None = None, channel: int | None = None) -> CascadeResult:
        """Run every stage on one recording with the given context."""
        record = self.record(audio_path, context, cache, session_id, num_speakers, channel)
        self.run_stages(record)
        return CascadeResult.from_record(record)

    def run_stages(self, record: MeetingRecord) -> None:
        """Run every stage on ``record``, in order on this thread, except that while a stage runs,
        the later stages that read neither it nor a stage waiting for it run beside it on a helper
        thread (:meth:`beside`: diarization and identification beside the ASR, on the cores its
        decoding leaves idle). Each stage reads only finished results, so the results are those
        of running the stages one after another; the stage timings then overlap."""
        pending = self.stage_names
        while pending:
            name = pending.pop(0)
            side = self.beside(name, pending)
            pending = [n for n in pending if n not in side]
            helper = _Helper([partial(self.run_stage, n, record) for n in side]) if side else None
            try:
                self.run_stage(name, record)
            except Exception:
                if helper is not None:
                    helper.join()  # its stages finish (or fail) before the error is reported
                raise
            if helper is not None:
                helper.result()

    def beside(self, name: str, later: list[str]) -> list[str]:
        """The stages of ``later`` (in cascade order) that read neither stage ``name`` nor, through
        the stages they read, any stage of ``later`` that does: they can run while ``name`` runs."""
        waiting, side = {name}, []
        for other in later:
            if waiting.intersection(self.stage(other).reads):
                waiting.add(other)
            else:
                side.append(other)
        return side

    def run_stage(self, name: str, record: MeetingRecord) -> Any:
        """Run one stage on ``record`` (whose earlier results it reads): key its result, take a
        stored result from the cache or compute it (and store it when the stage's results are
        stored), and put it on the record. ``record.timings[name]`` gets the seconds it took,
        less the audio decoding it did (counted under ``audio``)."""
        stage = self.stage(name)
        audio_before = seconds_in_this_thread("audio")
        started = time.perf_counter()
        key = stage_key(stage, record)
        if stage.stored:
            result = stage.result_type.from_dict(
                record.cache.get_or_compute(name, key, lambda: stage.run(record).to_dict()))
        else:
            result = stage.run(record)
        elapsed = time.perf_counter() - started - (seconds_in_this_thread("audio") - audio_before)
        record.add_time(name, elapsed)
        record.keys[name] = key
        record.results[name] = result
        return result


class _Helper(threading.Thread):
    """Calls run one after another on a daemon thread, started at once (a Ctrl-C, which the
    main thread gets, does not wait for them); :meth:`result` waits and re-raises what they raised."""

    def __init__(self, calls: list[Callable[[], Any]]) -> None:
        super().__init__(name="speechkit-stages-beside", daemon=True)
        self.calls = calls
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            for call in self.calls:
                call()
        except BaseException as exc:  # re-raised on the main thread by result()
            self.error = exc

    def result(self) -> None:
        self.join()
        if self.error is not None:
            raise self.error
