"""The ``transcribed`` diarization backend: the speaker labels a diarizing transcription server
gave the ASR result's segments.

With ``asr: {backend: api, transcript_format: diarized_json}`` (:mod:`speechkit.stages.asr.api`)
each ASR segment carries the label the server gave it (``A``, ``B``, ... or, for a person the
meeting's enrollments named to it, that person's name). This backend makes them the meeting's
diarization: the labels become ``SPEAKER_00``, ``SPEAKER_01``, ... in order of first
appearance, a label's consecutive segments closer than ``merge_gap_s`` one turn, and a label
that is the name of a person enrolled for the meeting goes into :attr:`Diarization.names`,
which identification's ``given`` backend names the speaker by. It computes no voice prints
(no centroids, no embedder), so identification by voice (``cosine``) cannot follow it.
"""
from __future__ import annotations

from dataclasses import dataclass

from speechkit.core.options import StageOptions, bounded
from speechkit.core.record import MeetingRecord
from speechkit.errors import SpeechkitError
from speechkit.stages.diarize import Diarization, speaker_label
from speechkit.transcript import Segment


@dataclass(frozen=True)
class TranscribedOptions(StageOptions):
    """Options of the ``transcribed`` backend.

    ``merge_gap_s``: consecutive segments of one speaker at most this far apart (s) make one turn.
    """

    merge_gap_s: float = bounded(0.5, ge=0.0, le=60.0)


class TranscribedDiarizer:
    """The ``transcribed`` backend: the ASR result's speaker labels as turns."""

    Options = TranscribedOptions
    #: It reads the ASR result, and the enrollments' names (the names a server may give).
    reads = ("asr",)
    context_fields = ("enrollments",)
    embedder = None

    def __init__(self, options: TranscribedOptions | None = None, device: str = "auto") -> None:
        self.options = options or TranscribedOptions()

    def diarize(self, record: MeetingRecord) -> Diarization:
        """The turns of ``record``'s ASR segments by their labels; raises :class:`SpeechkitError`
        when the ASR backend labelled none of its segments."""
        segments = sorted(record.result("asr"), key=lambda s: (s.start, s.end))
        if any(not s.speaker for s in segments):
            raise SpeechkitError(f"{record.audio}: the ASR result has segments without a speaker label: the "
                                 "transcribed diarization backend needs a diarizing ASR backend "
                                 "(asr: {backend: api, transcript_format: diarized_json})")
        labels: dict[str, str] = {}
        turns: list[Segment] = []
        for seg in segments:
            label = labels.setdefault(seg.speaker, speaker_label(len(labels)))
            if turns and turns[-1].speaker == label and seg.start - turns[-1].end <= self.options.merge_gap_s:
                turns[-1] = Segment(turns[-1].start, max(turns[-1].end, seg.end), label)
            else:
                turns.append(Segment(seg.start, seg.end, label))
        enrolled = set(record.context.enrollments)
        return Diarization(turns, names={label: raw for raw, label in labels.items() if raw in enrolled})
