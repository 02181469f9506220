"""Leaving backchannels out of the word metrics (``speechkit score --exclude-backchannels``).

A reference marks a listener's short response said over someone else's turn ("yeah",
"mm-hmm") with ``backchannel`` (SegLST key, docs/workspace-format.md). Excluding them drops
those reference segments and, from the hypothesis, for each of their words one timed word that
normalises the same and whose middle lies within :data:`SLACK_S` of the backchannel, so a
system that transcribes a backchannel is not charged an insertion for it. Hypothesis words
without times are left as they are (a backchannel they hold counts as an insertion).
"""
from __future__ import annotations

from dataclasses import replace

from speechkit.metrics.normalize import normalize
from speechkit.transcript import Segment, Transcript

SLACK_S = 0.5


def _taken(hypothesis: Transcript, backchannels: list[Segment]) -> set[tuple[int, int]]:
    """(segment index, word index) of the hypothesis words that transcribe the backchannels."""
    taken: set[tuple[int, int]] = set()
    for bc in backchannels:
        for word in normalize(bc.text).split():
            for i, seg in enumerate(hypothesis.segments):
                hit = next((k for k, w in enumerate(seg.words)
                            if (i, k) not in taken and w.start is not None and w.end is not None
                            and bc.start - SLACK_S <= (w.start + w.end) / 2 <= bc.end + SLACK_S
                            and normalize(w.text) == word), None)
                if hit is not None:
                    taken.add((i, hit))
                    break
    return taken


def without_backchannels(reference: Transcript, hypothesis: Transcript) -> tuple[Transcript, Transcript]:
    """``reference`` without its backchannel segments and ``hypothesis`` without the words that
    transcribe them (see the module docstring)."""
    backchannels = [s for s in reference.segments if s.backchannel]
    if not backchannels:
        return reference, hypothesis
    taken = _taken(hypothesis, backchannels)
    segments = []
    for i, seg in enumerate(hypothesis.segments):
        if not any(j == i for j, _ in taken):
            segments.append(seg)
            continue
        words = [w for k, w in enumerate(seg.words) if (i, k) not in taken]
        if words:
            segments.append(replace(Segment.from_words(words, seg.speaker, seg.speaker_name),
                                    start=seg.start, end=seg.end))
    return (replace(reference, segments=[s for s in reference.segments if not s.backchannel]),
            replace(hypothesis, segments=segments))
