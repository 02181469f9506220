"""Speaker-attributed WER through meeteval: cpWER and time-constrained tcpWER.

Every segment's text goes through the shared normaliser first. tcpWER uses meeteval's default
pseudo word timings (reference: character based over the segment span, hypothesis: character
based points) and a collar, in seconds on each side of each hypothesis word (default 5 s).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from speechkit.metrics.bootstrap import Ratio
from speechkit.metrics.normalize import normalize
from speechkit.transcript import Transcript

TCP_COLLAR = 5.0


def to_seglst(transcript: Transcript, session_id: str | None = None) -> list[dict[str, Any]]:
    """meeteval SegLST dicts for ``transcript``, words normalised, speakers as labels.

    ``session_id`` replaces the transcript's own: meeteval insists that reference and hypothesis
    share it, and the two sides of one meeting are paired by the caller, not by their ids.
    """
    sid = transcript.session_id if session_id is None else session_id
    return [{"session_id": sid, "speaker": s.speaker, "start_time": s.start,
             "end_time": s.end, "words": normalize(s.text)} for s in transcript.segments]


@dataclass(frozen=True)
class CpWerResult:
    """meeteval's error counts for one meeting and the reference -> hypothesis speaker assignment."""

    errors: int
    length: int
    substitutions: int
    deletions: int
    insertions: int
    missed_speakers: int
    false_alarm_speakers: int
    assignment: tuple[tuple[str | None, str | None], ...]

    @property
    def ratio(self) -> Ratio:
        return Ratio(self.errors, self.length)

    def details(self) -> dict[str, Any]:
        return {"errors": self.errors, "length": self.length, "substitutions": self.substitutions,
                "deletions": self.deletions, "insertions": self.insertions,
                "missed_speakers": self.missed_speakers, "false_alarm_speakers": self.false_alarm_speakers,
                "assignment": [list(a) for a in self.assignment]}


def _result(er: Any) -> CpWerResult:
    return CpWerResult(er.errors, er.length, er.substitutions, er.deletions, er.insertions,
                       er.missed_speaker, er.falarm_speaker, tuple(tuple(a) for a in er.assignment))


def cpwer(reference: Transcript, hypothesis: Transcript) -> CpWerResult:
    """Concatenated minimum-permutation WER of one meeting."""
    from meeteval.io import SegLST
    from meeteval.wer.wer.cp import cp_word_error_rate

    sid = reference.session_id
    return _result(cp_word_error_rate(SegLST(to_seglst(reference, sid)), SegLST(to_seglst(hypothesis, sid))))


def tcpwer(reference: Transcript, hypothesis: Transcript, collar: float = TCP_COLLAR) -> CpWerResult:
    """Time-constrained minimum-permutation WER of one meeting (``collar`` in seconds)."""
    from meeteval.io import SegLST
    from meeteval.wer.wer.time_constrained import time_constrained_minimum_permutation_word_error_rate

    sid = reference.session_id
    return _result(time_constrained_minimum_permutation_word_error_rate(
        SegLST(to_seglst(reference, sid)), SegLST(to_seglst(hypothesis, sid)), collar=collar))
