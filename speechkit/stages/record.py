"""The per-meeting record that every stage reads from and the cascade writes results into."""
from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speechkit.cache import StageCache, digest, file_digest
from speechkit.transcript import Transcript

if TYPE_CHECKING:
    from speechkit.context import MeetingContext
    from speechkit.stages.correct import Correction
    from speechkit.stages.diarize import Diarization
    from speechkit.stages.vad import Speech
    from speechkit.transcript import Segment


@dataclass
class MeetingRecord:
    """One recording on its way through the cascade.

    Inputs: ``audio`` (any format :mod:`speechkit.stages.audio` reads), ``channel`` (None: the
    mono mix), ``session_id`` (the transcript's session), ``context`` (what the context level
    allows, :class:`speechkit.context.MeetingContext`), ``num_speakers`` (when known),
    ``cache`` (stage results on disk).

    Results, one attribute per stage, filled in cascade order: ``vad`` (speech regions and the
    recording's level), ``asr`` (segments with timed words, no speakers), ``diarize``
    (speaker turns and a centroid per speaker), ``attribute`` (the words re-cut by speaker),
    ``identify`` (diarization label -> name, None where unnamed), ``correct`` (the corrected
    transcript and what the corrector did). ``keys`` holds the cache key of each result so far,
    which later stages build their keys on; ``timings`` the seconds spent per stage.
    """

    audio: Path
    context: MeetingContext
    session_id: str = ""
    channel: int | None = None
    num_speakers: int | None = None
    cache: StageCache = field(default_factory=lambda: StageCache(None))
    timings: dict[str, float] = field(default_factory=dict)
    keys: dict[str, str | None] = field(default_factory=dict)
    vad: Speech | None = None
    asr: list[Segment] | None = None
    diarize: Diarization | None = None
    attribute: list[Segment] | None = None
    identify: dict[str, str | None] | None = None
    correct: Correction | None = None

    def __post_init__(self) -> None:
        self.audio = Path(self.audio)
        self.session_id = self.session_id or self.audio.stem

    @cached_property
    def audio_key(self) -> str:
        """The identity of the input signal: the file's content hash and the channel."""
        return digest(file_digest(self.audio), self.channel)

    def named_transcript(self) -> Transcript:
        """The attributed segments with the names identification gave (before correction)."""
        from speechkit.stages.attribute import name_segments
        return Transcript(self.session_id, name_segments(self.result("attribute"), self.identify or {}))

    def named_turns(self) -> Transcript:
        """The diarization's speaker turns (who spoke when, no words), each carrying the name
        identification gave its speaker: what the meeting's RTTM holds."""
        from speechkit.stages.attribute import name_segments
        return Transcript(self.session_id, name_segments(self.result("diarize").turns, self.identify or {}),
                          has_words=False)

    def transcript(self) -> Transcript:
        """The meeting's final transcript: corrected when the correction stage ran."""
        return self.correct.transcript if self.correct is not None else self.named_transcript()

    def result(self, stage: str) -> Any:
        """The result of an earlier stage; raises if that stage has not run on this record."""
        value = getattr(self, stage)
        if value is None:
            raise RuntimeError(f"stage {stage!r} has not run on {self.audio}")
        return value

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Add the seconds spent in the block to ``timings[stage]``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - t0

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
