"""Clip planning for window-by-window decoders: speech regions into clips, clips into windows.

:func:`plan_clips` cuts the speech regions of a recording into clips of at most ``max_clip_s``
seconds (a long region is cut at a pause; neighbours share a clip, with the pause between them,
only where asked); :func:`pack_clips` groups
the clips into windows of at most ``max_clip_s`` seconds of audio together, and
:func:`join_clips` lays each window's clips end to end, so that a decoder with a fixed input
length (Whisper: 30 s) runs its encoder once per window, not once per clip. :func:`span_index`
maps a time back to the clip or window that holds it.
"""
from __future__ import annotations

from bisect import bisect_right

import numpy as np

from speechkit.core.audio import SAMPLE_RATE

#: (start in the joined audio, end there, start in the recording), all in seconds
Piece = tuple[float, float, float]


def plan_clips(audio: np.ndarray, speech: list[tuple[float, float]], max_clip_s: float = 30.0,
               join_neighbours: bool = False, sample_rate: int = SAMPLE_RATE) -> list[tuple[float, float]]:
    """The speech regions as clips of at most ``max_clip_s`` seconds: a longer region is cut at
    its quietest 100 ms in the last third of each window.

    ``join_neighbours``: neighbouring regions share a clip, the pause between them included,
    while the clip spans at most ``max_clip_s`` (for a decoder that runs once per clip). Without
    it only regions that touch share a clip, and :func:`join_clips` lays the clips end to end: a
    pause is not decoded (it costs encoder windows, and noise in it can make the decoder write
    words).
    """
    duration = len(audio) / sample_rate
    pieces: list[tuple[float, float]] = []
    for start, end in sorted((max(0.0, s), min(duration, e)) for s, e in speech):
        while end - start > max_clip_s:
            cut = _quietest(audio, start + max_clip_s * 2 / 3, start + max_clip_s, sample_rate)
            pieces.append((start, cut))
            start = cut
        if end > start:
            pieces.append((start, end))
    clips: list[tuple[float, float]] = []
    for start, end in pieces:
        if clips and end - clips[-1][0] <= max_clip_s and (join_neighbours or start <= clips[-1][1]):
            clips[-1] = (clips[-1][0], end)
        else:
            clips.append((start, end))
    return clips


def _quietest(audio: np.ndarray, lo: float, hi: float, sample_rate: int) -> float:
    """Start time (s) of the 100 ms frame with the least energy in [lo, hi)."""
    frame = sample_rate // 10
    span = audio[int(lo * sample_rate):int(hi * sample_rate)]
    n = len(span) // frame
    if n == 0:
        return hi
    energy = (span[:n * frame].reshape(n, frame) ** 2).sum(axis=1)
    return lo + int(np.argmin(energy)) * frame / sample_rate


def pack_clips(clips: list[tuple[float, float]], max_clip_s: float = 30.0) -> list[list[int]]:
    """Clip indices grouped into windows whose clips last at most ``max_clip_s`` seconds together.

    First fit in time order: each clip joins the first window with room for it, so the short
    clips left between long ones share windows. Each window is decoded as one 30 s input.
    """
    windows: list[list[int]] = []
    room: list[float] = []
    for i, (start, end) in enumerate(clips):
        fits = next((w for w, left in enumerate(room) if end - start <= left + 1e-6), None)
        if fits is None:
            windows.append([i])
            room.append(max_clip_s - (end - start))
        else:
            windows[fits].append(i)
            room[fits] -= end - start
    return windows


def join_clips(audio: np.ndarray, windows: list[list[tuple[float, float]]],
               sample_rate: int = SAMPLE_RATE) -> tuple[np.ndarray, list[dict[str, float]], list[Piece]]:
    """The samples of each window's clips laid end to end, window after window, the windows'
    spans in that joined audio (``{"start", "end"}`` in seconds, faster-whisper's
    ``clip_timestamps``) and where each clip went (in joined-audio order)."""
    parts, spans, pieces = [], [], []
    at = 0
    for window in windows:
        first = at
        for start, end in window:
            a, b = round(start * sample_rate), round(end * sample_rate)
            parts.append(audio[a:b])
            pieces.append((at / sample_rate, (at + b - a) / sample_rate, a / sample_rate))
            at += b - a
        spans.append({"start": first / sample_rate, "end": at / sample_rate})
    return np.concatenate(parts), spans, pieces


def span_index(starts: list[float], t: float) -> int:
    """Index of the span (clip, window, piece: given by their sorted ``starts``) holding time
    ``t``: the last one starting at or before it, the first for an earlier time."""
    return max(0, bisect_right(starts, t) - 1)
