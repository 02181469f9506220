"""Speaker identification: map diarization clusters to known voices, and keep labels stable.

Each cluster centroid is scored against each known voice, and clusters and voices are paired
one-to-one by the Hungarian algorithm (maximum total score); a pair whose evidence is too weak is
dropped, so that cluster stays unknown (None). The known voices are the persons' enrollments
(L3: scored by s-norm, :mod:`speechkit.stages.cohort`) and the voices the system itself named or
labelled in earlier meetings, with their centroids (L2 and up: the speaker memory).

The stage (:class:`IdentifyStage`) names each cluster of a meeting from all the evidence its
context holds (:func:`name_voices`): the voice enrollments (:attr:`MeetingContext.enrollments`,
each person's clips embedded jointly by the diarization stage's embedder and cached) and, when
the context asks for stable labels (:attr:`MeetingContext.stable_labels`, L2 and up), the earlier
meetings' voices, together in one assignment, so that a person named in earlier meetings keeps
the name when heard again; clusters still unnamed get new labels ``Speaker N`` that no earlier
meeting used.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from speechkit.cache import digest, file_digest
from speechkit.stages import Stage, StageSpec, backend_class
from speechkit.stages.audio import SAMPLE_RATE, load_audio
from speechkit.stages.cohort import DEFAULT_THRESHOLD as SNORM_THRESHOLD
from speechkit.stages.cohort import cohort_for, normalized_scores
from speechkit.stages.diarize.embedders import Embedder, ResemblyzerEmbedder, l2_normalize
from speechkit.stages.options import StageOptions, bounded
from speechkit.stages.record import MeetingRecord

log = logging.getLogger(__name__)

# On Resemblyzer's cosine scale (the default backend); with another backend pass its
# ``embedder.match_threshold``.
DEFAULT_THRESHOLD = ResemblyzerEmbedder.match_threshold
Normalization = Literal["snorm", "none"]
NORMALIZATIONS = get_args(Normalization)
BACKENDS = {"cosine": "speechkit.stages.identify:CosineIdentifier"}
DEFAULT_BACKEND = "cosine"


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
             threshold: float = DEFAULT_THRESHOLD, normalization: str = "none",
             cohort: np.ndarray | None = None) -> dict[str, str | None]:
    """The enrollment name given to each cluster label, or None where no voice matches
    (:func:`name_voices` without earlier voices).

    One-to-one: no two clusters get the same name (Hungarian assignment on the scores). A cluster
    whose partner scores below ``threshold``, or that has no partner because there are more
    clusters than enrollments, stays None. ``normalization``: ``none`` scores by cosine
    similarity; ``snorm`` by s-normalised scores against ``cohort`` (default: the bundled
    impostor set when its dimension matches, plus the other enrollments;
    :mod:`speechkit.stages.cohort`), on which ``threshold`` is in standard deviations.
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {', '.join(NORMALIZATIONS)}, got {normalization!r}")
    if normalization == "snorm" and cohort is None and enrollments:
        cohort = cohort_for(enrollments)
    return name_voices(centroids, enrollments, {}, threshold=threshold, prior_threshold=1.0, prior_margin=0.0,
                       normalization=normalization, cohort=cohort)


# Measured on AMI excerpt pairs (docs/real-speech.md): speakers enrolled from >= 3 s of solo speech
# were named 96-100% right in another excerpt (reference segments); from about 1 s, rarely.
RELIABLE_ENROLLMENT_S = 3.0


def enroll(embedder: Embedder, clips: dict[str, list[np.ndarray]],
           sample_rate: int = SAMPLE_RATE) -> dict[str, np.ndarray]:
    """One voice print per name from that person's clips (mono arrays at ``sample_rate``).

    The clips of a person are joined into one utterance and embedded once, so that short clips
    (a second or less, common when enrolling from meeting turns) pool their frames instead of
    each giving a poor embedding of its own; for long clips this equals, up to the embedder's
    own windowing, the duration-weighted mean of their normalised embeddings. A person with
    less than :data:`RELIABLE_ENROLLMENT_S` of audio is enrolled with a warning.
    """
    out = {}
    for name, wavs in clips.items():
        wavs = [np.asarray(w, dtype=np.float32).ravel() for w in wavs]
        if not any(len(w) for w in wavs):
            raise ValueError(f"no enrollment audio for {name!r}")
        seconds = sum(len(w) for w in wavs) / sample_rate
        if seconds < RELIABLE_ENROLLMENT_S:
            log.warning("enrollment of %r has %.1f s of audio: under %.0f s, identification is unreliable "
                        "(docs/real-speech.md)", name, seconds, RELIABLE_ENROLLMENT_S)
        out[name] = embedder.embed(np.concatenate(wavs), sample_rate=sample_rate)
    return out


@dataclass(frozen=True)
class IdentifyOptions(StageOptions):
    """Options of the identification stage.

    ``normalization``: how a cluster centroid is scored against a person's enrollment:
    ``snorm`` (default; s-normalised against a cohort of impostor voices, so that one threshold
    holds across rooms and voices, see :mod:`speechkit.stages.cohort`) or ``none`` (cosine).
    ``threshold``: least score for the cluster to get that person's name (None: 0.5 standard
    deviations with ``snorm``, the embedder's ``match_threshold`` with ``none``).
    ``prior_threshold``: least cosine similarity of a centroid and a voice of an earlier meeting
    (L2 and up) for the cluster to get that voice's name (None: the embedder's ``match_threshold``).
    ``prior_margin``: an earlier meeting's voice names a cluster only when their similarity beats
    the cluster's similarity to every other earlier voice by at least this much, so that a voice
    between two known ones takes neither name (the speaker memory). Enrollments and earlier
    voices name the clusters together, one-to-one (:func:`name_voices`). The defaults were chosen
    on synthetic workspaces and AMI excerpts together (docs/real-speech.md).
    """

    normalization: Normalization = "snorm"
    threshold: float | None = bounded(None, ge=-10.0, le=10.0)
    prior_threshold: float | None = bounded(None, ge=-1.0, le=1.0)
    prior_margin: float = bounded(0.05, ge=0.0, le=2.0)


class CosineIdentifier:
    """The ``cosine`` backend: :func:`name_voices` with the options' thresholds, for an embedder."""

    Options = IdentifyOptions

    def __init__(self, options: IdentifyOptions | None = None, device: str = "auto", *,
                 embedder: Embedder) -> None:
        self.options = options or IdentifyOptions()
        self.embedder = embedder
        default = SNORM_THRESHOLD if self.options.normalization == "snorm" else float(embedder.match_threshold)
        self.threshold = self.options.threshold if self.options.threshold is not None else default
        self.prior_threshold = (self.options.prior_threshold if self.options.prior_threshold is not None
                                else float(embedder.match_threshold))

    def name(self, centroids: dict[str, np.ndarray], enrollments: dict[str, np.ndarray],
             prior: dict[str, np.ndarray] | None) -> dict[str, str | None]:
        """Label -> name: enrolled persons and (``prior`` not None) earlier voices together
        (:func:`name_voices`), then new ``Speaker N`` labels for the clusters left unnamed."""
        normalization, threshold = self.options.normalization, self.threshold
        voices = [v for v in (enrollments, prior) if v]
        cohort = cohort_for(voices[0]) if normalization == "snorm" and voices else None
        if normalization == "snorm" and cohort is None and any(len(v) < 3 for v in voices):
            if enrollments:
                log.warning("no impostor cohort for %d-dimensional %s embeddings and too few voices to be "
                            "their own cohort: scoring by cosine at the embedder's match_threshold",
                            self.embedder.dim, self.embedder.name)
            normalization, threshold = "none", float(self.embedder.match_threshold)
        names = name_voices(centroids, enrollments, prior or {}, threshold=threshold,
                            prior_threshold=self.prior_threshold, prior_margin=self.options.prior_margin,
                            normalization=normalization, cohort=cohort)
        return names if prior is None else new_labels(names, prior)


def name_voices(centroids: dict[str, np.ndarray], enrollments: dict[str, np.ndarray],
                prior: dict[str, np.ndarray], *, threshold: float, prior_threshold: float,
                prior_margin: float, normalization: str = "snorm",
                cohort: np.ndarray | None = None) -> dict[str, str | None]:
    """Label -> name (None: unknown) from the enrollments and the earlier meetings' voices together.

    The candidates are the enrolled persons and the names and labels of earlier voices
    (``prior``: name -> centroid); a name that is both has both kinds of evidence. Each pair's
    evidence is its enrollment score, its earlier voice's score, or their sum where the name has
    both (on one scale: s-normalised, or cosine with ``normalization="none"``). Clusters and
    names are paired one-to-one on the evidence (Hungarian); a pair is kept when the enrollment
    scores at least ``threshold``, or when the name's earlier voice is the cluster's nearest
    earlier voice with a cosine of at least ``prior_threshold``, ahead of the next one by
    ``prior_margin`` (a voice between two known ones takes neither). So a person named in
    earlier meetings, heard again, keeps the name rather than taking an enrolled voice that
    scores a little higher today; a cluster whose partner is not kept stays None.
    """
    from scipy.optimize import linear_sum_assignment

    labels = list(centroids)
    candidates = list(dict.fromkeys([*enrollments, *prior]))
    out: dict[str, str | None] = dict.fromkeys(labels)
    if not labels or not candidates:
        return out
    enrolled = _evidence(centroids, enrollments, candidates, normalization, cohort)
    remembered = _evidence(centroids, prior, candidates, normalization, cohort)
    kept = (enrolled >= threshold) | _distinct_matches(
        _evidence(centroids, prior, candidates, "none", None), prior_threshold, prior_margin)
    evidence = np.where(np.isfinite(enrolled) & np.isfinite(remembered), enrolled + remembered,
                        np.maximum(enrolled, remembered))
    rows, cols = linear_sum_assignment(np.where(np.isfinite(evidence), evidence, -1e6), maximize=True)
    for r, c in zip(rows, cols):
        if kept[r, c]:
            out[labels[r]] = candidates[c]
    return out


def _evidence(centroids: dict[str, np.ndarray], voices: dict[str, np.ndarray], candidates: list[str],
              normalization: str, cohort: np.ndarray | None) -> np.ndarray:
    """Scores of every centroid (rows) against the voice of every candidate (columns): s-normalised
    (``snorm``) or cosine; -inf where ``voices`` has no such candidate."""
    out = np.full((len(centroids), len(candidates)), -np.inf)
    if voices:
        scores = (normalized_scores(centroids, voices, cohort) if normalization == "snorm"
                  else cosine_scores(centroids, voices))
        out[:, [candidates.index(name) for name in voices]] = scores
    return out


def _distinct_matches(cosine: np.ndarray, threshold: float, margin: float) -> np.ndarray:
    """Where a cluster's (row's) nearest voice scores at least ``threshold`` and beats the
    next nearest by ``margin`` (a voice between two known ones matches neither)."""
    ranked = -np.sort(-cosine, axis=1)
    best = ranked[:, :1]
    second = ranked[:, 1:2] if cosine.shape[1] > 1 else np.full_like(best, -np.inf)
    with np.errstate(invalid="ignore"):  # -inf - -inf: a row without earlier voices
        return (cosine == best) & (cosine >= threshold) & (best - second >= margin)


def new_labels(names: dict[str, str | None], prior: dict[str, np.ndarray]) -> dict[str, str | None]:
    """``names`` with each unnamed cluster given a ``Speaker N`` label that neither this meeting
    nor an earlier one (``prior``) used, in label order."""
    out = dict(names)
    used = set(out.values()) | set(prior)
    number = 1
    for label in sorted(out):
        if out[label] is None:
            while f"Speaker {number}" in used:
                number += 1
            out[label] = f"Speaker {number}"
            used.add(out[label])
    return out


def build(spec: StageSpec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> IdentifyStage:
    """The identification stage for a recipe's ``stages.identify``; ``reads["diarize"]`` is the
    diarization stage, whose embedder embeds the enrollments (one space for both)."""
    return IdentifyStage(spec, device, reads)


class IdentifyStage(Stage[dict[str, "str | None"]]):
    """Diarization label -> name (None: unnamed) for one meeting (see the module docstring)."""

    name = "identify"
    reads = ("diarize",)

    def __init__(self, spec: StageSpec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
        super().__init__(spec, device, reads)
        self.diarize: Any = self.inputs["diarize"]
        self._identifier: CosineIdentifier | None = None

    def extra_inputs(self, record: MeetingRecord) -> dict[str, Any]:
        """The context it names voices from: the enrollment clips' content, whether labels are
        kept stable, and the earlier meetings' voices."""
        context = record.context
        return {"enrollments": {name: [file_digest(c) for c in clips] for name, clips in context.enrollments.items()},
                "stable_labels": context.stable_labels,
                "prior_speakers": {name: np.asarray(v).tolist() for name, v in context.prior_speakers.items()}}

    @property
    def identifier(self) -> CosineIdentifier:
        if self._identifier is None:
            embedder = self.diarize.embedder
            if embedder is None:
                raise ValueError(f"the {self.diarize.spec.backend} diarization backend gives no "
                                 f"embedder to identify speakers with")
            self._identifier = backend_class("identify", self.spec.backend)(
                self.spec.options, device=self.device, embedder=embedder)
        return self._identifier

    def run(self, record: MeetingRecord) -> dict[str, str | None]:
        centroids = record.result("diarize").centroids
        context = record.context
        if not context.enrollments and not context.stable_labels:
            return dict.fromkeys(centroids)
        enrollments = self.enrollment_vectors(record) if context.enrollments else {}
        prior = context.prior_speakers if context.stable_labels else None
        return self.identifier.name(centroids, enrollments, prior)

    def enrollment_vectors(self, record: MeetingRecord) -> dict[str, np.ndarray]:
        """One voice print per enrolled person (:func:`enroll`: the clips embedded jointly),
        cached under the clips' content and the embedder's identity."""
        out = {}
        for name, clips in record.context.enrollments.items():
            key = digest([file_digest(c) for c in clips], self.diarize.embedder_identity(), "joint")
            vector = record.cache.get_or_compute("enroll", key, lambda clips=clips: enroll(
                self.identifier.embedder, {"_": [load_audio(c) for c in clips]})["_"].tolist())
            out[name] = np.asarray(vector, dtype=np.float32)
        return out
