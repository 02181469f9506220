"""Exact word edit distances and error counts for cpWER and tcpWER, fast on long word streams.

Figures equal meeteval's (the reference implementation). The plain distance is rapidfuzz's
bit-parallel Levenshtein on word ids, bounded where a bound is enough; the time-constrained
distance is meeteval's own, banded by time. The insertion/deletion/substitution split of an
optimal alignment depends on how ties are broken: meeteval takes it from kaldialign (plain) and
from its own time-constrained back-trace, and both walk back from the end preferring an
insertion, then a deletion, then a diagonal step. Both are quadratic in time (the time-constrained
one in memory too), so the common prefix is cut first. That is exact: inside a prefix of p
matched words the cost of cell (i, j) is |i - j|, so on its last row and column an insertion
(resp. a deletion) always ties for the best step and wins the tie, and the counts of every cell
past the prefix are those of the same cell of the cut problem.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein

_MAX_CHAR = 0x10FFFF


@dataclass(frozen=True)
class EditCounts:
    """Insertions, deletions and substitutions of one alignment; ``errors`` is their sum."""

    insertions: int
    deletions: int
    substitutions: int

    @property
    def errors(self) -> int:
        return self.insertions + self.deletions + self.substitutions

    def __add__(self, other: EditCounts) -> EditCounts:
        return EditCounts(self.insertions + other.insertions, self.deletions + other.deletions,
                          self.substitutions + other.substitutions)


@dataclass(frozen=True)
class WordStream:
    """One speaker's words: ids, the same as rapidfuzz text, and (start, end) times or None.

    With times, a word may be aligned to another (match or substitution) only where their
    times overlap (tcpWER); without, anywhere (cpWER).
    """

    words: np.ndarray
    times: np.ndarray | None
    text: str | list[int]

    @classmethod
    def of(cls, words: np.ndarray, times: np.ndarray | None, vocabulary_size: int) -> WordStream:
        """The stream of word ids ``words`` (ids below ``vocabulary_size``)."""
        as_chars = vocabulary_size <= _MAX_CHAR  # one character per word: rapidfuzz's fastest input
        return cls(words, times, "".join(map(chr, words.tolist())) if as_chars else words.tolist())

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, cut: slice) -> WordStream:
        return WordStream(self.words[cut], None if self.times is None else self.times[cut], self.text[cut])


def _without_common_prefix(ref: WordStream, hyp: WordStream) -> tuple[WordStream, WordStream]:
    """Both streams past their longest common prefix of equal words that may be aligned."""
    n = min(len(ref), len(hyp))
    differs = ref.words[:n] != hyp.words[:n]
    if ref.times is not None and hyp.times is not None:
        differs |= ~((ref.times[:n, 0] < hyp.times[:n, 1]) & (ref.times[:n, 1] > hyp.times[:n, 0]))
    first = np.flatnonzero(differs)
    p = int(first[0]) if len(first) else n
    return ref[p:], hyp[p:]


def _pairs(times: np.ndarray) -> list[tuple[float, float]]:
    return list(zip(times[:, 0].tolist(), times[:, 1].tolist()))


def distance(ref: WordStream, hyp: WordStream, bound: int | None = None) -> tuple[int, bool]:
    """(the distance, True), or (``bound + 1``, False) when the plain distance exceeds ``bound``.

    The plain distance is rapidfuzz's, in time O(length x min(bound, length) / 64), so a small
    bound is cheap on long streams; it is a lower bound of the time-constrained distance, which
    is meeteval's (banded by time, linear in the length of a meeting).
    """
    ref, hyp = _without_common_prefix(ref, hyp)
    if not len(ref) or not len(hyp):
        return len(ref) + len(hyp), True
    if ref.times is None or hyp.times is None:
        plain = Levenshtein.distance(ref.text, hyp.text, score_cutoff=bound)
        return (plain, True) if bound is None or plain <= bound else (bound + 1, False)
    if bound is not None and Levenshtein.distance(ref.text, hyp.text, score_cutoff=bound) > bound:
        return bound + 1, False
    from meeteval.wer.matching.cy_levenshtein import time_constrained_levenshtein_distance

    return time_constrained_levenshtein_distance(ref.words.tolist(), hyp.words.tolist(), _pairs(ref.times),
                                                 _pairs(hyp.times)), True


def _time_cuts(stream: WordStream) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where ``stream`` can be cut in time: indices k, and the times t (lo <= t <= hi) such that every
    word before k ends by t and every word from k on starts at t or later."""
    assert stream.times is not None
    lo = np.concatenate([[-np.inf], np.maximum.accumulate(stream.times[:, 1])])
    hi = np.concatenate([np.minimum.accumulate(stream.times[::-1, 0])[::-1], [np.inf]])
    k = np.flatnonzero(lo <= hi)
    return k, lo[k], hi[k]


def _time_blocks(ref: WordStream, hyp: WordStream) -> list[tuple[WordStream, WordStream]]:
    """The streams cut where no word on one side of a cut overlaps a word on the other side of it.

    No word may then be aligned across a cut, and the counts of the whole are the sums of the
    blocks' counts (docs/scores-schema.md), so time and memory stay linear in the length of a
    meeting whose speakers pause.
    """
    ref_k, ref_lo, ref_hi = _time_cuts(ref)
    hyp_k, hyp_lo, hyp_hi = _time_cuts(hyp)
    # one reference cut for each hypothesis cut: the first whose times meet it (lo <= t <= hi on both sides)
    first = np.searchsorted(ref_hi, hyp_lo, side="left")
    ok = first < len(ref_k)
    ok[ok] &= ref_lo[first[ok]] <= hyp_hi[ok]
    cuts = [(0, 0), *zip(ref_k[first[ok]].tolist(), hyp_k[ok].tolist()), (len(ref), len(hyp))]
    return [(ref[a:c], hyp[b:d]) for (a, b), (c, d) in zip(cuts, cuts[1:]) if c > a or d > b]


def edit_counts(ref: WordStream, hyp: WordStream) -> EditCounts:
    """meeteval's counts of ``ref`` against ``hyp``: kaldialign's, or its time-constrained back-trace's."""
    ref, hyp = _without_common_prefix(ref, hyp)
    if ref.times is None or hyp.times is None:
        return _plain_counts(ref, hyp)
    return sum((_time_constrained_counts(*_without_common_prefix(r, h)) for r, h in _time_blocks(ref, hyp)),
               EditCounts(0, 0, 0))


def _plain_counts(ref: WordStream, hyp: WordStream) -> EditCounts:
    if not len(ref) or not len(hyp):
        return EditCounts(len(hyp), len(ref), 0)
    import kaldialign

    found = kaldialign.edit_distance(ref.words.tolist(), hyp.words.tolist())
    return EditCounts(found["ins"], found["del"], found["sub"])


def _time_constrained_counts(ref: WordStream, hyp: WordStream) -> EditCounts:
    if not len(ref) or not len(hyp):
        return EditCounts(len(hyp), len(ref), 0)
    from meeteval.wer.matching.cy_levenshtein import time_constrained_levenshtein_distance_with_alignment

    found = time_constrained_levenshtein_distance_with_alignment(ref.words.tolist(), hyp.words.tolist(),
                                                                 _pairs(ref.times), _pairs(hyp.times))
    return EditCounts(found["insertions"], found["deletions"], found["substitutions"])
