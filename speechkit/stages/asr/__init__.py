"""Speech recognition: one stage, interchangeable backends.

A recognizer turns 16 kHz mono float32 audio (and optionally the speech regions found by VAD)
into segments whose words carry start, end and confidence. The segments are not yet attributed
to speakers: their ``speaker`` is ``""`` until diarization assigns one.

Backends (``BACKENDS``): ``whisper`` (faster-whisper, :mod:`speechkit.stages.asr.whisper`),
``ctc`` (a CTC acoustic model decoded by pyctcdecode, :mod:`speechkit.stages.asr.ctc`),
``api`` (an OpenAI-compatible transcription endpoint, :mod:`speechkit.stages.asr.api`) and
``chat`` (an audio-in chat model that returns speaker-tagged segments,
:mod:`speechkit.stages.asr.chat`). The
stage (:class:`AsrStage`) reads the speech of a recording block by block (at most
``block_s`` seconds of speech each, cut in pauses) and hands each block to the backend with the
meeting's :class:`Biasing`, and with what else of the context the backend class declares in
its ``context_fields`` (``api``: the ``enrollments``, its diarizing model's known speakers).
Its result is a :class:`Recognition`: the segments, and the :class:`DecodeStats` of a backend
with loop control, which every ``transcribe`` call returns with its segments.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, Protocol

import numpy as np

from speechkit.cache import file_digest
from speechkit.core.audio import read_blocks, span_blocks
from speechkit.core.record import FLAGGED_SPANS, MeetingRecord
from speechkit.core.section import Section
from speechkit.core.stage import BackendStage, Spec, Stage, model_identity, registered_class
from speechkit.io.seglst import segments_from_rows, segments_to_rows
from speechkit.stages.asr.biasing import AsrOptions, Biasing
from speechkit.stages.asr.loop_control import DecodeStats
from speechkit.stages.asr.report import loop_control

__all__ = ["AsrOptions", "AsrStage", "Biasing", "DecodeStats", "Recognition", "Recognizer", "build"]

BACKENDS = {
    "whisper": "speechkit.stages.asr.whisper:WhisperRecognizer",
    "ctc": "speechkit.stages.asr.ctc:CTCRecognizer",
    "api": "speechkit.stages.asr.api:ApiRecognizer",
    "chat": "speechkit.stages.asr.chat:ChatTranscriber",
}
DEFAULT_BACKEND = "whisper"
SECTIONS = (Section(100, loop_control),)


class Recognition(list):
    """The segments of a recording (a ``list[Segment]``) and the recognizer's :class:`DecodeStats`."""

    def __init__(self, segments: Any = (), stats: DecodeStats | None = None) -> None:
        super().__init__(segments)
        self.stats = stats or DecodeStats()

    def to_dict(self) -> dict[str, Any]:
        return {"segments": segments_to_rows(self), "stats": self.stats.as_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Recognition:
        return cls(segments_from_rows(data["segments"]), DecodeStats.from_dict(data["stats"]))

    def summary(self) -> dict[str, Any]:
        """What run.json records of it: the loop control's counts and flagged spans."""
        return self.stats.as_dict()


class Recognizer(Protocol):
    """What every ASR backend provides."""

    options: AsrOptions

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None) -> Recognition:
        """Recognise ``audio`` (16 kHz mono float32); ``speech`` limits decoding to those regions (s).
        The segments come with the loop control's counts (empty for a backend without one)."""
        ...


def build(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> AsrStage:
    """The ASR stage for a recipe's ``stages.asr``."""
    return AsrStage(spec, device, reads)


class AsrStage(BackendStage[Recognition]):
    """Words of a recording's speech regions, block by block, biased by the meeting's context."""

    name = "asr"
    backends = BACKENDS
    # 2: word pieces joined ("$45" ",000" -> "$45,000"); L2 verifies only windows with a hot word
    # 3: batched decoding leaves the pauses between speech regions out of its windows
    # 4: speech no decoded word covers is decoded again on its own (missed_speech_s)
    version = 4
    reads = ("vad",)
    reads_audio = True
    context_fields = ("biasing",)
    stored = True
    result_type = Recognition

    def __init__(self, spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
        super().__init__(spec, device, reads)
        #: The context fields the backend takes besides the biasing (handed to ``transcribe`` by name).
        self.backend_fields: tuple[str, ...] = getattr(
            registered_class(self.backends, spec.backend, "stages.asr.backend"), "context_fields", ())
        self.context_fields = ("biasing", *self.backend_fields)

    def identity(self) -> Any:
        """The model's identity and the device it decodes on (which picks the compute type)."""
        return [model_identity(self.spec.options), self.device]

    def extra_inputs(self, record: MeetingRecord) -> Any:
        """The meeting's biasing (prompt, hot words, LM text), and the enrollment clips' content
        when the backend takes them."""
        biasing = asdict(record.context.biasing) if record.context.biasing else None
        if "enrollments" not in self.backend_fields:
            return biasing
        return {"biasing": biasing, "enrollments": {name: [file_digest(c) for c in clips]
                                                    for name, clips in record.context.enrollments.items()}}

    def run(self, record: MeetingRecord) -> Recognition:
        return self.recognize(record, record.result("vad").regions)

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        """The spans of the windows the loop control flagged (later meetings learn nothing there)."""
        return {FLAGGED_SPANS: [tuple(span) for span in record.result(self.name).summary()["flagged_spans"]]}

    def run_summary(self, summaries: Mapping[str, Any]) -> dict[str, Any]:
        """run.json ``asr``: the loop control per meeting (windows checked, flagged by reason,
        re-decodes, cleaned) and summed over the run."""
        total = DecodeStats()
        meetings = {}
        for mid, summary in summaries.items():
            stats = DecodeStats.from_dict(summary or {})
            total.add(stats)
            meetings[mid] = {k: v for k, v in stats.as_dict().items() if k != "flagged_spans"}
        return {"total": {k: v for k, v in total.as_dict().items() if k != "flagged_spans"}, "meetings": meetings}

    def recognize(self, record: MeetingRecord, speech: list[tuple[float, float]]) -> Recognition:
        """Words of the ``speech`` regions of ``record``'s audio (what :meth:`run` does with the
        VAD's regions; a benchmark may pass others), with the backend's loop-control counts."""
        biasing = record.context.biasing or None
        extra = {name: getattr(record.context, name) for name in self.backend_fields}
        out = Recognition()
        blocks = span_blocks(speech, self.spec.options.block_s)
        for (start, _, regions), audio in zip(blocks, record.timed_iter(
                "audio", read_blocks(record.audio, blocks, record.channel))):
            local = [(s - start, e - start) for s, e in regions]
            recognition = self.backend.transcribe(audio, speech=local, biasing=biasing, **extra)
            out.extend(seg.shifted(start) for seg in recognition)
            out.stats.add(recognition.stats, offset=start)
        return out

