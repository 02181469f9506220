"""Speaker attribution: cross-meeting speaker-identity consistency and named-speaker accuracy.

Each reference word (its person id is the reference segment's speaker) is routed to the
hypothesis segment that overlaps its time span most; a word that overlaps none goes to the
segment containing its midpoint, else it is unrouted. Reference words without times (STM) get
equal shares of their segment's span. When several segments tie (a word said inside an
overlapping backchannel lies wholly inside both the backchannel and the long turn around it),
the word goes to the segment holding the same word (case and punctuation aside) nearest in time,
then to the shortest segment, then to the earliest; so a hypothesis equal to the reference
routes every word to its own segment. The name a system gives a person in a meeting is the
majority, over that person's routed words, of the segment's ``speaker_name``, or of its speaker
label made meeting-local (``"<meeting>:<label>"``) so that a bare ``SPEAKER_00`` never equals
another meeting's label. A reference without words (RTTM turns only) names each person by
speech time instead (:func:`attribute_turns`); named-speaker accuracy, a count of words, then
does not apply. :func:`wrong_names` marks, in the person x meeting grid of given names, the cells
where a person's identity was lost.
"""
from __future__ import annotations

import string
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from speechkit.metrics.bootstrap import PairRow, Ratio
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


def _key(text: str) -> str:
    return text.lower().strip(string.punctuation)


def _tie_break(text: str, start: float, end: float, candidates: np.ndarray, segs: list[Segment]) -> int:
    """The tied segment holding the same word nearest in time, else the shortest, else the earliest."""
    target = _key(text)

    def rank(j: int) -> tuple:
        same = [w for w in segs[j].words if _key(w.text) == target]
        timed = [w for w in same if w.start is not None and w.end is not None]
        distance = min((abs(w.start - start) + abs(w.end - end) for w in timed), default=float("inf"))
        return bool(same), -distance, -segs[j].duration

    return max((int(j) for j in candidates), key=rank)  # max keeps the first (earliest) of equals


def route_words(reference: Transcript, hypothesis: Transcript) -> list[tuple[str, Segment | None]]:
    """Each reference word's person id with the hypothesis segment it is routed to (or None)."""
    spans = word_spans(reference)
    texts = [w.text for seg in reference.segments for w in seg.words or ()]
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
        best = overlap.max(axis=1)
        has_overlap = best > 0
        mid = (a + b) / 2
        # the candidates of each word: the segments overlapping it most, else those containing its midpoint
        candidates = np.where(has_overlap[:, None], overlap == best[:, None], (ss <= mid) & (mid <= se))
        counts = candidates.sum(axis=1)
        pick = np.where(counts > 0, candidates.argmax(axis=1), -1)
        for row in np.flatnonzero(counts > 1):
            i = lo + row
            pick[row] = _tie_break(texts[i], ws[i], we[i], np.flatnonzero(candidates[row]), segs)
        chosen[lo:lo + chunk] = pick
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
    name_right: bool | None = None  # the person answers to ``name`` (None: not judged, no roster)


@dataclass(frozen=True)
class SpeakerAttribution:
    """How a hypothesis attributes the reference words of one meeting to people."""

    meeting: str
    persons: dict[str, PersonAttribution]
    basis: str = "words"  # "words", or "seconds" when the reference has no words (attribute_turns)

    @property
    def names(self) -> dict[str, str | None]:
        """The predicted name of each person speaking in the meeting (None: no word routed)."""
        return {pid: a.name for pid, a in self.persons.items()}

    @property
    def accuracy(self) -> Ratio:
        """Named-speaker accuracy: correctly named reference words over reference words."""
        return Ratio(sum(a.correct for a in self.persons.values()), sum(a.words for a in self.persons.values()))

    def details(self) -> dict[str, Any]:
        if self.basis == "seconds":
            return {"basis": "seconds", "persons": {
                pid: {"name": a.name, "speech_s": round(a.words / 1000, 3), "routed_s": round(a.routed / 1000, 3)}
                for pid, a in self.persons.items()}}
        return {"unrouted_words": sum(a.words - a.routed for a in self.persons.values()),
                "persons": {pid: {"name": a.name, "name_right": a.name_right, "words": a.words,
                                  "routed_words": a.routed, "correctly_named_words": a.correct}
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
    for pid, a in persons.items():
        a.name = a.votes.most_common(1)[0][0] if a.votes else None
        a.name_right = people[pid].answers_to(a.name)
    return SpeakerAttribution(meeting, persons)


def attribute_turns(meeting: str, turns: Transcript, hypothesis: Transcript) -> SpeakerAttribution:
    """Name each person by speech time, for a reference that has speaker turns but no words.

    Each reference turn votes, with its overlap in seconds, for the name of every hypothesis
    segment it overlaps; a person's name is the one with most seconds. Ties (to the millisecond, as
    when a turn lies inside another speaker's turn and the hypothesis has both) go to the name whose
    segments fit the person's turns best (summed overlap / union), then to the name seen first.
    ``words``/``routed`` of each :class:`PersonAttribution` hold milliseconds of speech / of speech
    overlapping a hypothesis segment; ``correct`` stays 0 (named-speaker accuracy does not apply).
    """
    segs = hypothesis.segments
    ss = np.array([s.start for s in segs])
    se = np.array([s.end for s in segs])
    persons: dict[str, PersonAttribution] = {}
    fit: dict[str, Counter] = {}
    for turn in turns.segments:
        a = persons.setdefault(turn.speaker, PersonAttribution())
        person_fit = fit.setdefault(turn.speaker, Counter())
        a.words += round(turn.duration * 1000)
        if not segs:
            continue
        overlap = np.minimum(turn.end, se) - np.maximum(turn.start, ss)
        hits = np.flatnonzero(overlap > 0)
        for i in hits:
            name = segment_name(segs[i], meeting)
            a.votes[name] += round(float(overlap[i]) * 1000)
            person_fit[name] += float(overlap[i]) / (max(turn.end, se[i]) - min(turn.start, ss[i]))
        covered, reach = 0.0, turn.start  # speech covered by hypothesis segments, each second once
        for s, e in sorted(zip(np.maximum(turn.start, ss[hits]), np.minimum(turn.end, se[hits]))):
            covered += max(0.0, float(e) - max(float(s), reach))
            reach = max(reach, float(e))
        a.routed += round(covered * 1000)
    for pid, a in persons.items():
        order = {name: k for k, name in enumerate(a.votes)}
        a.name = max(a.votes, key=lambda n: (a.votes[n], fit[pid][n], -order[n])) if a.votes else None
    return SpeakerAttribution(meeting, persons, basis="seconds")


def speaker_consistency(names: Mapping[str, Mapping[str, str | None]]) -> dict[str, PairRow]:
    """Cross-meeting speaker-identity consistency, as each meeting's row of meeting pairs.

    ``names[meeting][person]`` is the predicted name of each person speaking in the meeting.
    For meetings m and o, the pair's ``den`` counts the persons speaking in both and ``num`` those
    who got the same name in both (None never matches); meeting m's :class:`PairRow` holds its
    pair with each other meeting and their sums. The micro ratio over all meetings is the fraction
    of ordered pairs of distinct meetings with the same name; people in only one meeting
    contribute nothing. Being a property of pairs of meetings, it is resampled as such
    (:mod:`speechkit.metrics.bootstrap`).
    """
    out = {}
    for m, persons in names.items():
        pairs = {}
        for o, other in names.items():
            if o == m:
                continue
            shared = [pid for pid in persons if pid in other]
            if shared:
                pairs[o] = (sum(1 for pid in shared if persons[pid] is not None and other[pid] == persons[pid]),
                            len(shared))
        out[m] = PairRow(sum(n for n, _ in pairs.values()), sum(d for _, d in pairs.values()), m, pairs)
    return out


def wrong_names(grid: Mapping[str, Mapping[str, tuple[str | None, bool | None]]]) -> set[tuple[str, str]]:
    """The (person, meeting) cells of a person x meeting grid whose name breaks the person's identity.

    ``grid[person][meeting]`` is ``(name, name_right)``: the name the system gave the person in
    that meeting and whether the person answers to it (None: not judged). A person the system
    named right somewhere should carry that name everywhere, so each cell not named right is
    wrong; a person never named right (no enrollment, or L1/L2 labels) should keep one label, so
    each cell whose name differs from the one given most often (ties: the earliest) is wrong.
    Cells without a name (no word routed) are not marked.
    """
    wrong = set()
    for person, row in grid.items():
        named = {m: cell for m, cell in row.items() if cell[0] is not None}
        if any(right for _, right in named.values()):
            wrong |= {(person, m) for m, (_, right) in named.items() if not right}
        elif named:
            usual = Counter(name for name, _ in named.values()).most_common(1)[0][0]  # ties: the earliest
            wrong |= {(person, m) for m, (name, _) in named.items() if name != usual}
    return wrong
