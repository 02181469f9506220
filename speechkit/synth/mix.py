"""Placing turns on a meeting timeline: floor-transfer gaps, overlaps, interruptions, backchannels.

Follows the OSynth paper (App. "Floor-transfer offsets", "Substantive turn-level overlap",
"Backchannels"): speaker changes draw a floor-transfer offset (FTO) from a mixture (short gaps,
a tail of long pauses, a negative component giving brief overlaps); same-speaker continuations
draw short pauses; some speaker changes interrupt a turn that carries no fact (``Turn.interruptible``),
truncating it at a word while its last one or two words still overlap the interrupter; a turn
written as an interruption (``Turn.overlaps``) starts two or three words before the end of the
unfinished turn it cuts into, so both are heard at once; backchannels overlay the floor holder's
turn without advancing the clock. A final sweep drops any backchannel that would make a person
overlap themselves.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from speechkit.synth.dialogue import Turn
from speechkit.synth.spoken import Piece
from speechkit.synth.voices import SAMPLE_RATE, Utterance


@dataclass(frozen=True)
class TimingOptions:
    """Timeline parameters (seconds). Recorded in the workspace metadata so they can be re-fit."""

    lead_in: float = 0.6
    tail: float = 0.8
    gap_median: float = 0.25          # log-normal short FTO: median and spread
    gap_sigma: float = 0.5
    long_gap_p: float = 0.12          # topic-boundary pauses, uniform in long_gap
    long_gap: tuple[float, float] = (0.8, 1.6)
    overlap_p: float = 0.12           # negative FTO: brief overlaps at the boundary
    overlap: tuple[float, float] = (0.1, 0.5)
    pause: tuple[float, float] = (0.15, 0.6)   # same-speaker continuation
    interrupt_p: float = 0.08         # interruptions truncate the previous turn at a word
    min_interrupt_words: int = 8
    overlap_words: tuple[int, int] = (2, 4)   # a written interruption overlaps 2-3 words (end excluded)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Placed:
    """A turn on the timeline: its (possibly truncated) pieces, audio and absolute word spans."""

    turn: Turn
    start: float
    audio: np.ndarray
    spans: list[tuple[float, float]]
    pieces: list[Piece] = field(default_factory=list)
    truncated: bool = False

    @property
    def speaker(self) -> str:
        return self.turn.speaker

    @property
    def end(self) -> float:
        return self.spans[-1][1]

    @property
    def words(self) -> list[str]:
        return [w for p in self.pieces for w in p.words]


def _sample_fto(rng: np.random.Generator, same: bool, o: TimingOptions) -> float:
    if same:
        return float(rng.uniform(*o.pause))
    u = rng.random()
    if u < o.overlap_p:
        return -float(rng.uniform(*o.overlap))
    if u < o.overlap_p + o.long_gap_p:
        return float(rng.uniform(*o.long_gap))
    return float(min(o.gap_median * np.exp(o.gap_sigma * rng.standard_normal()), 1.2))


def _at(start: float, utt: Utterance, turn: Turn) -> Placed:
    start = round(start * SAMPLE_RATE) / SAMPLE_RATE
    spans = [(round(start + s, 3), round(start + e, 3)) for s, e in utt.spans]
    return Placed(turn=turn, start=start, audio=utt.audio, spans=spans, pieces=list(turn.pieces))


def _truncate(p: Placed, rng: np.random.Generator) -> int | None:
    """Cut ``p`` after a piece in its second half; returns the index of the last kept word."""
    counts = np.cumsum([len(piece.words) for piece in p.pieces])
    n = int(counts[-1])
    cuts = [k for k in range(len(p.pieces) - 2) if n // 2 <= counts[k] <= n - 3]
    if not cuts:
        return None
    k = cuts[int(rng.integers(len(cuts)))]
    last = int(counts[k]) - 1
    end = p.spans[last][1] + 0.02
    cut = int(round((end - p.start) * SAMPLE_RATE))
    fade = min(int(0.02 * SAMPLE_RATE), cut)
    audio = p.audio[:cut].copy()
    audio[cut - fade:] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
    p.audio, p.spans, p.pieces, p.truncated = audio, p.spans[:last + 1], p.pieces[:k + 1], True
    return last


def _overlaps_self(p: Placed, placed: list[Placed]) -> bool:
    return any(q.speaker == p.speaker and q is not p and p.spans[0][0] < q.end + 0.05 and q.spans[0][0] < p.end + 0.05
               for q in placed)


def place(turns: list[Turn], utterances: list[Utterance], rng: np.random.Generator,
          options: TimingOptions = TimingOptions()) -> list[Placed]:
    """Lay turns out in time; returns the placed turns sorted by start (dropped backchannels omitted)."""
    placed: list[Placed] = []
    last: Placed | None = None
    speaker_end: dict[str, float] = {}
    for turn, utt in zip(turns, utterances):
        if turn.backchannel:
            if last is None or last.speaker == turn.speaker or len(last.spans) < 4:
                continue
            first = int(np.ceil(0.4 * len(last.spans)))
            k = int(rng.integers(first, len(last.spans) - 1))
            p = _at(last.spans[k][1] + float(rng.uniform(0.0, 0.15)), utt, turn)
            if not _overlaps_self(p, placed):
                placed.append(p)
            continue
        if last is None:
            start = options.lead_in
        elif turn.overlaps and last.speaker != turn.speaker:
            # a written interruption: start inside the last words of the (unfinished) previous turn
            back = min(len(last.spans), int(rng.integers(*options.overlap_words)))
            start = last.spans[-back][0]
        elif (last.speaker != turn.speaker and last.turn.interruptible and rng.random() < options.interrupt_p
              and len(last.spans) >= options.min_interrupt_words
              and (kept := _truncate(last, rng)) is not None):
            # the interrupted speaker goes on for a word or two under the interruption, then stops
            start = last.spans[max(kept - int(rng.integers(0, options.overlap_words[0])), 0)][0] + 0.05
        else:
            start = last.end + _sample_fto(rng, last.speaker == turn.speaker, options)
            start = max(start, last.spans[0][0] + 0.3)
        start = max(start, speaker_end.get(turn.speaker, 0.0) + 0.1, 0.0)
        p = _at(start, utt, turn)
        placed.append(p)
        speaker_end[turn.speaker] = p.end
        last = p
    # Truncation can leave a backchannel after its own speaker's next turn began: drop those.
    kept = [p for p in placed if not (p.turn.backchannel and _overlaps_self(p, placed))]
    return sorted(kept, key=lambda p: (p.start, p.speaker))


def overlap_share(placed: list[Placed], step: float = 0.01) -> float:
    """The share of the time anyone speaks (inside a word) in which two or more people speak."""
    if not placed:
        return 0.0
    length = int(np.ceil(max(p.end for p in placed) / step)) + 1
    count = np.zeros(length, np.int16)
    for speaker in {p.speaker for p in placed}:
        mask = np.zeros(length, bool)
        for p in placed:
            if p.speaker == speaker:
                for s, e in p.spans:
                    mask[int(s / step):int(np.ceil(e / step))] = True
        count += mask
    speech = int((count > 0).sum())
    return round(float((count > 1).sum()) / speech, 4) if speech else 0.0


def tracks(placed: list[Placed], tail: float = TimingOptions.tail) -> dict[str, np.ndarray]:
    """One dry signal per speaker, all the length of the meeting."""
    length = int(round((max(p.start + len(p.audio) / SAMPLE_RATE for p in placed) + tail) * SAMPLE_RATE))
    out: dict[str, np.ndarray] = {}
    for p in placed:
        track = out.setdefault(p.speaker, np.zeros(length, np.float32))
        at = int(round(p.start * SAMPLE_RATE))
        track[at:at + len(p.audio)] += p.audio
    return out
