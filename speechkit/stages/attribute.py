"""Speaker attribution: give ASR words the speakers of diarization turns.

ASR segments come without speakers (or with one per segment); diarization turns come without
words. :func:`attribute_words` gives every word the speaker of the turn it overlaps most in time
and splits ASR segments where the speaker changes; :func:`speechkit.transcript.name_segments` then
sets the names that identification found.

The diarization's turns are only as sharp as its embedding windows (0.75 s apart), so a change
of speaker often lands a word or two beside the true one, inside a sentence. A change inside a
sentence therefore moves to the nearest sentence end of the same ASR segment (a word the
recognizer ended with ``.``, ``?`` or ``!``), at most :data:`SNAP_WORDS` words and
``sentence_snap_s`` seconds away (:func:`snap_to_sentence_ends`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from speechkit.core.options import StageOptions, bounded
from speechkit.core.record import TRANSCRIPT, MeetingRecord
from speechkit.core.stage import BackendStage, Spec, Stage
from speechkit.transcript import Segment, Transcript, Word


def _best_turns(starts: np.ndarray, ends: np.ndarray, turn_starts: np.ndarray,
                turn_ends: np.ndarray) -> np.ndarray:
    """Index of the turn overlapping each span most; the nearest turn (to the span's midpoint)
    where none overlaps. Ties go to the earlier turn."""
    overlap = (np.minimum(ends[:, None], turn_ends[None, :])
               - np.maximum(starts[:, None], turn_starts[None, :]))
    mid = ((starts + ends) / 2)[:, None]
    distance = np.maximum(turn_starts[None, :] - mid, 0) + np.maximum(mid - turn_ends[None, :], 0)
    best = np.argmax(overlap, axis=1)
    none = overlap[np.arange(len(starts)), best] <= 0
    best[none] = np.argmin(distance[none], axis=1)
    return best


def attribute_words(segments: list[Segment], turns: list[Segment], sentence_snap_s: float = 0.0) -> list[Segment]:
    """ASR ``segments`` re-cut into single-speaker segments carrying the turns' speakers.

    Each timed word takes the speaker (and speaker name) of the turn it overlaps most, or of the
    nearest turn if it overlaps none; a word without times takes its predecessor's speaker (its
    successor's at the start of a segment). With ``sentence_snap_s`` > 0 a change of speaker
    inside a sentence then moves to a sentence end nearby (:func:`snap_to_sentence_ends`).
    Consecutive words of one ASR segment with the same speaker form one output segment, so a
    segment spanning a speaker change is split there. A segment without timed words is
    attributed as a whole by its own span; a segment that keeps one speaker keeps its bounds.
    With no turns, the segments come back unchanged.
    """
    if not turns:
        return list(segments)
    turn_starts = np.array([t.start for t in turns], dtype=float)
    turn_ends = np.array([t.end for t in turns], dtype=float)
    out: list[Segment] = []
    for seg in segments:
        timed = [i for i, w in enumerate(seg.words) if w.start is not None and w.end is not None]
        if not timed:  # no words, or none with times: the segment's span decides
            t = turns[int(_best_turns(np.array([seg.start]), np.array([seg.end]),
                                      turn_starts, turn_ends)[0])]
            out.append(replace(seg, speaker=t.speaker, speaker_name=t.speaker_name))
            continue
        best = _best_turns(np.array([seg.words[i].start for i in timed], dtype=float),
                           np.array([seg.words[i].end for i in timed], dtype=float),
                           turn_starts, turn_ends)
        owner: list[int] = [-1] * len(seg.words)
        for i, b in zip(timed, best):
            owner[i] = int(b)
        first = owner[timed[0]]
        for i in range(len(owner)):
            if owner[i] < 0:
                owner[i] = owner[i - 1] if i > 0 else first
        if sentence_snap_s > 0:
            owner = snap_to_sentence_ends(seg.words, owner, sentence_snap_s)
        out.extend(_regroup(seg, owner, turns))
    return out


#: How many words a change of speaker may move to reach a sentence end.
SNAP_WORDS = 3
_SENTENCE_ENDS = (".", "?", "!")


def snap_to_sentence_ends(words: tuple[Word, ...], owner: list[int], max_shift_s: float) -> list[int]:
    """``owner`` (a speaker per word of one ASR segment) with each change of speaker that falls
    inside a sentence moved to the nearest sentence end (a word ending in ``.``, ``?`` or ``!``)
    at most :data:`SNAP_WORDS` words and ``max_shift_s`` seconds (between the two words' ends)
    away, before the segment's last word and with no other change in between; the words passed
    over take the speaker of the side they join. Nearest in words first, earlier on a tie. A
    speaker's run of words inside a sentence that this leaves empty (a word or two between two
    changes) was a flicker of the turns and goes to its neighbours."""
    owner = list(owner)
    n = len(owner)
    i = 0
    while i < n - 1:
        before, after = owner[i], owner[i + 1]
        if before == after or _ends_sentence(words[i]) or words[i].end is None:
            i += 1
            continue
        end = words[i].end
        target = None
        for j in sorted(range(max(0, i - SNAP_WORDS), min(n - 1, i + SNAP_WORDS + 1)), key=lambda j: (abs(j - i), j)):
            moved = owner[j + 1:i + 1] if j < i else owner[i + 1:j + 1]  # all of one side
            if (j != i and _ends_sentence(words[j]) and words[j].end is not None
                    and abs(words[j].end - end) <= max_shift_s and len(set(moved)) == 1):
                target = j
                break
        if target is None:
            i += 1
            continue
        if target < i:
            owner[target + 1:i + 1] = [after] * (i - target)
        else:
            owner[i + 1:target + 1] = [before] * (target - i)
        i = max(i, target) + 1
    return owner


def _ends_sentence(word: Word) -> bool:
    return word.text.endswith(_SENTENCE_ENDS)


def _regroup(seg: Segment, owner: list[int], turns: list[Segment]) -> list[Segment]:
    """Runs of words of ``seg`` with the same speaker, as segments."""
    groups: list[tuple[Segment, list[Word]]] = []
    for word, t in zip(seg.words, owner):
        turn = turns[t]
        if groups and (groups[-1][0].speaker, groups[-1][0].speaker_name) == (turn.speaker, turn.speaker_name):
            groups[-1][1].append(word)
        else:
            groups.append((turn, [word]))
    if len(groups) == 1:  # one speaker: the ASR segment keeps its bounds
        turn = groups[0][0]
        return [replace(seg, speaker=turn.speaker, speaker_name=turn.speaker_name)]
    out = []
    for turn, words in groups:
        # every group holds a timed word: untimed words joined a neighbour's group
        timed = [w for w in words if w.start is not None and w.end is not None]
        out.append(Segment(start=min(w.start for w in timed), end=max(w.end for w in timed),
                           speaker=turn.speaker,
                           text=" ".join(w.text for w in words), words=tuple(words),
                           speaker_name=turn.speaker_name))
    return out


@dataclass(frozen=True)
class AttributeOptions(StageOptions):
    """Options of word attribution: each word goes to the turn it overlaps most.

    ``sentence_snap_s``: a change of speaker inside a sentence moves to the nearest sentence end
    of the same ASR segment at most this many seconds (and :data:`SNAP_WORDS` words) away; 0:
    changes stay where the turns put them.
    """

    sentence_snap_s: float = bounded(1.0, ge=0.0, le=10.0)


class WordAttributor:
    """The ``overlap`` backend: :func:`attribute_words` of the ASR words and the diarization turns."""

    Options = AttributeOptions

    def __init__(self, options: AttributeOptions | None = None, device: str = "auto") -> None:
        self.options = options or AttributeOptions()

    def __call__(self, segments: list[Segment], turns: list[Segment]) -> list[Segment]:
        return attribute_words(segments, turns, self.options.sentence_snap_s) if turns else segments


BACKENDS = {"overlap": "speechkit.stages.attribute:WordAttributor"}
DEFAULT_BACKEND = "overlap"


def build(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> AttributeStage:
    """The attribution stage for a recipe's ``stages.attribute``."""
    return AttributeStage(spec, device, reads)


class AttributeStage(BackendStage[list[Segment]]):
    """The ASR words re-cut into segments carrying the diarization's speaker labels."""

    name = "attribute"
    backends = BACKENDS
    reads = ("asr", "diarize")
    version = 2  # 2: a change of speaker inside a sentence moves to a sentence end nearby

    def run(self, record: MeetingRecord) -> list[Segment]:
        return self.backend(record.result("asr"), record.result("diarize").turns)

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        """The transcript: the words in single-speaker segments, each with its speaker's label."""
        return {TRANSCRIPT: Transcript(record.session_id, record.result(self.name))}
