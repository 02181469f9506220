"""Score normalisation over a cohort of impostor voices, for speaker identification.

Raw cosine scores between a diarization cluster and an enrolled voice sit on a scale that
depends on the embedder, the recording conditions and the two voices themselves: with
Resemblyzer, a far-field AMI participant scores 0.67-0.92 against themself in another excerpt
and 0.46-0.78 against others, while some voices score high against everybody. Symmetric score
normalisation (s-norm; Kenny 2010, Cumani et al. 2011) rescales each score by how the two sides
score against a cohort of impostors::

    s_norm(e, t) = 0.5 * ((s - mu_e) / sd_e + (s - mu_t) / sd_t)

where ``mu_e, sd_e`` are the mean and standard deviation of enrollment ``e``'s scores against the
cohort and ``mu_t, sd_t`` those of the test vector ``t``. Adaptive s-norm (AS-norm; Matejka et
al. 2017) uses only each side's ``top_k`` highest cohort scores. The normalised score is roughly
"standard deviations above an impostor", so one unknown-speaker threshold holds across
embedders and rooms (:data:`DEFAULT_THRESHOLD`).

The cohort of each enrolled voice is the bundled impostor set (:func:`load_cohort`) plus the
other enrolled voices of the same run (:func:`normalized_scores` does this;
:func:`speechkit.stages.identify.identify` with ``normalization="snorm"`` uses it).

The bundled set ``speechkit/data/cohort-resemblyzer.npy`` holds Resemblyzer embeddings of
real speakers that are not used by the identification evaluation: the solo speech (>= 0.5 s) of
each participant of AMI excerpts trn04, trn05, trn06 and trn09 of pyannote.audio's ``ami-debug``
fixture (AMI Meeting Corpus, CC BY 4.0), the two callers of pyannote.audio's sample (MIT) and
the three voices of faster-whisper's test clips (MIT); ``benchmarks/make_cohort.py`` regenerates
it. Synthetic voices are left out on purpose: the demo workspace enrolls them, and an enrolled
voice must not be its own impostor.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from speechkit.core.vectors import l2_normalize

__all__ = [
    "COHORT_FILE",
    "DEFAULT_THRESHOLD",
    "cohort_for",
    "load_cohort",
    "normalized_scores",
    "s_norm",
]

#: Unknown-speaker threshold on s-normalised scores: a cluster is named only if its Hungarian
#: partner scores at least this many (pooled) standard deviations above the cohort. Measured
#: (docs/real-speech.md): demo named-speaker accuracy is flat (0.974) for thresholds 0 to 1.5
#: and falls at 2.0; on the AMI cross-excerpt pairs with reference segments, 0 to 0.5 name 56%
#: of solo speech right with 6.7% false accepts, 1.0 names 42%, 1.5 28%. 0.5 is the highest
#: threshold that loses nothing on either.
DEFAULT_THRESHOLD = 0.5
COHORT_FILE = "cohort-resemblyzer.npy"


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (one vector: one row) at unit length, as float64."""
    return np.atleast_2d(l2_normalize(x, np.float64))


def _stats(vectors: np.ndarray, cohort: np.ndarray, top_k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each vector's cosine scores against the cohort (its
    ``top_k`` highest only, when given)."""
    scores = vectors @ cohort.T
    if top_k is not None and top_k < scores.shape[1]:
        scores = -np.sort(-scores, axis=1)[:, :top_k]
    return scores.mean(axis=1), scores.std(axis=1) + 1e-6


def s_norm(scores: np.ndarray, enroll: np.ndarray, test: np.ndarray, cohort: np.ndarray,
           top_k: int | None = None) -> np.ndarray:
    """S-normalised ``scores`` (shape ``(n_test, n_enroll)``, cosine of ``test`` rows with
    ``enroll`` rows) against one shared ``cohort`` (rows are impostor embeddings).

    ``top_k``: adaptive s-norm over each side's ``top_k`` closest cohort members.
    """
    cohort = _unit(cohort)
    if len(cohort) < 2:
        raise ValueError(f"a cohort needs at least 2 embeddings, got {len(cohort)}")
    mu_e, sd_e = _stats(_unit(enroll), cohort, top_k)
    mu_t, sd_t = _stats(_unit(test), cohort, top_k)
    s = np.asarray(scores, dtype=np.float64)
    return 0.5 * ((s - mu_e[None, :]) / sd_e[None, :] + (s - mu_t[:, None]) / sd_t[:, None])


def normalized_scores(centroids: dict[str, np.ndarray], enrollments: dict[str, np.ndarray],
                      cohort: np.ndarray | None, top_k: int | None = None,
                      other_enrolled: bool = True) -> np.ndarray:
    """S-normalised scores of every centroid (rows, dict order) against every enrollment
    (columns). Each enrollment's cohort is ``cohort`` plus, with ``other_enrolled``, the other
    enrollments; a test vector's cohort is ``cohort`` plus all enrollments."""
    if not centroids or not enrollments:
        return np.zeros((len(centroids), len(enrollments)))
    t = _unit(np.stack([np.asarray(v).ravel() for v in centroids.values()]))
    e = _unit(np.stack([np.asarray(v).ravel() for v in enrollments.values()]))
    if t.shape[1] != e.shape[1]:
        raise ValueError(f"centroids have {t.shape[1]} dimensions but enrollments have {e.shape[1]}: "
                         f"they come from different embedding backends")
    base = np.zeros((0, e.shape[1])) if cohort is None else _unit(cohort)
    if base.shape[1] != e.shape[1]:
        raise ValueError(f"cohort has {base.shape[1]} dimensions but enrollments have {e.shape[1]}")
    raw = t @ e.T
    out = np.empty_like(raw)
    for j in range(len(e)):
        own = np.concatenate([base, np.delete(e, j, axis=0)]) if other_enrolled else base
        if len(own) < 2:
            raise ValueError("too small a cohort: pass a bundled cohort (load_cohort()) or enroll more voices")
        mu_e, sd_e = _stats(e[[j]], own, top_k)
        mu_t, sd_t = _stats(t, own, top_k)
        out[:, j] = 0.5 * ((raw[:, j] - mu_e[0]) / sd_e[0] + (raw[:, j] - mu_t) / sd_t)
    return out


def cohort_for(enrollments: dict[str, np.ndarray]) -> np.ndarray | None:
    """The bundled cohort (:func:`load_cohort`) when its dimension is the enrollments', else None
    (the other enrollments are then the whole cohort)."""
    bundled = _bundled_cohort()
    dim = np.asarray(next(iter(enrollments.values()))).size if enrollments else 0
    return bundled if bundled.shape[1] == dim else None


def cohort_path() -> Path:
    """Where the bundled cohort lives (``speechkit/data/cohort-resemblyzer.npy``)."""
    return Path(str(resources.files("speechkit") / "data" / COHORT_FILE))


@lru_cache(maxsize=1)
def _bundled_cohort() -> np.ndarray:
    """The bundled cohort, read once per process (package data does not change)."""
    cohort = load_cohort()
    cohort.flags.writeable = False
    return cohort


def load_cohort(path: str | Path | None = None) -> np.ndarray:
    """The bundled impostor embeddings (float32, one unit row per speaker), or those at ``path``."""
    data = np.load(path or cohort_path())
    return _unit(data).astype(np.float32)
