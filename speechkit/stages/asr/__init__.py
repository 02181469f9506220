"""Speech recognition: one stage, interchangeable backends.

A recognizer turns 16 kHz mono float32 audio (and optionally the speech regions found by VAD)
into segments whose words carry start, end and confidence. The segments are not yet attributed
to speakers: their ``speaker`` is ``""`` until diarization assigns one.

Backends (``BACKENDS``): ``whisper`` (faster-whisper, :mod:`speechkit.stages.asr.whisper`) and
``ctc`` (a CTC acoustic model decoded by pyctcdecode, :mod:`speechkit.stages.asr.ctc`). The
stage (:class:`AsrStage`) reads the speech of a recording block by block (at most
``block_s`` seconds of speech each, cut in pauses) and hands each block to the backend with the
meeting's :class:`Biasing`. Its result is a :class:`Recognition`: the segments, and the
:class:`DecodeStats` of a backend with loop control (``last_stats`` after each call).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from speechkit.cache import digest
from speechkit.io.seglst import segments_from_rows, segments_to_rows
from speechkit.stages import BackendStage, StageSpec, model_identity
from speechkit.stages.asr.biasing import AsrOptions, Biasing
from speechkit.stages.audio import read_blocks, span_blocks
from speechkit.stages.record import MeetingRecord
from speechkit.transcript import Segment

__all__ = ["AsrOptions", "AsrStage", "Biasing", "DecodeStats", "Recognition", "Recognizer", "build"]

BACKENDS = {
    "whisper": "speechkit.stages.asr.whisper:WhisperRecognizer",
    "ctc": "speechkit.stages.asr.ctc:CTCRecognizer",
}
DEFAULT_BACKEND = "whisper"


@dataclass
class DecodeStats:
    """What a recognizer's loop and hallucination control did (see ``WhisperOptions``).

    ``windows``: decoding windows checked. ``flagged``: windows flagged, by reason (``repeat``,
    ``compression``, ``outside_speech``, ``log_prob``; a window may have several).
    ``flagged_windows``: windows flagged at all. ``redecoded_unbiased``: windows decoded again
    at the first temperature without the prompt and hot words (a window with words outside speech:
    on its speech regions only). ``redecoded_fallback``: windows decoded again at a sampling
    temperature (one per window and temperature tried). ``cleaned``: windows still flagged after
    every re-decode, kept with repeats collapsed and words outside speech dropped.
    ``biased_kept`` / ``biased_dropped``: with :attr:`Biasing.verify_hotwords`, windows whose biased
    decoding was kept (it holds more hot words) / replaced by the unbiased one. ``flagged_spans``: the spans (s) of the flagged windows' clips, which the L2 context never
    learns words from.
    """

    windows: int = 0
    flagged: dict[str, int] = field(default_factory=dict)
    flagged_windows: int = 0
    redecoded_unbiased: int = 0
    redecoded_fallback: int = 0
    cleaned: int = 0
    biased_kept: int = 0
    biased_dropped: int = 0
    flagged_spans: list[tuple[float, float]] = field(default_factory=list)

    COUNTS = ("windows", "flagged_windows", "redecoded_unbiased", "redecoded_fallback", "cleaned",
              "biased_kept", "biased_dropped")

    def flag(self, reasons: list[str], spans: list[tuple[float, float]]) -> None:
        """Count one flagged window with its ``reasons`` and clip ``spans``."""
        self.flagged_windows += 1
        for reason in reasons:
            self.flagged[reason] = self.flagged.get(reason, 0) + 1
        self.flagged_spans += spans

    def add(self, other: "DecodeStats", offset: float = 0.0) -> None:
        """Add ``other``'s counts, its spans moved by ``offset`` seconds."""
        for name in self.COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, n in other.flagged.items():
            self.flagged[reason] = self.flagged.get(reason, 0) + n
        self.flagged_spans += [(s + offset, e + offset) for s, e in other.flagged_spans]

    @property
    def redecodes(self) -> int:
        """Re-decodes of any kind."""
        return self.redecoded_unbiased + self.redecoded_fallback

    def as_dict(self) -> dict[str, Any]:
        return {**{name: getattr(self, name) for name in self.COUNTS}, "flagged": dict(sorted(self.flagged.items())),
                "flagged_spans": [[round(s, 3), round(e, 3)] for s, e in self.flagged_spans]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "DecodeStats":
        return cls(**{name: int(data.get(name, 0)) for name in cls.COUNTS}, flagged=dict(data.get("flagged", {})),
                   flagged_spans=[(float(s), float(e)) for s, e in data.get("flagged_spans", [])])


class Recognition(list):
    """The segments of a recording (a ``list[Segment]``) and the recognizer's :class:`DecodeStats`."""

    def __init__(self, segments: Any = (), stats: DecodeStats | None = None) -> None:
        super().__init__(segments)
        self.stats = stats or DecodeStats()


class Recognizer(Protocol):
    """What every ASR backend provides."""

    options: AsrOptions

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None) -> list[Segment]:
        """Recognise ``audio`` (16 kHz mono float32); ``speech`` limits decoding to those regions (s)."""
        ...


def build(spec: StageSpec, device: str = "auto") -> AsrStage:
    """The ASR stage for a recipe's ``stages.asr``."""
    return AsrStage(spec, device)


class AsrStage(BackendStage[Recognition]):
    """Words of a recording's speech regions, block by block, biased by the meeting's context."""

    name = "asr"

    def cache_key(self, record: MeetingRecord) -> str:
        biasing = record.context.biasing
        return digest(record.keys["vad"], self.spec.as_dict(), model_identity(self.spec.options),
                      self.device, biasing.__dict__ if biasing else None, "recognition/2")

    def run(self, record: MeetingRecord) -> Recognition:
        return self.recognize(record, record.result("vad").regions)

    def recognize(self, record: MeetingRecord, speech: list[tuple[float, float]]) -> Recognition:
        """Words of the ``speech`` regions of ``record``'s audio (what :meth:`run` does with the
        VAD's regions; a benchmark may pass others), with the backend's loop-control counts."""
        biasing = record.context.biasing or None
        out = Recognition()
        blocks = span_blocks(speech, self.spec.options.block_s)
        for (start, _, regions), audio in zip(blocks, record.timed_iter(
                "audio", read_blocks(record.audio, blocks, record.channel))):
            local = [(s - start, e - start) for s, e in regions]
            segments = self.backend.transcribe(audio, speech=local, biasing=biasing)
            out.extend(seg.shifted(start) for seg in segments)
            stats = getattr(self.backend, "last_stats", None)
            if stats is not None:
                out.stats.add(stats, offset=start)
        return out

    def encode(self, result: Recognition) -> dict[str, Any]:
        stats = getattr(result, "stats", None) or DecodeStats()
        return {"segments": segments_to_rows(result), "stats": stats.as_dict()}

    def decode(self, data: dict[str, Any]) -> Recognition:
        return Recognition(segments_from_rows(data["segments"]), DecodeStats.from_dict(data["stats"]))

