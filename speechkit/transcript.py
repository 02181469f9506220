"""Transcript records: words with times, segments with speakers, one transcript per meeting.

The same types hold references (speaker = person id, speaker_name = the person's name) and
hypotheses (speaker = a diarization label such as ``SPEAKER_00``, speaker_name set once the
speaker is identified).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Word:
    """One word with its time span in seconds and an optional confidence in [0, 1]."""

    text: str
    start: float | None = None
    end: float | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class Segment:
    """A stretch of speech by one speaker.

    ``text`` is the segment's words joined by spaces; ``words`` carries per-word times where
    they are known (an STM line has text but no word times; an RTTM turn has neither).
    ``backchannel``: a reference marks a listener's short response ("yeah", "mm-hmm") said over
    someone else's turn (``speechkit score --exclude-backchannels`` leaves these out).
    """

    start: float
    end: float
    speaker: str
    text: str = ""
    words: tuple[Word, ...] = ()
    speaker_name: str | None = None
    backchannel: bool = False

    @classmethod
    def from_words(cls, words: list[Word] | tuple[Word, ...], speaker: str,
                   speaker_name: str | None = None, backchannel: bool = False) -> Segment:
        """A segment spanning ``words`` (which must have times)."""
        if not words:
            raise ValueError("a segment built from words needs at least one word")
        return cls(start=min(w.start for w in words), end=max(w.end for w in words),
                   speaker=speaker, text=" ".join(w.text for w in words),
                   words=tuple(words), speaker_name=speaker_name, backchannel=backchannel)

    @property
    def duration(self) -> float:
        return self.end - self.start

    def shifted(self, seconds: float) -> Segment:
        """A copy with its times and its words' times moved by ``seconds``."""
        words = tuple(replace(w, start=None if w.start is None else w.start + seconds,
                              end=None if w.end is None else w.end + seconds) for w in self.words)
        return replace(self, start=self.start + seconds, end=self.end + seconds, words=words)

    def with_speaker(self, speaker: str | None = None, speaker_name: str | None = None) -> Segment:
        """A copy with the speaker label and/or name replaced."""
        return replace(self, speaker=speaker if speaker is not None else self.speaker,
                       speaker_name=speaker_name if speaker_name is not None else self.speaker_name)



def name_segments(segments: list[Segment], names: dict[str, str | None]) -> list[Segment]:
    """``segments`` with ``speaker_name`` set from ``names`` (speaker label -> name); labels
    missing from ``names`` or mapped to None get no name."""
    return [replace(s, speaker_name=names.get(s.speaker)) for s in segments]


@dataclass
class Transcript:
    """All segments of one meeting (session), sorted by start time.

    ``has_words`` is False for formats without text (RTTM); ``has_speakers`` is False for
    formats without speakers (CTM). Metrics that need what a transcript lacks are reported
    as not applicable.
    """

    session_id: str
    segments: list[Segment] = field(default_factory=list)
    has_words: bool = True
    has_speakers: bool = True

    def __post_init__(self) -> None:
        self.segments = sorted(self.segments, key=lambda s: (s.start, s.end, s.speaker))

    @property
    def text(self) -> str:
        """All words of the meeting in time order, space separated."""
        return " ".join(s.text for s in self.segments if s.text)

    @property
    def speakers(self) -> list[str]:
        """Speaker labels in order of first appearance."""
        return list(dict.fromkeys(s.speaker for s in self.segments))

    def words(self) -> list[tuple[Word, Segment]]:
        """Every timed word with the segment it belongs to, in time order."""
        out = [(w, s) for s in self.segments for w in s.words]
        return sorted(out, key=lambda ws: (ws[0].start if ws[0].start is not None else ws[1].start))

    @property
    def duration(self) -> float:
        return max((s.end for s in self.segments), default=0.0)
