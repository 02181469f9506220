"""Speaker-attributed WER: cpWER and time-constrained tcpWER, equal to meeteval's, fast on long meetings.

Both concatenate each speaker's words (segments in start-time order, each segment's text through
the shared normaliser: :func:`speechkit.metrics.normalize.segment_words`), find the reference ->
hypothesis speaker assignment with the fewest word errors (Hungarian over the pairwise distances,
speakers without a partner paired with an empty stream) and count that assignment's insertions,
deletions and substitutions, exactly as meeteval does. tcpWER allows a word to match only where its
time overlaps: meeteval's pseudo word timings (reference: character based over the segment span;
hypothesis: character-based points widened by a collar in seconds on each side, default 5 s).
The distances and counts are in :mod:`speechkit.metrics.word_alignment`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np

from speechkit.metrics.bootstrap import Ratio
from speechkit.metrics.normalize import words_in_time_order
from speechkit.metrics.word_alignment import EditCounts, WordStream, distance, edit_counts
from speechkit.transcript import Segment, Transcript

TCP_COLLAR = 5.0

# The first distance bound tried for the speaker pairs (cpWER: then fourfold, until the assignment is
# proved optimal and unique or every distance is exact; tcpWER: then exact, its distance being linear).
_FIRST_BOUND = 64


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


def _streams(transcript: Transcript, vocabulary: dict[str, int], times: Literal["spans", "points"] | None = None,
             collar: float = 0.0) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Each speaker's words (segments in start-time order), speakers in order of first appearance.

    A speaker whose segments hold no words still has a stream. ``times``: None (cpWER), or
    meeteval's pseudo word timings: ``"spans"`` (character based: a segment's span cut in
    proportion to its words' lengths) or ``"points"`` (the spans' centres, widened by ``collar``
    seconds on each side when it is positive). The arithmetic is meeteval's, to the last bit.
    """
    segments, words = words_in_time_order(transcript)
    flat = list(chain.from_iterable(words))
    for w in dict.fromkeys(flat):
        vocabulary.setdefault(w, len(vocabulary))
    ids = np.fromiter(map(vocabulary.__getitem__, flat), dtype=np.int64, count=len(flat))
    per_segment = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    speakers = {name: k for k, name in enumerate(dict.fromkeys(s.speaker for s in segments))}
    speaker_of_word = np.repeat(np.array([speakers[s.speaker] for s in segments], dtype=np.int64), per_segment)
    spans = None
    if times is not None:
        spans = _character_spans(segments, flat, per_segment)
        if times == "points":
            centres = (spans[:, 1] + spans[:, 0]) / 2
            spans = np.stack([centres - collar, centres + collar] if collar > 0 else [centres, centres], axis=1)
    return {name: (ids[speaker_of_word == k], None if spans is None else spans[speaker_of_word == k])
            for name, k in speakers.items()}


def _character_spans(segments: list[Segment], flat: list[str], per_segment: np.ndarray) -> np.ndarray:
    """meeteval's ``character_based`` word spans: a segment's span cut in proportion to its words' lengths.

    A word's span is ``start + (end - start) / characters x characters before it`` (to ``... the
    characters through it``); a segment of one word keeps the segment's span.
    """
    seg = np.repeat(np.arange(len(segments)), per_segment)
    starts = np.array([s.start for s in segments], dtype=np.float64)[seg]
    ends = np.array([s.end for s in segments], dtype=np.float64)[seg]
    lengths = np.fromiter(map(len, flat), dtype=np.int64, count=len(flat))
    chars_before = np.concatenate([[0], np.cumsum(lengths)])  # over all words, before word k
    segment_end = np.cumsum(per_segment)
    segment_before = chars_before[segment_end - per_segment]
    segment_chars = (chars_before[segment_end] - segment_before)[seg]
    before = chars_before[:-1] - segment_before[seg]
    step = (ends - starts) / segment_chars
    spans = np.stack([starts + step * before, starts + step * (before + lengths)], axis=1)
    single = (per_segment == 1)[seg]
    spans[single] = np.stack([starts[single], ends[single]], axis=1)
    return spans


def _is_unique_optimum(cost: np.ndarray, cols: np.ndarray) -> bool:
    """Whether every other assignment costs strictly more than ``cols`` (row r -> column cols[r])."""
    from scipy.optimize import linear_sum_assignment

    best = cost[np.arange(len(cols)), cols].sum()
    for r, c in enumerate(cols):
        other = cost.astype(float)
        other[r, c] = np.inf
        try:
            rows2, cols2 = linear_sum_assignment(other)
        except ValueError:  # no assignment avoids this cell
            continue
        if other[rows2, cols2].sum() <= best:
            return False
    return True


def _assignment(ref_lengths: list[int], hyp_lengths: list[int],
                distance: Callable[[int, int, int | None], tuple[int, bool]], rising: bool) -> np.ndarray:
    """meeteval's speaker assignment: column (hypothesis, or padding) of each row (reference, or padding).

    ``distance(i, j, bound)`` is (the distance of reference stream i to hypothesis stream j, True),
    or (a lower bound, False) when it exceeds ``bound`` (None: no bound). The padded square matrix
    is meeteval's; entries over a bound are lower bounds. An optimum that uses exact entries only and
    beats every other assignment strictly is the optimum of the exact matrix, which has no tie for
    the solver to break; otherwise the bound is raised (fourfold while ``rising``, else at once to
    None), up to the exact matrix, which is solved exactly as meeteval solves it.
    """
    from scipy.optimize import linear_sum_assignment

    n = max(len(ref_lengths), len(hyp_lengths))
    cost = np.zeros((n, n), dtype=np.int64)
    cost[:len(ref_lengths), len(hyp_lengths):] = np.array(ref_lengths, dtype=np.int64)[:, None]
    cost[len(ref_lengths):, :len(hyp_lengths)] = np.array(hyp_lengths, dtype=np.int64)[None, :]
    inexact = {(i, j) for i in range(len(ref_lengths)) for j in range(len(hyp_lengths))}
    longest = max(ref_lengths + hyp_lengths, default=0)
    bound: int | None = _FIRST_BOUND
    while True:
        if bound is not None and bound >= longest:
            bound = None
        for i, j in sorted(inexact):
            cost[i, j], exact = distance(i, j, bound)
            if exact:
                inexact.discard((i, j))
        _, cols = linear_sum_assignment(cost)
        if not inexact or (not any((r, c) in inexact for r, c in enumerate(cols))
                           and _is_unique_optimum(cost, cols)):
            return cols
        bound = None if bound is None or not rising else 4 * max(bound, 1)


def _minimum_permutation(ref: dict[str, WordStream], hyp: dict[str, WordStream]) -> CpWerResult:
    """meeteval's minimum-permutation error counts of speaker streams ``ref`` against ``hyp``."""
    ref_names, hyp_names = list(ref), list(hyp)
    ref_streams, hyp_streams = list(ref.values()), list(hyp.values())
    timed = any(s.times is not None for s in ref_streams)  # the exact distance is linear: no rising bounds
    cols = _assignment([len(s) for s in ref_streams], [len(s) for s in hyp_streams],
                       lambda i, j, bound: distance(ref_streams[i], hyp_streams[j], bound), rising=not timed)
    total = EditCounts(0, 0, 0)
    assignment = []
    for r, c in enumerate(cols):
        r_name = ref_names[r] if r < len(ref_names) else None
        c_name = hyp_names[c] if c < len(hyp_names) else None
        assignment.append((r_name, c_name))
        if r_name is None:
            total = total + EditCounts(len(hyp_streams[c]), 0, 0)
        elif c_name is None:
            total = total + EditCounts(0, len(ref_streams[r]), 0)
        else:
            total = total + edit_counts(ref_streams[r], hyp_streams[c])
    return CpWerResult(total.errors, sum(len(s) for s in ref_streams), total.substitutions, total.deletions,
                       total.insertions, max(0, len(ref) - len(hyp)), max(0, len(hyp) - len(ref)),
                       tuple(assignment))


def _score(reference: Transcript, hypothesis: Transcript, timed: bool, collar: float = 0.0) -> CpWerResult:
    vocabulary: dict[str, int] = {}
    ref = _streams(reference, vocabulary, "spans" if timed else None)
    hyp = _streams(hypothesis, vocabulary, "points" if timed else None, collar)
    return _minimum_permutation({name: WordStream.of(w, t, len(vocabulary)) for name, (w, t) in ref.items()},
                                {name: WordStream.of(w, t, len(vocabulary)) for name, (w, t) in hyp.items()})


def cpwer(reference: Transcript, hypothesis: Transcript) -> CpWerResult:
    """Concatenated minimum-permutation WER of one meeting."""
    return _score(reference, hypothesis, timed=False)


def tcpwer(reference: Transcript, hypothesis: Transcript, collar: float = TCP_COLLAR) -> CpWerResult:
    """Time-constrained minimum-permutation WER of one meeting (``collar`` in seconds)."""
    return _score(reference, hypothesis, timed=True, collar=collar)
