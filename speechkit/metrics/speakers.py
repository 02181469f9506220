"""Speaker attribution: cross-meeting speaker-identity consistency and named-speaker accuracy.

Each reference word (its person id is the reference segment's speaker) is routed to the
hypothesis segment that overlaps its time span most; a word that overlaps none goes to the
segment containing its midpoint, else it is unrouted. Reference words without times (STM) get
equal shares of their segment's span. The name a system gives a person in a meeting is the
majority, over that person's routed words, of the segment's ``speaker_name``, or of its speaker
label made meeting-local (``"<meeting>:<label>"``) so that a bare ``SPEAKER_00`` never equals
another meeting's label.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from speechkit.metrics.bootstrap import Ratio
from speechkit.transcript import Segment, Transcript
from speechkit.workspace import Person

_CELLS = 2_000_000  # word x segment overlap cells computed at once


def word_spans(reference: Transcript) -> list[tuple[str, float, float]]:
    """``(person id, start, end)`` of every reference word, in segment order."""
    spans = []
    for seg in reference.segments:
        words = seg.words or ()
        step = seg.duration / len(words) if words else 0.0
        for i, w in enumerate(words):
            if w.start is not None and w.end is not None:
                spans.append((seg.speaker, w.start, w.end))
            else:
                spans.append((seg.speaker, seg.start + i * step, seg.start + (i + 1) * step))
    return spans


def route_words(reference: Transcript, hypothesis: Transcript) -> list[tuple[str, Segment | None]]:
    """Each reference word's person id with the hypothesis segment it is routed to (or None)."""
    spans = word_spans(reference)
    segs = hypothesis.segments
    if not spans or not segs:
        return [(pid, None) for pid, _, _ in spans]
    ws = np.array([s[1] for s in spans])
    we = np.array([s[2] for s in spans])
    ss = np.array([s.start for s in segs])
    se = np.array([s.end for s in segs])
    chosen = np.full(len(spans), -1)
    chunk = max(1, _CELLS // len(segs))
    for lo in range(0, len(spans), chunk):
        a, b = ws[lo:lo + chunk, None], we[lo:lo + chunk, None]
        overlap = np.minimum(b, se) - np.maximum(a, ss)
        best = overlap.argmax(axis=1)
        mid = (a + b) / 2
        inside = (ss <= mid) & (mid <= se)
        fallback = np.where(inside.any(axis=1), inside.argmax(axis=1), -1)
        has_overlap = overlap[np.arange(len(best)), best] > 0
        chosen[lo:lo + chunk] = np.where(has_overlap, best, fallback)
    return [(pid, segs[i] if i >= 0 else None) for (pid, _, _), i in zip(spans, chosen)]


def segment_name(segment: Segment, meeting: str) -> str:
    """The name a hypothesis segment gives its speaker: ``speaker_name``, else the meeting-local label."""
    return segment.speaker_name or f"{meeting}:{segment.speaker}"


@dataclass
class PersonAttribution:
    """One person in one meeting: reference words, routed words, correctly named words, the name."""

    words: int = 0
    routed: int = 0
    correct: int = 0
    name: str | None = None
    votes: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class SpeakerAttribution:
    """How a hypothesis attributes the reference words of one meeting to people."""

    meeting: str
    persons: dict[str, PersonAttribution]

    @property
    def names(self) -> dict[str, str | None]:
        """The predicted name of each person speaking in the meeting (None: no word routed)."""
        return {pid: a.name for pid, a in self.persons.items()}

    @property
    def accuracy(self) -> Ratio:
        """Named-speaker accuracy: correctly named reference words over reference words."""
        return Ratio(sum(a.correct for a in self.persons.values()), sum(a.words for a in self.persons.values()))

    def details(self) -> dict[str, Any]:
        return {"unrouted_words": sum(a.words - a.routed for a in self.persons.values()),
                "persons": {pid: {"name": a.name, "words": a.words, "routed_words": a.routed,
                                  "correctly_named_words": a.correct}
                            for pid, a in self.persons.items()}}


def attribute_speakers(meeting: str, reference: Transcript, hypothesis: Transcript,
                       people: Mapping[str, Person]) -> SpeakerAttribution:
    """Route ``reference`` words to ``hypothesis`` segments and name each person.

    ``people`` maps every reference speaker (person id) to its :class:`Person`; a word is
    correctly named when its segment's ``speaker_name`` is accepted by ``Person.answers_to``.
    Majority ties go to the name seen first in time.
    """
    persons: dict[str, PersonAttribution] = {}
    for pid, seg in route_words(reference, hypothesis):
        a = persons.setdefault(pid, PersonAttribution())
        a.words += 1
        if seg is None:
            continue
        a.routed += 1
        a.votes[segment_name(seg, meeting)] += 1
        a.correct += people[pid].answers_to(seg.speaker_name)
    for a in persons.values():
        a.name = a.votes.most_common(1)[0][0] if a.votes else None
    return SpeakerAttribution(meeting, persons)


def speaker_consistency(names: Mapping[str, Mapping[str, str | None]]) -> dict[str, Ratio]:
    """Cross-meeting speaker-identity consistency, decomposed per meeting.

    ``names[meeting][person]`` is the predicted name of each person speaking in the meeting.
    For meeting m: ``den`` counts, over its persons, the other meetings they speak in, and
    ``num`` those where they got the same name (None never matches). The micro ratio over all
    meetings is the fraction of ordered pairs of distinct meetings with the same name; people
    in only one meeting contribute nothing.
    """
    out = {}
    for m, persons in names.items():
        num = den = 0
        for pid, name in persons.items():
            others = [other[pid] for o, other in names.items() if o != m and pid in other]
            den += len(others)
            num += sum(1 for n in others if name is not None and n == name)
        out[m] = Ratio(num, den)
    return out
