"""The per-meeting record that every stage reads from and the cascade writes results into."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speechkit.cache import StageCache, digest, file_digest
from speechkit.transcript import Segment, Transcript, name_segments

if TYPE_CHECKING:
    from speechkit.meeting_context import MeetingContext
    from speechkit.stages.asr import Recognition
    from speechkit.stages.correct import Correction
    from speechkit.stages.diarize import Diarization
    from speechkit.stages.summarize import MeetingNotes
    from speechkit.stages.vad import Speech


@dataclass
class MeetingRecord:
    """One recording on its way through the cascade.

    Inputs: ``audio`` (any format :mod:`speechkit.stages.audio` reads), ``channel`` (None: the
    mono mix), ``session_id`` (the transcript's session), ``context`` (what the context level
    allows, :class:`speechkit.meeting_context.MeetingContext`), ``num_speakers`` (when the caller
    knows it; see :attr:`speaker_count`), ``cache`` (stage results on disk).

    ``results``: each stage's result by stage name, filled in cascade order (read them with
    :meth:`result` or the typed accessors: :attr:`speech`, :attr:`recognition`,
    :attr:`diarization`, :attr:`attributed`, :attr:`names`, :attr:`correction`, :attr:`notes`). ``keys``: the
    key of each result so far, which later stages build their keys on; ``timings``: the
    seconds spent per stage.
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

    def result(self, stage: str) -> Any:
        """The result of an earlier stage; raises if that stage has not run on this record."""
        if stage not in self.results:
            raise RuntimeError(f"stage {stage!r} has not run on {self.audio}")
        return self.results[stage]

    @property
    def speech(self) -> Speech:
        """The VAD's speech regions and level."""
        return self.result("vad")

    @property
    def recognition(self) -> Recognition:
        """The ASR's segments (timed words, no speakers) and its decoding statistics."""
        return self.result("asr")

    @property
    def diarization(self) -> Diarization:
        """The diarization's speaker turns and centroids."""
        return self.result("diarize")

    @property
    def attributed(self) -> list[Segment]:
        """The ASR words re-cut into segments carrying the diarization's speaker labels."""
        return self.result("attribute")

    @property
    def names(self) -> dict[str, str | None]:
        """Diarization label -> the name identification gave (None: unnamed); empty before it runs."""
        return self.results.get("identify") or {}

    @property
    def correction(self) -> Correction | None:
        """The correction stage's result (None: the recipe corrects nothing)."""
        return self.results.get("correct")

    @property
    def notes(self) -> MeetingNotes | None:
        """The summarize stage's result: the meeting's notes (None: the recipe takes none)."""
        return self.results.get("summarize")

    def named_transcript(self) -> Transcript:
        """The attributed segments with the names identification gave (before correction)."""
        return Transcript(self.session_id, name_segments(self.attributed, self.names))

    def named_turns(self) -> Transcript:
        """The diarization's speaker turns (who spoke when, no words), each carrying the name
        identification gave its speaker: what the meeting's RTTM holds."""
        return Transcript(self.session_id, name_segments(self.diarization.turns, self.names), has_words=False)

    def transcript(self) -> Transcript:
        """The meeting's final transcript: corrected when the correction stage ran."""
        correction = self.correction
        return correction.transcript if correction is not None else self.named_transcript()

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
