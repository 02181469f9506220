"""Diarization error rate (DER) and Jaccard error rate (JER) through pyannote.metrics.

The collar is given in seconds on each side of every reference boundary (NIST style, default
0.25 s); pyannote's ``collar`` is the total width, so it receives twice that. Overlapped speech
is scored (``skip_overlap=False``). The scored region is the extent of reference and hypothesis
speech together, as pyannote approximates it without a UEM.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from speechkit.metrics.bootstrap import Ratio
from speechkit.transcript import Transcript

COLLAR = 0.25


def to_annotation(transcript: Transcript) -> Any:
    """A pyannote ``Annotation`` of the speaker turns of ``transcript`` (empty turns dropped)."""
    from pyannote.core import Annotation, Segment

    annotation = Annotation(uri=transcript.session_id)
    for i, seg in enumerate(transcript.segments):
        if seg.end > seg.start:
            annotation[Segment(seg.start, seg.end), i] = seg.speaker
    return annotation


@dataclass(frozen=True)
class DiarizationResult:
    """pyannote's DER components (seconds) and the JER of one meeting."""

    total: float
    confusion: float
    missed: float
    false_alarm: float
    correct: float
    jer: float | None
    collar: float

    @property
    def der(self) -> Ratio:
        """(confusion + missed detection + false alarm) over total reference speech."""
        return Ratio(self.confusion + self.missed + self.false_alarm, self.total)

    @property
    def jer_ratio(self) -> Ratio:
        """The meeting's JER as ``jer / 1`` (aggregated as a mean over meetings); 0/0 without reference speech."""
        return Ratio(self.jer, 1.0) if self.jer is not None else Ratio(0.0, 0.0)

    def details(self) -> dict[str, Any]:
        return {"collar_s": self.collar, "total_s": self.total, "confusion_s": self.confusion,
                "missed_detection_s": self.missed, "false_alarm_s": self.false_alarm,
                "correct_s": self.correct, "jer": self.jer}


def diarization_errors(reference: Transcript, hypothesis: Transcript, collar: float = COLLAR) -> DiarizationResult:
    """DER components and JER of ``hypothesis`` speaker turns against ``reference`` turns.

    ``collar`` is in seconds on each side of a reference boundary. JER is None when the
    reference has no speech.
    """
    from pyannote.core import Timeline
    from pyannote.metrics.diarization import DiarizationErrorRate, JaccardErrorRate

    ref, hyp = to_annotation(reference), to_annotation(hypothesis)
    speech = ref.get_timeline(copy=False).union(hyp.get_timeline(copy=False))
    if not speech:
        return DiarizationResult(0.0, 0.0, 0.0, 0.0, 0.0, None, collar)
    uem = Timeline([speech.extent()])
    options = {"collar": 2 * collar, "skip_overlap": False}
    c = DiarizationErrorRate(**options)(ref, hyp, uem=uem, detailed=True)
    jer = JaccardErrorRate(**options)(ref, hyp, uem=uem) if ref.labels() else None
    return DiarizationResult(c["total"], c["confusion"], c["missed detection"], c["false alarm"],
                             c["correct"], jer, collar)
