"""Speaker identification: map diarization clusters to known voices.

Each cluster centroid is scored against each enrollment vector by cosine similarity, and clusters
and voices are paired one-to-one by the Hungarian algorithm (maximum total similarity); a pair
scoring below the threshold is dropped, so that cluster stays unknown (None). Enrollments are
keyed by whatever name the caller wants back: a person's canonical name (L3: voice enrollments),
or a label or name the system used in an earlier meeting, with that meeting's centroid as the
vector (L2: labels kept stable across meetings).
"""
from __future__ import annotations

import numpy as np

from speechkit.embeddings import SAMPLE_RATE, Embedder, ResemblyzerEmbedder, l2_normalize

# On Resemblyzer's cosine scale (the default backend); with another backend pass its
# ``embedder.match_threshold``.
DEFAULT_THRESHOLD = ResemblyzerEmbedder.match_threshold


def cosine_scores(centroids: dict[str, np.ndarray],
                  enrollments: dict[str, np.ndarray]) -> np.ndarray:
    """Cosine similarity of every centroid (rows, in dict order) with every enrollment (columns)."""
    if not centroids or not enrollments:
        return np.zeros((len(centroids), len(enrollments)), dtype=np.float32)
    c = l2_normalize(np.stack([np.asarray(v, dtype=np.float32).ravel() for v in centroids.values()]))
    e = l2_normalize(np.stack([np.asarray(v, dtype=np.float32).ravel() for v in enrollments.values()]))
    if c.shape[1] != e.shape[1]:
        raise ValueError(f"centroids have {c.shape[1]} dimensions but enrollments have {e.shape[1]}: "
                         f"they come from different embedding backends")
    return c @ e.T


def identify(centroids: dict[str, np.ndarray], enrollments: dict[str, np.ndarray],
             threshold: float = DEFAULT_THRESHOLD) -> dict[str, str | None]:
    """The enrollment name given to each cluster label, or None where no voice matches.

    One-to-one: no two clusters get the same name. A cluster whose Hungarian partner scores
    below ``threshold`` (cosine similarity), or that has no partner because there are more
    clusters than enrollments, stays None.
    """
    from scipy.optimize import linear_sum_assignment

    labels, names = list(centroids), list(enrollments)
    out: dict[str, str | None] = dict.fromkeys(labels)
    scores = cosine_scores(centroids, enrollments)
    if scores.size == 0:
        return out
    rows, cols = linear_sum_assignment(scores, maximize=True)
    for r, c in zip(rows, cols):
        if scores[r, c] >= threshold:
            out[labels[r]] = names[c]
    return out


def enroll(embedder: Embedder, clips: dict[str, list[np.ndarray]],
           sample_rate: int = SAMPLE_RATE) -> dict[str, np.ndarray]:
    """One voice print per name from that person's clips (mono arrays at ``sample_rate``).

    The clips of a person are joined into one utterance and embedded once, so that short clips
    (a second or less, common when enrolling from meeting turns) pool their frames instead of
    each giving a poor embedding of its own; for long clips this equals, up to the embedder's
    own windowing, the duration-weighted mean of their normalised embeddings.
    """
    out = {}
    for name, wavs in clips.items():
        wavs = [np.asarray(w, dtype=np.float32).ravel() for w in wavs]
        if not any(len(w) for w in wavs):
            raise ValueError(f"no enrollment audio for {name!r}")
        out[name] = embedder.embed(np.concatenate(wavs), sample_rate=sample_rate)
    return out
