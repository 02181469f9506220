"""Diarization: who spoke when in one recording.

The ``embedding`` backend of the diarization stage.

:class:`Diarizer` (embedding clustering): sliding windows over the speech regions, one speaker
embedding per window (batched, any :class:`speechkit.stages.diarize.embedders.Embedder`), the
windows clustered (:mod:`speechkit.stages.diarize.clustering`: by default average-linkage AHC
cut at the number of speakers with the best mean silhouette; clusters covering too little
speech do not count; or the number of speakers given) and every window given its nearest
centroid, a majority filter over neighbouring windows, and turns built by letting every 10 ms
frame take the label that its covering windows vote for (each window weighted towards its
centre), so turn boundaries fall between window centres.

The defaults (Resemblyzer, 1.5 s windows every 0.75 s, silhouette clustering with a 0.3
minimum, 2 s minimum cluster) were chosen on real speech (tuned on AMI excerpts trn00-trn04,
checked on trn05-trn09, the pyannote sample and the demo; ``benchmarks/eval_real.py``,
figures in docs/real-speech.md): AMI DER 0.227 with a 0.25 s collar each side (the old
similarity-threshold clustering 0.312; one label for all VAD speech 0.256), pyannote sample
0.028, demo 0.024.

Overlap (embedding backend, simple by design): a window whose embedding is nearly as close to a
second centroid as to its own (similarity gap at most ``overlap_margin`` and both similarities at
least ``threshold``) marks the middle ``step_s`` of that window as overlapped speech, and the
second speaker gets a turn there too, so turns of different speakers may overlap. Off by default
(``overlap_margin=None``): on the recordings above it added more false alarm than it recovered
missed overlap (sample DER 0.029 -> 0.045 at margin 0.02, 0.051 at 0.04).

Labels are ``SPEAKER_00``, ``SPEAKER_01``, ... in order of first appearance.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from speechkit.core.audio import SAMPLE_RATE, read_blocks, span_blocks
from speechkit.core.options import StageOptions, bounded
from speechkit.core.record import MeetingRecord
from speechkit.core.vectors import l2_normalize
from speechkit.stages.diarize import Diarization, speaker_label
from speechkit.stages.diarize.clustering import Method, cluster_windows
from speechkit.stages.diarize.embedders import Embedder, embedder_class, make_embedder
from speechkit.transcript import Segment

FRAME_S = 0.01


def sliding_windows(speech: list[tuple[float, float]], window_s: float,
                    step_s: float) -> list[tuple[float, float]]:
    """Windows of ``window_s`` every ``step_s`` inside each speech region, the last one flush with
    the region's end; a region shorter than a window is one window."""
    out: list[tuple[float, float]] = []
    for start, end in speech:
        if end - start <= window_s:
            out.append((start, end))
            continue
        n = int(np.ceil((end - start - window_s) / step_s))
        starts = [start + i * step_s for i in range(n)] + [end - window_s]
        out.extend((s, s + window_s) for s in starts)
    return out


@dataclass(frozen=True)
class DiarizerOptions(StageOptions):
    """Options of the embedding-clustering diarizer.

    - ``embedder``: the speaker embedder (``EMBEDDERS``: ``resemblyzer``, ``ecapa``) and
      ``embedder_options``, its own options.
    - ``window_s`` / ``step_s``: window length and hop in seconds.
    - ``clustering``: how windows become speakers (:mod:`~speechkit.stages.diarize.clustering`):
      ``silhouette`` (average-linkage AHC cut at the number of speakers with the best mean
      silhouette, one speaker when it is below ``min_silhouette``), ``nme-sc`` (spectral
      clustering with the normalised maximum eigengap) or ``threshold`` (AHC cut where the
      cosine similarity falls below ``threshold``, the method before real-speech tuning).
    - ``threshold``: cosine similarity for ``threshold`` clustering and for overlap detection;
      None takes the embedder's ``cluster_threshold``.
    - ``num_speakers``: the number of speakers, when known (also per call);
      ``min_speakers`` / ``max_speakers`` bound the estimate. The result can hold fewer
      speakers when a cluster loses all its windows to the reassignment or the smoothing.
    - ``min_window_s``: windows shorter than this (short speech regions) do not shape the
      clusters; they are labelled with the nearest centroid.
    - ``min_cluster_s``: a cluster covering less speech than this (windows x ``step_s``) does
      not count as a speaker; its windows go to the nearest remaining centroid.
    - ``smoothing``: width in windows of the majority filter over each speech region's labels
      (1 turns it off).
    - ``overlap_margin``: see the module docstring; None turns overlap output off.
    - ``keep_embeddings``: keep the window embeddings in the result.
    - ``embed_block_s``: longest span of windows (seconds) whose embeddings are computed at once
      when the stage streams a recording.
    """

    embedder: str = "resemblyzer"
    embedder_options: dict = field(default_factory=dict)
    window_s: float = bounded(1.5, gt=0.0, le=60.0)
    step_s: float = bounded(0.75, gt=0.0, le=60.0)
    clustering: Method = "silhouette"
    min_silhouette: float = bounded(0.3, ge=-1.0, le=1.0)
    threshold: float | None = bounded(None, ge=-1.0, le=1.0)
    num_speakers: int | None = bounded(None, ge=1, le=1000)
    min_speakers: int = bounded(1, ge=1, le=1000)
    max_speakers: int = bounded(8, ge=1, le=1000)
    min_window_s: float = bounded(0.5, ge=0.0, le=60.0)
    min_cluster_s: float = bounded(2.0, ge=0.0, le=3600.0)
    smoothing: int = bounded(3, ge=1, le=1001)
    overlap_margin: float | None = bounded(None, ge=0.0, le=2.0)
    keep_embeddings: bool = False
    embed_block_s: float = bounded(60.0, gt=0.0, le=3600.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        embedder_class(self.embedder).Options.from_dict(self.embedder_options, "stages.diarize.embedder_options")
        if not 0 < self.step_s <= self.window_s:
            raise ValueError(f"need 0 < step_s <= window_s, got step_s={self.step_s}, "
                             f"window_s={self.window_s}")
        if not 1 <= self.min_speakers <= self.max_speakers:
            raise ValueError(f"need 1 <= min_speakers <= max_speakers, got {self.min_speakers}, "
                             f"{self.max_speakers}")
        if self.smoothing < 1 or self.smoothing % 2 == 0:
            raise ValueError(f"smoothing must be an odd number of windows >= 1, got {self.smoothing}")



class Diarizer:
    """Diarization by clustering speaker embeddings of sliding windows (see the module docstring).

    Built from :class:`DiarizerOptions` (or keyword overrides of its defaults) and a ``device``;
    ``embedder`` gives an embedder object instead of the one the options name.
    """

    Options = DiarizerOptions

    def __init__(self, options: DiarizerOptions | None = None, device: str = "auto", *,
                 embedder: Embedder | None = None, **overrides: Any) -> None:
        self.options = (options or DiarizerOptions()).with_overrides(**overrides)
        self.embedder = embedder or make_embedder(self.options.embedder, device, **self.options.embedder_options)
        self.threshold = (self.options.threshold if self.options.threshold is not None
                          else float(self.embedder.cluster_threshold))

    def diarize(self, record: MeetingRecord) -> Diarization:
        """The diarization of a recording's speech regions (the VAD stage's result), reading the
        window embeddings ``embed_block_s`` of windows at a time, volume normalised by the whole
        recording's level, then clustering them all at once."""
        speech_result = record.result("vad")
        speech = [(s, e) for s, e in speech_result.regions if e - s >= FRAME_S]
        windows = sliding_windows(speech, self.options.window_s, self.options.step_s)
        blocks = span_blocks(windows, self.options.embed_block_s)
        if not blocks:
            return Diarization()
        embeddings = []
        for (start, _, block_windows), audio in zip(blocks, record.timed_iter(
                "audio", read_blocks(record.audio, blocks, record.channel))):
            embeddings.append(self.embedder.embed_windows(
                audio, [(s - start, e - start) for s, e in block_windows],
                level_dbfs=speech_result.level_dbfs))
        return self.from_embeddings(np.concatenate(embeddings), [w for *_, ws in blocks for w in ws],
                                    speech, num_speakers=record.speaker_count)

    def __call__(self, audio: np.ndarray, speech: list[tuple[float, float]],
                 num_speakers: int | None = None, sample_rate: int = SAMPLE_RATE) -> Diarization:
        """Diarize ``audio`` (mono) within the ``speech`` regions ``(start, end)`` in seconds."""
        duration = len(audio) / sample_rate
        speech = sorted((max(0.0, s), min(duration, e)) for s, e in speech)
        speech = [(s, e) for s, e in speech if e - s >= FRAME_S]
        if not speech:
            return Diarization()
        windows = sliding_windows(speech, self.options.window_s, self.options.step_s)
        emb = self.embedder.embed_windows(audio, windows, sample_rate=sample_rate)
        return self.from_embeddings(emb, windows, speech, num_speakers)

    def from_embeddings(self, emb: np.ndarray, windows: list[tuple[float, float]],
                        speech: list[tuple[float, float]], num_speakers: int | None = None) -> Diarization:
        """Diarization from the embeddings of ``windows = sliding_windows(speech, window_s,
        step_s)`` computed elsewhere (e.g. block by block over a long recording); ``speech`` is
        sorted and lies within the recording."""
        if not windows:
            return Diarization()
        k = num_speakers if num_speakers is not None else self.options.num_speakers
        labels = self._smooth(self._cluster(emb, windows, k), windows, speech)
        _, labels = np.unique(labels, return_inverse=True)  # clusters 0..n-1
        centroids = l2_normalize(np.stack([emb[labels == c].mean(0) for c in range(labels.max() + 1)]))
        runs = sorted(self._runs(labels, emb, centroids, windows, speech))
        order = {c: speaker_label(i) for i, c in enumerate(dict.fromkeys(c for _, _, c in runs))}
        return Diarization(
            turns=[Segment(start=s, end=e, speaker=order[c]) for s, e, c in runs],
            centroids={order[c]: centroids[c] for c in order},
            windows=windows,
            window_labels=[order.get(c, "") for c in labels],
            window_embeddings=emb if self.options.keep_embeddings else None)

    def _cluster(self, emb: np.ndarray, windows: list[tuple[float, float]],
                 k: int | None) -> np.ndarray:
        """A cluster index per window: :func:`~speechkit.stages.diarize.clustering.cluster_windows`
        with the options' method (``clustering``) and bounds."""
        o = self.options
        return cluster_windows(emb, windows, k, step_s=o.step_s, min_window_s=o.min_window_s,
                               min_cluster_s=o.min_cluster_s, method=o.clustering,
                               min_speakers=o.min_speakers, max_speakers=o.max_speakers,
                               min_silhouette=o.min_silhouette, threshold=self.threshold)

    def _smooth(self, labels: np.ndarray, windows: list[tuple[float, float]],
                speech: list[tuple[float, float]]) -> np.ndarray:
        """Majority filter of width ``smoothing`` over the windows of each speech region
        (ties keep the window's own label)."""
        if self.options.smoothing == 1:
            return labels
        out = labels.copy()
        half = self.options.smoothing // 2
        region = np.searchsorted([s for s, _ in speech], [s for s, _ in windows], side="right")
        for r in np.unique(region):
            idx = np.flatnonzero(region == r)
            for j, i in enumerate(idx):
                votes = np.bincount(labels[idx[max(0, j - half):j + half + 1]])
                best = np.flatnonzero(votes == votes.max())
                out[i] = labels[i] if labels[i] in best else best[0]
        return out

    def _runs(self, labels: np.ndarray, emb: np.ndarray, centroids: np.ndarray,
              windows: list[tuple[float, float]],
              speech: list[tuple[float, float]]) -> list[tuple[float, float, int]]:
        """``(start, end, cluster)`` turns: every 10 ms frame of speech takes the label its
        covering windows vote for (each weighted towards its centre); overlapped turns are added
        for ambiguous windows (``overlap_margin``)."""
        n_frames = int(np.ceil(max(e for _, e in speech) / FRAME_S))
        votes = np.zeros((n_frames, len(centroids)))
        second = np.full(n_frames, -1)
        sims = emb @ centroids.T
        for (s, e), c, sim in zip(windows, labels, sims):
            a = int(round(s / FRAME_S))
            b = max(a + 1, int(round(e / FRAME_S)))
            t = np.arange(a, b) + 0.5
            votes[a:b, c] += 1.0 - np.abs(t - (a + b) / 2) / ((b - a) / 2 + 1)  # triangle, > 0
            if self.options.overlap_margin is not None and len(centroids) > 1:
                o = int(np.argsort(sim)[-2]) if np.argmax(sim) == c else int(np.argmax(sim))
                if sim[o] >= self.threshold and sim[c] - sim[o] <= self.options.overlap_margin:
                    mid, half = (a + b) // 2, int(round(self.options.step_s / FRAME_S / 2))
                    second[max(a, mid - half):min(b, mid + half)] = o
        in_speech = np.zeros(n_frames, dtype=bool)
        for s, e in speech:
            in_speech[int(round(s / FRAME_S)):int(round(e / FRAME_S))] = True
        main = np.where(in_speech & (votes.sum(1) > 0), votes.argmax(1), -1)
        second = np.where(in_speech & (second != main), second, -1)
        return _frame_runs(main) + _frame_runs(second)


def _frame_runs(frame_labels: np.ndarray) -> list[tuple[float, float, int]]:
    """``(start, end, label)`` for the runs of equal, non-negative labels of a frame sequence."""
    change = np.flatnonzero(np.diff(frame_labels)) + 1
    bounds = np.concatenate(([0], change, [len(frame_labels)]))
    return [(round(a * FRAME_S, 3), round(b * FRAME_S, 3), int(frame_labels[a]))
            for a, b in zip(bounds[:-1], bounds[1:]) if frame_labels[a] >= 0]
