"""Diarization: who spoke when in one recording.

Two backends with one output, :class:`Diarization`:

- :class:`Diarizer` (embedding clustering): sliding windows over the speech regions, one speaker
  embedding per window (batched, any :class:`speechkit.embeddings.Embedder`), agglomerative
  clustering on cosine distance (average linkage) with the number of speakers estimated by a
  similarity threshold (clusters covering too little speech do not count) or given, a
  reassignment pass to the cluster centroids, a majority filter over neighbouring windows, and
  turns built by letting every 10 ms frame take the label that its covering windows vote for
  (each window weighted towards its centre), so turn boundaries fall between window centres.
- :class:`PyannoteDiarizer`: pyannote.audio's pretrained pipeline, when its weights are on this
  machine (a local folder, or the hub when online).

The defaults (Resemblyzer, 1.5 s windows every 0.75 s, threshold 0.70, 2 s minimum cluster) were
tuned on the real two-speaker call ``pyannote-sample/sample.wav`` with Silero VAD regions: DER
0.029 with a 0.25 s collar each side (0.162 without), two speakers for thresholds 0.69-0.72;
and checked on five AMI excerpts with reference speech regions (2-4 speakers found where the
reference has 3-4, one collapsed to 1; mean DER 0.40).

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
from pathlib import Path

import numpy as np

from speechkit.devices import resolve_device
from speechkit.embeddings import SAMPLE_RATE, Embedder, l2_normalize
from speechkit.errors import ModelNotAvailableError
from speechkit.transcript import Segment

FRAME_S = 0.01
PYANNOTE_HUB_ID = "pyannote/speaker-diarization-community-1"


@dataclass
class Diarization:
    """Speaker turns of one recording and a voice print (centroid) per speaker label.

    ``turns`` are sorted by start time and carry no words; two turns of different speakers may
    overlap. ``centroids`` maps each label to the L2-normalised mean embedding of its windows
    (what :func:`speechkit.identify.identify` scores). ``windows``, ``window_labels`` and
    ``window_embeddings`` describe the clustered windows (embedding backend only; a window whose
    cluster won no frame has the label ``""``).
    """

    turns: list[Segment] = field(default_factory=list)
    centroids: dict[str, np.ndarray] = field(default_factory=dict)
    windows: list[tuple[float, float]] = field(default_factory=list)
    window_labels: list[str] = field(default_factory=list)
    window_embeddings: np.ndarray | None = None

    @property
    def speakers(self) -> list[str]:
        """Speaker labels in order of first appearance."""
        return list(dict.fromkeys(t.speaker for t in self.turns))


def speaker_label(index: int) -> str:
    return f"SPEAKER_{index:02d}"


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


@dataclass
class Diarizer:
    """Diarization by clustering speaker embeddings of sliding windows.

    - ``window_s`` / ``step_s``: window length and hop in seconds.
    - ``threshold``: cosine similarity at or above which clusters merge (average linkage);
      None takes the embedder's ``cluster_threshold``. Ignored when the number of speakers is
      given.
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
    """

    embedder: Embedder
    window_s: float = 1.5
    step_s: float = 0.75
    threshold: float | None = None
    num_speakers: int | None = None
    min_speakers: int = 1
    max_speakers: int = 8
    min_window_s: float = 0.5
    min_cluster_s: float = 2.0
    smoothing: int = 3
    overlap_margin: float | None = None
    keep_embeddings: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.step_s <= self.window_s:
            raise ValueError(f"need 0 < step_s <= window_s, got step_s={self.step_s}, "
                             f"window_s={self.window_s}")
        if not 1 <= self.min_speakers <= self.max_speakers:
            raise ValueError(f"need 1 <= min_speakers <= max_speakers, got {self.min_speakers}, "
                             f"{self.max_speakers}")
        if self.smoothing < 1 or self.smoothing % 2 == 0:
            raise ValueError(f"smoothing must be an odd number of windows >= 1, got {self.smoothing}")
        if self.threshold is None:
            self.threshold = float(self.embedder.cluster_threshold)

    def __call__(self, audio: np.ndarray, speech: list[tuple[float, float]],
                 num_speakers: int | None = None, sample_rate: int = SAMPLE_RATE) -> Diarization:
        """Diarize ``audio`` (mono) within the ``speech`` regions ``(start, end)`` in seconds."""
        duration = len(audio) / sample_rate
        speech = sorted((max(0.0, s), min(duration, e)) for s, e in speech)
        speech = [(s, e) for s, e in speech if e - s >= FRAME_S]
        if not speech:
            return Diarization()
        windows = sliding_windows(speech, self.window_s, self.step_s)
        emb = self.embedder.embed_windows(audio, windows, sample_rate=sample_rate)
        return self.from_embeddings(emb, windows, speech, num_speakers)

    def from_embeddings(self, emb: np.ndarray, windows: list[tuple[float, float]],
                        speech: list[tuple[float, float]], num_speakers: int | None = None) -> Diarization:
        """Diarization from the embeddings of ``windows = sliding_windows(speech, window_s,
        step_s)`` computed elsewhere (e.g. block by block over a long recording); ``speech`` is
        sorted and lies within the recording."""
        if not windows:
            return Diarization()
        k = num_speakers if num_speakers is not None else self.num_speakers
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
            window_embeddings=emb if self.keep_embeddings else None)

    def _cluster(self, emb: np.ndarray, windows: list[tuple[float, float]],
                 k: int | None) -> np.ndarray:
        """A cluster index per window.

        The long windows are clustered (average linkage on cosine distance). With ``k`` unknown
        the dendrogram is cut at ``1 - threshold``; the clusters covering at least
        ``min_cluster_s`` count as speakers, and their number is clamped to
        [min_speakers, max_speakers]. With a target number the cut is the coarsest one with
        that many such clusters. Windows of the small clusters and short windows then go to the
        nearest centroid.
        """
        from scipy.cluster.hierarchy import fcluster, linkage

        if k is not None and k < 1:
            raise ValueError(f"num_speakers must be >= 1, got {k}")
        long = np.array([e - s >= self.min_window_s for s, e in windows])
        if long.sum() < 2:
            long[:] = True
        x = emb[long]
        if len(x) < 2 or k == 1:
            return np.zeros(len(emb), dtype=int)
        tree = linkage(x, method="average", metric="cosine")

        def big(labels: np.ndarray) -> np.ndarray:
            """Which clusters (indexed by fcluster label) cover at least min_cluster_s."""
            seconds = np.bincount(labels) * self.step_s
            return seconds >= min(self.min_cluster_s, seconds.max())

        labels = None
        if k is None:
            labels = fcluster(tree, t=1.0 - self.threshold, criterion="distance")
            n = int(big(labels).sum())
            k = min(max(n, self.min_speakers), self.max_speakers)
            if k != n:
                labels = None
        if labels is None:  # the coarsest cut with k big clusters (or the finest cut)
            for m in range(min(k, len(x)), len(x) + 1):
                labels = fcluster(tree, t=m, criterion="maxclust")
                if int(big(labels).sum()) >= k:
                    break
        keep = big(labels)[labels]
        mask = np.zeros_like(long)
        mask[np.flatnonzero(long)[keep]] = True
        return self._reassign(emb, labels[keep], mask)

    @staticmethod
    def _reassign(emb: np.ndarray, long_labels: np.ndarray, long: np.ndarray) -> np.ndarray:
        """Label every window with its most similar cluster centroid (one k-means-style pass)."""
        ids = np.unique(long_labels)
        x = emb[long]
        centroids = l2_normalize(np.stack([x[long_labels == c].mean(0) for c in ids]))
        return np.argmax(emb @ centroids.T, axis=1)

    def _smooth(self, labels: np.ndarray, windows: list[tuple[float, float]],
                speech: list[tuple[float, float]]) -> np.ndarray:
        """Majority filter of width ``smoothing`` over the windows of each speech region
        (ties keep the window's own label)."""
        if self.smoothing == 1:
            return labels
        out = labels.copy()
        half = self.smoothing // 2
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
            if self.overlap_margin is not None and len(centroids) > 1:
                o = int(np.argsort(sim)[-2]) if np.argmax(sim) == c else int(np.argmax(sim))
                if sim[o] >= self.threshold and sim[c] - sim[o] <= self.overlap_margin:
                    mid, half = (a + b) // 2, int(round(self.step_s / FRAME_S / 2))
                    second[max(a, mid - half):min(b, mid + half)] = o
        in_speech = np.zeros(n_frames, dtype=bool)
        for s, e in speech:
            in_speech[int(round(s / FRAME_S)):int(round(e / FRAME_S))] = True
        main = np.where(in_speech & (votes.sum(1) > 0), votes.argmax(1), -1)
        second = np.where(in_speech & (second != main), second, -1)
        return _frame_runs(main) + _frame_runs(second)


def _in_hf_cache(repo_id: str, filename: str) -> bool:
    """True if ``filename`` of hub repository ``repo_id`` is in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(repo_id, filename), str)


def _frame_runs(frame_labels: np.ndarray) -> list[tuple[float, float, int]]:
    """``(start, end, label)`` for the runs of equal, non-negative labels of a frame sequence."""
    change = np.flatnonzero(np.diff(frame_labels)) + 1
    bounds = np.concatenate(([0], change, [len(frame_labels)]))
    return [(round(a * FRAME_S, 3), round(b * FRAME_S, 3), int(frame_labels[a]))
            for a, b in zip(bounds[:-1], bounds[1:]) if frame_labels[a] >= 0]


@dataclass
class PyannoteDiarizer:
    """pyannote.audio's speaker-diarization pipeline.

    ``source`` is a local folder holding the pipeline (``config.yaml`` and the models it refers
    to) or a hub id; a hub id without a ``token`` is used only when it is already in the
    Hugging Face cache (the pipelines are gated: downloading needs a token). ``speech`` regions are not used: the pipeline finds speech itself.
    """

    source: str | Path = PYANNOTE_HUB_ID
    device: str = "auto"
    token: str | None = None

    def __post_init__(self) -> None:
        self.device = resolve_device(self.device)
        self._pipeline = self._load()

    def _load(self):
        try:
            from pyannote.audio import Pipeline
        except ImportError as e:
            raise ModelNotAvailableError(
                f"the pyannote backend needs pyannote.audio (pip install 'speechkit[stages]'): {e}") from e
        import torch

        how_to = (f"on a machine with a network, accept the model's conditions on huggingface.co and "
                  f"download it (`hf download {PYANNOTE_HUB_ID} --local-dir DIR`), "
                  f"then pass source=DIR")
        folder = Path(self.source).expanduser()
        if folder.exists():
            if not (folder / "config.yaml").is_file() and folder.suffix != ".yaml":
                raise ModelNotAvailableError(f"{folder}: no config.yaml of a pyannote pipeline; {how_to}")
            source = str(folder.resolve())
        elif str(self.source).startswith((".", "/", "~")):
            raise ModelNotAvailableError(f"{self.source}: no such pyannote pipeline folder; {how_to}")
        else:
            source = str(self.source)
            if self.token is None and not _in_hf_cache(source, "config.yaml"):
                raise ModelNotAvailableError(f"pyannote pipeline {source!r} is not in the local "
                                             f"Hugging Face cache; {how_to}")
        try:
            pipeline = Pipeline.from_pretrained(source, token=self.token)
        except Exception as e:  # hub, cache and gated-model failures come in many types
            raise ModelNotAvailableError(f"pyannote pipeline {source!r} could not be loaded "
                                         f"({type(e).__name__}: {e}); {how_to}") from e
        if pipeline is None:  # pyannote returns None for gated models without a token
            raise ModelNotAvailableError(f"pyannote pipeline {source!r} is not available; {how_to}")
        return pipeline.to(torch.device(self.device))

    def __call__(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                 num_speakers: int | None = None, sample_rate: int = SAMPLE_RATE) -> Diarization:
        import torch

        waveform = torch.from_numpy(np.asarray(audio, dtype=np.float32)).reshape(1, -1)
        kwargs = {} if num_speakers is None else {"num_speakers": num_speakers}
        output = self._pipeline({"waveform": waveform, "sample_rate": sample_rate}, **kwargs)
        annotation = getattr(output, "speaker_diarization", output)  # pyannote 4 / 3
        embeddings = getattr(output, "speaker_embeddings", None)
        tracks = sorted(annotation.itertracks(yield_label=True), key=lambda x: (x[0].start, x[0].end))
        order = list(dict.fromkeys(label for _, _, label in tracks))
        rename = {label: speaker_label(i) for i, label in enumerate(order)}
        turns = [Segment(start=float(seg.start), end=float(seg.end), speaker=rename[label])
                 for seg, _, label in tracks]
        centroids = {}
        if embeddings is not None:
            for row, label in zip(np.asarray(embeddings), annotation.labels()):
                if label in rename and np.all(np.isfinite(row)):
                    centroids[rename[label]] = l2_normalize(row)
        return Diarization(turns=turns, centroids=centroids)
