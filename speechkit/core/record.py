"""The per-meeting record that every stage reads from and the cascade writes results into.

Besides each stage's result, a record yields the meeting's *outputs*: what the cascade gives the
runner, the run folder and the later meetings' context, folded from the results in cascade order
(:meth:`MeetingRecord.outputs`). Each stage sets or refines some of them
(:meth:`speechkit.core.stage.Stage.outputs`), so that nothing outside the stages names one:

- :data:`TRANSCRIPT`: the speaker-attributed words (named where identification named speakers,
  corrected where a correction ran): a :class:`~speechkit.transcript.Transcript`;
- :data:`TURNS`: who spoke when, without words (what the meeting's RTTM holds);
- :data:`VOICES`: the name (or label) each voice was given -> its centroid;
- :data:`FLAGGED_SPANS`: the spans (s) of decoding the recognizer flagged, which later meetings
  learn nothing from; :data:`NOTES`: the meeting's notes (:class:`~speechkit.notes.Notes`).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from speechkit.cache import StageCache, digest, file_digest
from speechkit.meeting_context import MeetingContext
from speechkit.transcript import Transcript

TRANSCRIPT = "transcript"
TURNS = "turns"
VOICES = "voices"
FLAGGED_SPANS = "flagged_spans"
NOTES = "notes"


class OutputsOf(Protocol):
    """What a record needs of a stage (:class:`speechkit.core.stage.Stage`) to fold its outputs."""

    name: str

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        ...


@dataclass
class MeetingRecord:
    """One recording on its way through the cascade.

    Inputs: ``audio`` (any format :mod:`speechkit.core.audio` reads), ``channel`` (None: the
    mono mix), ``session_id`` (the transcript's session), ``context`` (what the context level
    allows, :class:`speechkit.meeting_context.MeetingContext`), ``num_speakers`` (when the caller
    knows it; see :attr:`speaker_count`), ``cache`` (stage results on disk), ``stages`` (the
    cascade's stage objects in order, whose results make the :meth:`outputs`).

    ``results``: each stage's result by stage name, filled in cascade order (a stage reads
    those it declares with :meth:`result`). ``keys``: the key of each result so far, which later
    stages build their keys on; ``timings``: the seconds spent per stage.
    """

    audio: Path
    context: MeetingContext
    session_id: str = ""
    channel: int | None = None
    num_speakers: int | None = None
    cache: StageCache = field(default_factory=lambda: StageCache(None))
    timings: dict[str, float] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    stages: Sequence[OutputsOf] = ()

    def __post_init__(self) -> None:
        self.audio = Path(self.audio)
        self.session_id = self.session_id or self.audio.stem

    @cached_property
    def audio_key(self) -> str:
        """The identity of the input signal: the file's content hash and the channel."""
        return digest(file_digest(self.audio), self.channel)

    @property
    def speaker_count(self) -> int | None:
        """The number of speakers the diarizer is told: ``num_speakers`` when given, else the
        context's ``expected_speakers`` (L3: the size of the meeting's invite), else None (estimated)."""
        return self.num_speakers if self.num_speakers is not None else self.context.expected_speakers

    def __getstate__(self) -> dict[str, Any]:
        """What a pickle keeps (a Ray worker sends its results to the driver): the inputs, results,
        keys and timings, not the stage objects, which hold loaded models."""
        return {**self.__dict__, "stages": ()}

    def result(self, stage: str) -> Any:
        """The result of an earlier stage; raises if that stage has not run on this record."""
        if stage not in self.results:
            raise RuntimeError(f"stage {stage!r} has not run on {self.audio}")
        return self.results[stage]

    def outputs(self) -> dict[str, Any]:
        """The meeting's outputs so far (see the module docstring): each stage that has run, in
        cascade order, sets or refines them from its result."""
        if self.results and not self.stages:
            raise RuntimeError(f"{self.audio}: a record read back from a pickle has no stages; "
                               "its CascadeResult holds the outputs")
        out: dict[str, Any] = {}
        for stage in self.stages:
            if stage.name in self.results:
                out.update(stage.outputs(self, out))
        return out

    def transcript(self) -> Transcript:
        """The meeting's transcript so far: attributed, named and corrected by the stages that ran."""
        return self.outputs()[TRANSCRIPT]

    def add_time(self, stage: str, seconds: float) -> None:
        """Add ``seconds`` to ``timings[stage]`` (stages may run on two threads at once)."""
        with _TIMINGS_LOCK:
            self.timings[stage] = self.timings.get(stage, 0.0) + seconds

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Add the seconds spent in the block to ``timings[stage]`` (and to this thread's count,
        :func:`seconds_in_this_thread`)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - t0
            self.add_time(stage, seconds)
            spent = _THIS_THREAD.__dict__.setdefault("seconds", {})
            spent[stage] = spent.get(stage, 0.0) + seconds

    def timed_iter(self, stage: str, items: Iterable[Any]) -> Iterator[Any]:
        """``items``, adding the seconds spent producing each to ``timings[stage]``."""
        iterator = iter(items)
        while True:
            with self.timed(stage):
                item = next(iterator, _END)
            if item is _END:
                return
            yield item


_END = object()
_TIMINGS_LOCK = threading.Lock()
_THIS_THREAD = threading.local()


def seconds_in_this_thread(stage: str) -> float:
    """Seconds this thread has spent so far in :meth:`MeetingRecord.timed` blocks of ``stage``
    (any record): what the cascade subtracts from a stage's time for its audio decoding."""
    return _THIS_THREAD.__dict__.get("seconds", {}).get(stage, 0.0)
