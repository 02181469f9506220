"""Speaker clustering and speaker-count estimation on a matrix of speaker embeddings.

Pure numpy / scipy / scikit-learn functions, one row per embedding (e.g. one per sliding window
of the diarization stage). The diarizer calls :func:`cluster_windows`; the other functions are
its parts and the alternatives it was measured against (``benchmarks/eval_real.py``,
``docs/real-speech.md``).

Default method (``method="silhouette"``): agglomerative clustering (average linkage on cosine
distance) of the windows that are long enough, the dendrogram cut into k = 2..``max_speakers``
clusters, and the cut with the highest mean silhouette (Rousseeuw 1987, cosine distance) kept
when that silhouette reaches ``min_silhouette`` and beats what one voice scores by chance
(:func:`null_silhouette`: the same procedure on samples of one Gaussian with the windows' mean
and covariance, as the gap statistic draws its reference); otherwise the recording has one speaker.
The chance level matters on short recordings: a dozen windows of one voice cut in two score
0.32-0.45 (jfk.flac, 14 windows: 0.324 against a chance level of 0.352), above the fixed floor.
Clusters covering less than ``min_cluster_s`` of speech then do not count as speakers, and every
window (short ones included) goes to its most similar remaining centroid. The silhouette compares
each window's distance to its own cluster with its distance to the nearest other cluster, so the
criterion does not depend on the absolute similarity scale of the embedder or the room (with
Resemblyzer, unrelated voices score 0.5-0.8 cosine and one far-field talker's windows 0.6-0.8,
so a fixed similarity threshold that splits a telephone call over-splits a meeting room).

Measured with Resemblyzer windows of 1.5 s every 0.75 s over Silero VAD regions (tuned on AMI
excerpts trn00-trn04, checked on trn05-trn09, the pyannote sample and the six demo meetings;
DER with a 0.25 s collar each side, overlap scored, pooled over recordings):

============================  =========  =========  ======  ======
clustering                    AMI tune   AMI held    sample   demo
============================  =========  =========  ======  ======
old: AHC threshold 0.70       0.218      0.362      0.019   0.035
silhouette, min 0.3 (default) 0.131      0.278      0.026   0.024
NME-SC (Park et al. 2020)     0.221      0.303      0.012   0.029
============================  =========  =========  ======  ======

``method="nme-sc"`` gives the normalised-maximum-eigengap spectral clustering of Park et al.,
"Auto-tuning spectral clustering for speaker diarization using normalized maximum eigengap",
IEEE SPL 27 (2020), written from the paper: cosine affinity scaled to [0, 1], each row binarised
to its p nearest neighbours and symmetrised, p chosen to minimise (p / n) / (max eigengap /
largest eigenvalue) of the graph Laplacian, the number of speakers at the maximum eigengap,
k-means on the Laplacian's first k eigenvectors.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from speechkit.core.vectors import l2_normalize

__all__ = [
    "METHODS",
    "Method",
    "cluster_windows",
    "cosine_affinity",
    "keep_large_clusters",
    "nme_sc",
    "nme_sc_estimate",
    "null_silhouette",
    "silhouette_ahc",
    "threshold_ahc",
]

Method = Literal["silhouette", "nme-sc", "threshold"]
#: Samples of the one-voice reference distribution that :func:`null_silhouette` draws.
NULL_DRAWS = 20
#: Above this many windows (5 min of speech at 0.75 s steps) the one-voice test is skipped.
MAX_NULL_WINDOWS = 400
METHODS = get_args(Method)


def cosine_affinity(x: np.ndarray, scale: bool = True) -> np.ndarray:
    """Cosine similarity of every pair of rows; with ``scale``, min-max scaled to [0, 1]."""
    xn = l2_normalize(x, np.float64)
    a = xn @ xn.T
    if scale:
        lo, hi = a.min(), a.max()
        a = (a - lo) / (hi - lo) if hi > lo else np.ones_like(a)
    return a


def _linkage(x: np.ndarray, method: str) -> np.ndarray:
    from scipy.cluster.hierarchy import linkage

    xn = l2_normalize(x, np.float64)
    if method in ("ward", "centroid", "median"):
        return linkage(xn, method=method, metric="euclidean")
    return linkage(xn, method=method, metric="cosine")


def _cut(tree: np.ndarray, k: int) -> np.ndarray:
    from scipy.cluster.hierarchy import fcluster

    return fcluster(tree, t=k, criterion="maxclust") - 1


def silhouette_ahc(x: np.ndarray, num_speakers: int | None = None, *, min_speakers: int = 1,
                   max_speakers: int = 6, min_silhouette: float = 0.3,
                   linkage_method: str = "average", null_draws: int = NULL_DRAWS) -> np.ndarray:
    """Cluster labels (0..k-1) of the rows of ``x``: AHC with k chosen by the mean silhouette.

    With ``num_speakers`` the dendrogram is cut into that many clusters. Otherwise every cut with
    ``max(2, min_speakers)`` to ``max_speakers`` clusters is scored by its mean silhouette
    (cosine distance), and the best cut is kept if its silhouette is at least
    ``min_silhouette`` and above :func:`null_silhouette` of ``x`` (or ``min_speakers >= 2``);
    else all rows get label 0.
    """
    x = np.asarray(x)
    n = len(x)
    if num_speakers is not None and num_speakers < 1:
        raise ValueError(f"num_speakers must be >= 1, got {num_speakers}")
    if n < 3 or num_speakers == 1 or max_speakers < 2:
        return np.zeros(n, dtype=int)
    if num_speakers is not None:
        return _cut(_linkage(x, linkage_method), min(num_speakers, n))
    ks = range(max(2, min_speakers), min(max_speakers, n - 1) + 1)
    best_score, best = _best_cut(x, ks, linkage_method)
    if min_speakers < 2 and (best_score < min_silhouette
                             or best_score <= null_silhouette(x, ks, linkage_method, null_draws)):
        return np.zeros(n, dtype=int)
    return best


def _best_cut(x: np.ndarray, ks: Sequence[int], linkage_method: str) -> tuple[float, np.ndarray]:
    """The highest mean silhouette (cosine) of the dendrogram's cuts into ``ks`` clusters, and that cut."""
    from sklearn.metrics import silhouette_score

    tree, xn = _linkage(x, linkage_method), l2_normalize(x, np.float64)
    best_score, best = -np.inf, np.zeros(len(x), dtype=int)
    for k in ks:
        labels = _cut(tree, k)
        if len(np.unique(labels)) < 2:
            continue
        score = float(silhouette_score(xn, labels, metric="cosine"))
        if score > best_score:
            best_score, best = score, labels
    return best_score, best


def null_silhouette(x: np.ndarray, ks: Sequence[int], linkage_method: str = "average",
                    draws: int = NULL_DRAWS, seed: int = 0) -> float:
    """The best-cut silhouette that one voice gives by chance: its mean over ``draws`` samples of
    ``len(x)`` rows from one Gaussian with the rows' mean and covariance (a reference distribution
    of one cluster, as the gap statistic of Tibshirani, Walther and Hastie (2001) draws one),
    each clustered as :func:`silhouette_ahc` clusters. -inf when ``draws`` is 0 or ``x`` has more
    than ``MAX_NULL_WINDOWS`` rows (there the sampling noise of the silhouette is small and the
    test is not needed; its cost grows with the square of the rows). Seeded: the same rows give
    the same value."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if draws == 0 or n > MAX_NULL_WINDOWS:
        return -np.inf
    rng = np.random.default_rng(seed)
    mean, centred = x.mean(axis=0), x - x.mean(axis=0)
    scores = [_best_cut(mean + rng.standard_normal((n, n)) @ centred / np.sqrt(n), ks, linkage_method)[0]
              for _ in range(draws)]
    return float(np.mean(scores))


def _binarize(a: np.ndarray, p: int) -> np.ndarray:
    """Keep the ``p`` largest entries of each row as 1 (the rest 0), then symmetrise."""
    n = len(a)
    out = np.zeros_like(a)
    idx = np.argsort(-a, axis=1)[:, :p]
    out[np.repeat(np.arange(n), p), idx.ravel()] = 1.0
    return 0.5 * (out + out.T)


def _laplacian(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    np.fill_diagonal(a, 0.0)
    return np.diag(a.sum(axis=1)) - a


def nme_sc_estimate(x: np.ndarray, max_speakers: int = 8, max_rp: float = 0.25,
                    min_p: int = 2) -> tuple[int, int]:
    """NME-SC's number of speakers and the chosen neighbour count p, for the rows of ``x``.

    p runs over ``min_p .. max(min_p, floor(max_rp * n))``; for each, the Laplacian of the
    p-neighbour binarised affinity gives eigenvalues l_1 <= l_2 <= ...; the estimate is the
    index of the largest gap among the first ``max_speakers`` and p minimises
    ``(p / n) / (gap / max eigenvalue)``.
    """
    a = cosine_affinity(x)
    n = len(a)
    if n < 3:
        return 1, 1
    best: tuple[float, int, int] | None = None
    for p in range(min_p, max(min_p, int(n * max_rp)) + 1):
        lam = np.linalg.eigvalsh(_laplacian(_binarize(a, min(p, n))))
        gaps = np.diff(lam[:min(max_speakers, n - 1) + 1])
        k = int(np.argmax(gaps)) + 1
        ratio = (p / n) / (gaps[k - 1] / (lam.max() + 1e-10) + 1e-10)
        if best is None or ratio < best[0]:
            best = (ratio, p, k)
    assert best is not None
    return best[2], best[1]


def nme_sc(x: np.ndarray, num_speakers: int | None = None, *, max_speakers: int = 8,
           max_rp: float = 0.25, seed: int = 0) -> np.ndarray:
    """Cluster labels of the rows of ``x`` by NME-SC (see the module docstring)."""
    from sklearn.cluster import KMeans

    x = np.asarray(x)
    if len(x) < 3 or num_speakers == 1:
        return np.zeros(len(x), dtype=int)
    k, p = nme_sc_estimate(x, max_speakers, max_rp)
    if num_speakers is not None:
        k = min(num_speakers, len(x))
    if k == 1:
        return np.zeros(len(x), dtype=int)
    _, vectors = np.linalg.eigh(_laplacian(_binarize(cosine_affinity(x), p)))
    return KMeans(k, n_init=10, random_state=seed).fit_predict(vectors[:, :k])


def threshold_ahc(x: np.ndarray, num_speakers: int | None = None, *, threshold: float = 0.70,
                  linkage_method: str = "average") -> np.ndarray:
    """AHC cut at cosine similarity ``threshold`` (or into ``num_speakers`` clusters): the
    diarizer's clustering before issue 13, kept as the baseline."""
    x = np.asarray(x)
    if len(x) < 2 or num_speakers == 1:
        return np.zeros(len(x), dtype=int)
    from scipy.cluster.hierarchy import fcluster

    tree = _linkage(x, linkage_method)
    if num_speakers is not None:
        return _cut(tree, min(num_speakers, len(x)))
    return fcluster(tree, t=1.0 - threshold, criterion="distance") - 1


def keep_large_clusters(labels: np.ndarray, seconds: np.ndarray | float, min_cluster_s: float,
                        keep_at_most: int | None = None) -> np.ndarray:
    """Ids of the clusters covering at least ``min_cluster_s`` seconds (``seconds`` per row, or
    one value for all rows), largest first; the largest cluster always counts.
    ``keep_at_most`` keeps only that many of them."""
    labels = np.asarray(labels)
    weights = np.broadcast_to(np.asarray(seconds, dtype=float), labels.shape)
    ids = np.unique(labels)
    total = np.array([weights[labels == c].sum() for c in ids])
    order = np.argsort(-total, kind="stable")
    big = [ids[i] for i in order if total[i] >= min(min_cluster_s, total.max())]
    return np.array(big[:keep_at_most] if keep_at_most else big)


def _coarsest_cut_with(x: np.ndarray, k: int, step_s: float, min_cluster_s: float) -> np.ndarray:
    """The coarsest cut of the average-linkage dendrogram with ``k`` clusters covering at least
    ``min_cluster_s`` each (so that a few outlier windows do not take the place of a speaker);
    the cut into ``k`` clusters when there is none."""
    tree = _linkage(x, "average")
    for m in range(min(k, len(x)), len(x) + 1):
        labels = _cut(tree, m)
        if len(keep_large_clusters(labels, step_s, min_cluster_s)) >= k and \
                np.bincount(labels).max() * step_s >= min_cluster_s:
            return labels
    return _cut(tree, min(k, len(x)))


def cluster_windows(emb: np.ndarray, windows: Sequence[tuple[float, float]],
                    num_speakers: int | None = None, *, step_s: float = 0.75,
                    min_window_s: float = 0.5, min_cluster_s: float = 2.0,
                    method: str = "silhouette", min_speakers: int = 1, max_speakers: int = 6,
                    min_silhouette: float = 0.3, threshold: float = 0.70) -> np.ndarray:
    """A cluster index per window (row of ``emb``), for the diarizer's sliding windows.

    Windows of at least ``min_window_s`` shape the clusters (all of them when fewer than two
    are that long); ``method`` is ``"silhouette"`` (:func:`silhouette_ahc`, the default),
    ``"nme-sc"`` (:func:`nme_sc`) or ``"threshold"`` (:func:`threshold_ahc` at ``threshold``).
    A cluster counts as a speaker when its windows cover at least ``min_cluster_s``
    (``step_s`` seconds per window). With ``num_speakers`` given, the tree methods take the
    coarsest dendrogram cut with that many such clusters, and the ``num_speakers`` largest
    clusters count. Every window then takes its most similar counted centroid, so the result
    holds at most ``num_speakers`` (or ``max_speakers``) distinct labels.
    """
    emb = np.asarray(emb)
    if len(emb) != len(windows):
        raise ValueError(f"{len(emb)} embeddings for {len(windows)} windows")
    if method not in METHODS:
        raise ValueError(f"unknown clustering method {method!r}; expected one of {', '.join(METHODS)}")
    if num_speakers is not None and num_speakers < 1:
        raise ValueError(f"num_speakers must be >= 1, got {num_speakers}")
    if len(emb) == 0:
        return np.zeros(0, dtype=int)
    long = np.array([e - s >= min_window_s for s, e in windows])
    if long.sum() < 2:
        long[:] = True
    x = emb[long]
    if len(x) < 3 or num_speakers == 1:
        return np.zeros(len(emb), dtype=int)
    if num_speakers is not None and method != "nme-sc":
        labels = _coarsest_cut_with(x, num_speakers, step_s, min_cluster_s)
        big = keep_large_clusters(labels, step_s, 0.0, keep_at_most=num_speakers)
    else:
        if method == "silhouette":
            labels = silhouette_ahc(x, num_speakers, min_speakers=min_speakers,
                                    max_speakers=max_speakers, min_silhouette=min_silhouette)
        elif method == "nme-sc":
            labels = nme_sc(x, num_speakers, max_speakers=max_speakers)
        else:
            labels = threshold_ahc(x, threshold=threshold)
        big = keep_large_clusters(labels, step_s, 0.0 if num_speakers else min_cluster_s,
                                  keep_at_most=num_speakers or max_speakers)
        if len(big) < min_speakers:  # the bound holds even where small clusters were dropped
            big = keep_large_clusters(labels, step_s, 0.0, keep_at_most=min_speakers)
    centroids = l2_normalize(np.stack([x[labels == c].mean(axis=0) for c in big]), np.float64)
    return np.argmax(l2_normalize(emb, np.float64) @ centroids.T, axis=1)
