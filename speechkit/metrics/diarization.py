"""Diarization error rate (DER) and Jaccard error rate (JER), exactly as pyannote.metrics computes them.

The collar is given in seconds on each side of every reference boundary (NIST style, default
0.25 s); pyannote's ``collar`` is the total width, so it receives twice that. Overlapped speech
is scored (``skip_overlap=False``). The scored region is the extent of reference and hypothesis
speech together, as pyannote approximates it without a UEM, or the regions a UEM gives.

pyannote.metrics (``DiarizationErrorRate``, ``JaccardErrorRate``) is quadratic in the turns of one
session (``Timeline.co_iter`` scans every earlier segment) and costs about a millisecond per turn
even in short ones, so a long session took minutes. This module repeats its steps on sorted interval lists instead:
collar extrusion from the scored region, cropping, the common segmentation, the optimal (Hungarian)
speaker mapping on the co-occurrence matrix, the per-segment label matching and the per-speaker
Jaccard terms, with pyannote's 1 µs segment precision, its label orders (which decide ties of the
mapping) and its order of floating-point additions, so every figure equals pyannote's to the last
bit (tests/test_metrics_diarization.py compares them on real and random sessions). Time is
O(n log n + pairs of overlapping turns).

Every DER is read against doing nothing: :func:`baselines` scores the trivial diarizations that give
one label to all the reference speech, or to all the system's speech (:func:`one_label`).
"""
from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

import numpy as np

from speechkit.metrics.bootstrap import Ratio
from speechkit.transcript import Segment, Transcript

COLLAR = 0.25
PRECISION = 1e-6  # pyannote.core's SEGMENT_PRECISION: a segment of this duration or less is empty
#: The trivial diarizations every DER/JER is read against (:func:`baselines`): key -> what it is.
BASELINES = {"one_label_reference_speech": "one label over the reference speech",
             "one_label_system_speech": "one label over the system's speech"}

Span = tuple[float, float]
Turn = tuple[float, float, Hashable]


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
        """pyannote's components in seconds (``total_s`` is the reference speech) and the JER."""
        return {"collar_s": self.collar, "total_s": self.total, "confusion_s": self.confusion,
                "missed_detection_s": self.missed, "false_alarm_s": self.false_alarm,
                "correct_s": self.correct, "jer": self.jer}


def _nonempty(start: float, end: float) -> bool:
    return end - start > PRECISION


def _intersects(a: Span, b: Span) -> bool:
    """pyannote's ``Segment.intersects`` (overlap longer than the precision, or the same start)."""
    return (a[0] < b[0] and b[0] < a[1] - PRECISION) or (a[0] > b[0] and a[0] < b[1] - PRECISION) \
        or a[0] == b[0]


def _timeline(spans: Iterable[Span]) -> list[Span]:
    """A pyannote ``Timeline``: the distinct non-empty spans, sorted."""
    return sorted({span for span in spans if span[1] - span[0] > PRECISION})


def _support(timeline: Sequence[Span]) -> list[Span]:
    """``Timeline.support()``: overlapping spans, or spans less than the precision apart, merged.

    pyannote starts a new span where the gap between a span and the merged one before it,
    ``start - min(end, merged end)``, is longer than the precision."""
    if not timeline:
        return []
    starts, ends = np.array(timeline).T
    reach = np.maximum.accumulate(ends)  # the end of the merged span so far
    first = np.flatnonzero(np.r_[True, starts[1:] - np.minimum(ends[1:], reach[:-1]) > PRECISION])
    return list(zip(starts[first].tolist(), reach[np.r_[first[1:] - 1, len(starts) - 1]].tolist()))


def _duration(timeline: Sequence[Span]) -> float:
    """``Timeline.duration()``: the length of its support (summed as pyannote sums it)."""
    return sum(end - start for start, end in _support(timeline))


def _pairs(a: Sequence[Span], b: Sequence[Span]) -> list[tuple[int, int]]:
    """``Timeline.co_iter``: the indices of the intersecting spans of two timelines, in its order."""
    a_starts, b_starts = [s for s, _ in a], [s for s, _ in b]
    pairs = [(i, j) for i, (start, end) in enumerate(a)  # b starting inside a
             for j in range(bisect_left(b_starts, start), bisect_left(b_starts, end)) if _intersects(a[i], b[j])]
    pairs += [(i, j) for j, (start, end) in enumerate(b)  # a starting inside b, after it
              for i in range(bisect_right(a_starts, start), bisect_left(a_starts, end)) if _intersects(a[i], b[j])]
    return sorted(pairs)


def _intersection(a: Span, b: Span) -> Span:
    return max(a[0], b[0]), min(a[1], b[1])


def _crop_timeline(timeline: Sequence[Span], support: Sequence[Span]) -> list[Span]:
    """``Timeline.crop(support, mode="intersection")``."""
    support = _support(support)
    return _timeline(_intersection(timeline[i], support[j]) for i, j in _pairs(timeline, support))


def _by_span(turns: Sequence[Turn]) -> tuple[list[Span], dict[Span, list[Hashable]]]:
    """An ``Annotation``'s segments (sorted) and the labels of the tracks on each."""
    labels: dict[Span, list[Hashable]] = defaultdict(list)
    for start, end, label in turns:
        labels[start, end].append(label)
    return sorted(labels), labels


def _by_label(turns: Sequence[Turn]) -> dict[Hashable, list[Turn]]:
    by_label: dict[Hashable, list[Turn]] = defaultdict(list)
    for turn in turns:
        by_label[turn[2]].append(turn)
    return by_label


def _crop_turns(turns: Sequence[Turn], support: Sequence[Span]) -> list[Turn]:
    """``Annotation.crop(support, mode="intersection")``: each turn's non-empty pieces, labels kept."""
    (spans, labels), support = _by_span(turns), _support(support)
    cropped = []
    for i, j in _pairs(spans, support):
        piece = _intersection(spans[i], support[j])
        if _nonempty(*piece):
            cropped += [(*piece, label) for label in labels[spans[i]]]
    return cropped


def _scored_region(reference: Sequence[Turn], uem: Sequence[Span], collar: float) -> list[Span]:
    """``UEMSupportMixin.extrude``: the UEM less ``collar`` seconds around every reference boundary."""
    if collar == 0.0:
        return list(uem)
    collars = _support(_timeline((t - collar, t + collar) for span in {(s, e) for s, e, _ in reference} for t in span))
    region = []
    for u_start, u_end in _support(uem):
        end = u_start
        for start, stop in _support(_crop_timeline(collars, [(u_start, u_end)])):
            if _nonempty(end, start):
                region.append((end, start))
            end = stop
        if _nonempty(end, u_end):
            region.append((end, u_end))
    return _timeline(region)


def _renamed(turns: Sequence[Turn], names: Iterable[Hashable]) -> tuple[list[Turn], list[Hashable]]:
    """``Annotation.rename_labels``: labels in pyannote's order (sorted as strings) get ``names``,
    returned with the new labels in pyannote's order."""
    mapping = dict(zip(sorted({label for _, _, label in turns}, key=str), names))
    return [(s, e, mapping[label]) for s, e, label in turns], sorted(mapping.values(), key=str)


def _names() -> Iterable[str]:
    from pyannote.core.utils.generators import string_generator
    return string_generator()


def _ints() -> Iterable[int]:
    from pyannote.core.utils.generators import int_generator
    return int_generator()


def _optimal_mapping(rows: Sequence[Turn], row_labels: Sequence[Hashable], columns: Sequence[Turn],
                     column_labels: Sequence[Hashable]) -> dict[Hashable, Hashable]:
    """``HungarianMapper``: the co-occurrence matrix (``Annotation.__mul__``, summed in ``co_iter``
    order) and scipy's assignment on it; pairs that never co-occur are not mapped."""
    from scipy.optimize import linear_sum_assignment

    (a, a_labels), (b, b_labels) = _by_span(rows), _by_span(columns)
    row, column = {x: i for i, x in enumerate(row_labels)}, {x: j for j, x in enumerate(column_labels)}
    matrix = np.zeros((len(row), len(column)))
    for i, j in _pairs(a, b):
        start, end = _intersection(a[i], b[j])
        duration = end - start if _nonempty(start, end) else 0.0
        for x in a_labels[a[i]]:
            for y in b_labels[b[j]]:
                matrix[row[x], column[y]] += duration
    if matrix.size == 0:
        return {}
    return {row_labels[i]: column_labels[j] for i, j in zip(*linear_sum_assignment(-matrix)) if matrix[i, j] > 0}


def _sequential_sum(values: np.ndarray) -> float:
    """Left-to-right sum from 0.0, as pyannote's ``+=`` loops add."""
    return reduce(operator.add, values.tolist(), 0.0)


def _identification_components(reference: Sequence[Turn], hypothesis: Sequence[Turn]) -> dict[str, float]:
    """``IdentificationErrorRate.compute_components`` after uemify: on every segment of the common
    segmentation, pyannote's ``LabelMatcher`` counts weighted by the segment's duration."""
    times = np.array(sorted({t for s, e, _ in (*reference, *hypothesis) for t in (s, e)}))
    if len(times) < 2:
        return dict.fromkeys(("total", "correct", "confusion", "missed detection", "false alarm"), 0.0)

    def coverage(turns: Iterable[Turn]) -> np.ndarray:
        """How many of ``turns`` cover each segment between consecutive times."""
        turns = list(turns)
        change = np.zeros(len(times), dtype=np.int64)
        np.add.at(change, np.searchsorted(times, [s for s, _, _ in turns]), 1)
        np.add.at(change, np.searchsorted(times, [e for _, e, _ in turns]), -1)
        return np.cumsum(change)[:-1]

    n_ref, n_hyp = coverage(reference), coverage(hypothesis)
    ref_by_label, hyp_by_label = _by_label(reference), _by_label(hypothesis)
    correct = np.zeros(len(times) - 1, dtype=np.int64)
    for label in ref_by_label.keys() & hyp_by_label.keys():
        correct += np.minimum(coverage(ref_by_label[label]), coverage(hyp_by_label[label]))
    durations = np.diff(times)
    durations[~(durations > PRECISION)] = 0.0  # pyannote drops empty segments of the segmentation
    counts = {"total": n_ref, "correct": correct, "confusion": np.minimum(n_ref, n_hyp) - correct,
              "missed detection": np.maximum(n_ref - n_hyp, 0), "false alarm": np.maximum(n_hyp - n_ref, 0)}
    return {name: _sequential_sum(durations * count) for name, count in counts.items()}


def _jaccard_error(reference: Sequence[Turn], reference_labels: Sequence[str], hypothesis: Sequence[Turn],
                   mapping: dict[Hashable, Hashable]) -> float:
    """``JaccardErrorRate``: the mean over reference speakers of (false alarm + miss) / union with the
    mapped hypothesis speaker (1 for an unmapped one)."""
    if not reference_labels:
        return 1.0
    ref_by_label, hyp_by_label = _by_label(reference), _by_label(hypothesis)
    error = 0.0
    for label in reference_labels:
        if label not in mapping:
            error += 1.0
            continue
        r = _timeline((s, e) for s, e, _ in ref_by_label[label])
        h = _timeline((s, e) for s, e, _ in hyp_by_label[mapping[label]])
        total = _duration(_support(_timeline([*r, *h])))
        false_alarm = _duration(h) - _duration(_crop_timeline(h, r))
        miss = _duration(r) - _duration(_crop_timeline(r, h))
        error += (false_alarm + miss) / total
    return error / len(reference_labels)


def _turns(transcript: Transcript) -> list[Turn]:
    return [(seg.start, seg.end, seg.speaker) for seg in transcript.segments if _nonempty(seg.start, seg.end)]


def speech_seconds(transcript: Transcript) -> float:
    """The seconds covered by the turns of ``transcript``, overlapping turns counted once."""
    return _duration(_timeline((s.start, s.end) for s in transcript.segments))


def one_label(transcript: Transcript, label: str = "speech") -> Transcript:
    """The union of the speaker turns of ``transcript`` as turns of one speaker ``label`` (overlapping
    turns, or turns less than pyannote's precision apart, merged): the trivial diarization that
    calls everybody the same person."""
    spans = _support(_timeline((s.start, s.end) for s in transcript.segments))
    return Transcript(transcript.session_id, [Segment(start, end, label) for start, end in spans], has_words=False)


def diarization_errors(reference: Transcript, hypothesis: Transcript, collar: float = COLLAR,
                       uem: Sequence[tuple[float, float]] | None = None) -> DiarizationResult:
    """DER components and JER of ``hypothesis`` speaker turns against ``reference`` turns.

    ``collar`` is in seconds on each side of a reference boundary. ``uem``: the scored regions
    (None: from the first to the last turn of either side). JER is None when the reference has no
    speech.
    """
    ref, hyp = _turns(reference), _turns(hypothesis)
    if not ref and not hyp:
        return DiarizationResult(0.0, 0.0, 0.0, 0.0, 0.0, None, collar)
    if uem is None:
        uem = [(min(s for s, _, _ in (*ref, *hyp)), max(e for _, e, _ in (*ref, *hyp)))]
    region = _scored_region(ref, _timeline(uem), collar)
    ref_scored, ref_labels = _renamed(_crop_turns(ref, region), _names())
    hyp_scored, hyp_labels = _renamed(_crop_turns(hyp, region), _ints())
    der_mapping = _optimal_mapping(hyp_scored, hyp_labels, ref_scored, ref_labels)
    mapped = [(s, e, der_mapping.get(label, label)) for s, e, label in hyp_scored]
    c = _identification_components(ref_scored, mapped)
    jer = None
    if ref:
        jer_mapping = _optimal_mapping(ref_scored, ref_labels, hyp_scored, hyp_labels)
        jer = _jaccard_error(ref_scored, ref_labels, hyp_scored, jer_mapping)
    return DiarizationResult(c["total"], c["confusion"], c["missed detection"], c["false alarm"],
                             c["correct"], jer, collar)


def baselines(reference: Transcript, hypothesis: Transcript, collar: float = COLLAR,
              uem: Sequence[tuple[float, float]] | None = None) -> dict[str, DiarizationResult]:
    """DER/JER of the trivial diarizations (:data:`BASELINES`) against ``reference`` turns: the union of
    the reference turns as one speaker (perfect speech detection, no speaker told apart) and the union
    of the ``hypothesis`` turns as one speaker (the system's speech detection, no speaker told apart)."""
    return {"one_label_reference_speech": diarization_errors(reference, one_label(reference), collar, uem),
            "one_label_system_speech": diarization_errors(reference, one_label(hypothesis), collar, uem)}
