"""Speaker identification: map diarization clusters to known voices, and keep labels stable.

Each cluster centroid is scored against each enrollment vector by cosine similarity, and clusters
and voices are paired one-to-one by the Hungarian algorithm (maximum total similarity); a pair
scoring below the threshold is dropped, so that cluster stays unknown (None). A diarizer that
splits one person into two clusters breaks the one-to-one premise: the pairing then gives one of
the two another person's name, and that can be the larger one. With a split margin, a cluster
the pairing named whose best-scoring person beats the one it was given by at least the margin,
and whose voice is as near as one voice to a cluster that holds that person's name (cosine of
the centroids at least the split similarity), takes the name too: two clusters then share it. A
cluster the pairing left unnamed stays unnamed: on real far-field speech, a voice nobody
enrolled often scores above the threshold against someone (docs/real-speech.md). Enrollments are
keyed by whatever name the caller wants back: a person's canonical name (L3: voice enrollments),
or a label or name the system used in an earlier meeting, with that meeting's centroid as the
vector (L2: labels kept stable across meetings).

The stage (:class:`IdentifyStage`) names each cluster of a meeting from what its context holds:
persons by their voice prints (:attr:`MeetingContext.enrollments`, each person's clips embedded
jointly by the diarization stage's embedder and cached, and, with stable labels, the centroid of
the voice the system gave that person's name in earlier meetings: a cluster scores against a
person by the better of the two, so a person named once keeps the name where the meeting's
acoustics are nearer their earlier meetings' than their enrollment's); then, when the context asks
for stable labels (:attr:`MeetingContext.stable_labels`, L2 and up), the other names and labels
the system gave voices in earlier meetings, by their centroids; clusters still unnamed get new
labels ``Speaker N`` that no earlier meeting used.

Backends: ``cosine`` (the above); ``given`` (:class:`GivenNames`: the names a diarizing
transcription server gave the enrolled persons, which the ``transcribed`` diarization backend
carries in :attr:`~speechkit.stages.diarize.Diarization.names`; no voice is compared here); and
``chat`` (:mod:`speechkit.stages.identify_chat`: an audio-in chat model compares each cluster's
representative clip with the enrollment clips, the OSynth paper's scaffold; it needs no
embedder, so it follows a diarization without centroids, such as ``transcribed``).
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from speechkit.cache import digest, file_digest
from speechkit.core.audio import SAMPLE_RATE, load_audio
from speechkit.core.options import StageOptions, bounded
from speechkit.core.record import TRANSCRIPT, TURNS, VOICES, MeetingRecord
from speechkit.core.stage import Spec, Stage, registered_class
from speechkit.core.vectors import l2_normalize
from speechkit.errors import SpeechkitError
from speechkit.stages.cohort import DEFAULT_THRESHOLD as SNORM_THRESHOLD
from speechkit.stages.cohort import cohort_for, normalized_scores
from speechkit.stages.diarize.embedders import Embedder, ResemblyzerEmbedder
from speechkit.transcript import name_segments

if TYPE_CHECKING:
    from speechkit.stages.diarize import Diarization

log = logging.getLogger(__name__)

# On Resemblyzer's cosine scale (the default backend); with another backend pass its
# ``embedder.match_threshold``.
DEFAULT_THRESHOLD = ResemblyzerEmbedder.match_threshold
# In standard deviations of s-normalised scores. Chosen on the demo, synthetic workspaces s51-s55
# and the AMI excerpts (docs/real-speech.md): where the pairing and a named cluster's best score
# disagreed, the best-scoring person was the one speaking most in the cluster at margins of
# 0.76-3.6, and the pairing was right at 0.15.
SPLIT_MARGIN = 0.5

Normalization = Literal["snorm", "none"]
NORMALIZATIONS = get_args(Normalization)
BACKENDS = {"cosine": "speechkit.stages.identify:CosineIdentifier",
            "given": "speechkit.stages.identify:GivenNames",
            "chat": "speechkit.stages.identify_chat:ChatIdentifier"}
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
             cohort: np.ndarray | None = None,
             earlier: Mapping[str, np.ndarray] | None = None,
             split_margin: float | None = None,
             split_similarity: float = DEFAULT_THRESHOLD) -> dict[str, str | None]:
    """The enrollment name given to each cluster label, or None where no voice matches.

    One-to-one: no two clusters get the same name (Hungarian assignment on the scores). A cluster
    whose partner scores below ``threshold``, or that has no partner because there are more
    clusters than enrollments, stays None. ``split_margin`` (None: one-to-one only): a named
    cluster whose best score beats the score of the name it was paired with by at least this much,
    and whose centroid has a cosine of at least ``split_similarity`` with that of a cluster paired
    with the best name, takes the best name too (one person split in two by the diarizer).
    ``normalization``: ``none`` scores by cosine similarity; ``snorm`` by s-normalised scores
    against ``cohort`` (default: the bundled impostor set when its dimension matches, plus the
    other enrollments; :mod:`speechkit.stages.cohort`), on which ``threshold`` and
    ``split_margin`` are in standard deviations.
    ``earlier``: enrolled persons' voices in earlier meetings, scored beside their enrollments
    (:func:`voice_scores`).
    """
    from scipy.optimize import linear_sum_assignment

    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {', '.join(NORMALIZATIONS)}, got {normalization!r}")
    labels, names = list(centroids), list(enrollments)
    out: dict[str, str | None] = dict.fromkeys(labels)
    if not labels or not names:
        return out
    scores = voice_scores(centroids, enrollments, earlier or {}, normalization, cohort)
    rows, cols = linear_sum_assignment(scores, maximize=True)
    for r, c in zip(rows, cols):
        if scores[r, c] >= threshold:
            out[labels[r]] = names[c]
    if split_margin is not None:
        paired = dict(out)
        similarity = cosine_scores(centroids, centroids)
        for r, label in enumerate(labels):
            best = int(np.argmax(scores[r]))
            if paired[label] is None or scores[r, best] - scores[r, names.index(paired[label])] < split_margin:
                continue
            holders = [k for k, other in enumerate(labels) if paired[other] == names[best]]
            if any(similarity[r, k] >= split_similarity for k in holders):
                out[label] = names[best]
    return out


def voice_scores(centroids: dict[str, np.ndarray], enrollments: dict[str, np.ndarray],
                 earlier: Mapping[str, np.ndarray], normalization: str = "none",
                 cohort: np.ndarray | None = None) -> np.ndarray:
    """Score of every centroid (rows) against every enrolled person (columns, ``enrollments``'
    order): the better of its score against the enrollment and against ``earlier[name]`` (the
    person's voice in earlier meetings) where there is one. With ``snorm`` an earlier voice is
    normalised against the cohort plus every enrollment, the person's own included."""
    def score(prints: dict[str, np.ndarray]) -> np.ndarray:
        if normalization == "snorm":
            return normalized_scores(centroids, prints, cohort_for(enrollments) if cohort is None else cohort)
        return cosine_scores(centroids, prints)

    scores = score(enrollments)
    known = [name for name in enrollments if name in earlier]
    if known:
        both = score({**enrollments, **{f"{name} (earlier)": earlier[name] for name in known}})
        for i, name in enumerate(known):
            column = list(enrollments).index(name)
            scores[:, column] = np.maximum(scores[:, column], both[:, len(enrollments) + i])
    return scores


def voice_prints(diarization: Diarization, names: dict[str, str | None]) -> dict[str, list[float]]:
    """The centroid of each name (or label, for a cluster left unnamed): where identification gave
    two clusters one name (one person split by the diarizer), their centroids averaged by speech
    time and normalised to unit length."""
    seconds: dict[str, float] = {}
    for turn in diarization.turns:
        seconds[turn.speaker] = seconds.get(turn.speaker, 0.0) + turn.duration
    groups: dict[str, list[tuple[float, np.ndarray]]] = {}
    for label, vec in diarization.centroids.items():
        groups.setdefault(names.get(label) or label, []).append((seconds.get(label, 0.0), np.asarray(vec)))
    out = {}
    for name, members in groups.items():
        if len(members) == 1:
            out[name] = members[0][1].tolist()
        else:
            weights = np.array([w for w, _ in members]) + 1e-9
            out[name] = l2_normalize(np.average([v for _, v in members], axis=0, weights=weights)).tolist()
    return out


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
    ``split_margin``: a cluster the one-to-one pairing named takes the enrolled person it scores
    best against instead, even when another cluster holds that person, where that score beats
    the one of the person it was paired with by at least this much and its voice is near that
    cluster's (cosine at least the embedder's ``match_threshold``; :func:`identify`: the diarizer
    split the person in two). None: one-to-one only. In the units of the scores: the default is
    for ``snorm``; with ``none`` set it for cosines or to None (the fallback to cosines, for want
    of a cohort, drops it).
    ``prior_margin``: an earlier meeting's voice names a cluster only when their similarity beats
    the cluster's similarity to every other earlier voice by at least this much, so that a voice
    between two known ones takes neither name (L2 speaker memory); the pairing is one-to-one, so
    two clusters never take the same earlier voice.
    """

    normalization: Normalization = "snorm"
    threshold: float | None = bounded(None, ge=-10.0, le=10.0)
    split_margin: float | None = bounded(SPLIT_MARGIN, ge=0.0, le=10.0)
    prior_threshold: float | None = bounded(None, ge=-1.0, le=1.0)
    prior_margin: float = bounded(0.05, ge=0.0, le=2.0)


class CosineIdentifier:
    """The ``cosine`` backend: :func:`identify` with the options' thresholds, for an embedder."""

    Options = IdentifyOptions

    def __init__(self, options: IdentifyOptions | None = None, device: str = "auto", *,
                 embedder: Embedder) -> None:
        self.options = options or IdentifyOptions()
        self.embedder = embedder
        default = SNORM_THRESHOLD if self.options.normalization == "snorm" else float(embedder.match_threshold)
        self.threshold = self.options.threshold if self.options.threshold is not None else default
        self.prior_threshold = (self.options.prior_threshold if self.options.prior_threshold is not None
                                else float(embedder.match_threshold))

    @classmethod
    def for_stage(cls, options: IdentifyOptions, device: str, stage: IdentifyStage) -> CosineIdentifier:
        """The backend of an identification stage, on the embedder of the diarization stage it reads."""
        embedder = stage.diarize.embedder
        if embedder is None:
            raise SpeechkitError(f"stages.identify: the {stage.diarize.spec.backend} diarization backend gives "
                                 f"no embedder to identify speakers with (identify: {{backend: given}} takes "
                                 "the names it gives)")
        return cls(options, device=device, embedder=embedder)

    def name_meeting(self, record: MeetingRecord, stage: IdentifyStage) -> dict[str, str | None]:
        """Label -> name for one meeting: :meth:`name` of the diarization's centroids, the enrolled
        persons' voice prints (:meth:`IdentifyStage.enrollment_vectors`) and, with stable labels,
        the voices of earlier meetings."""
        context = record.context
        enrollments = stage.enrollment_vectors(record) if context.enrollments else {}
        prior = context.prior_speakers if context.stable_labels else None
        return self.name(record.result("diarize").centroids, enrollments, prior)

    def name(self, centroids: dict[str, np.ndarray], enrollments: dict[str, np.ndarray],
             prior: dict[str, np.ndarray] | None) -> dict[str, str | None]:
        """Label -> name: enrolled persons first, then (``prior`` not None) earlier voices, then
        new ``Speaker N`` labels."""
        names: dict[str, str | None] = dict.fromkeys(centroids)
        if enrollments:
            normalization, threshold = self.options.normalization, self.threshold
            split_margin = self.options.split_margin
            cohort = cohort_for(enrollments) if normalization == "snorm" else None
            if normalization == "snorm" and cohort is None and len(enrollments) < 3:
                log.warning("no impostor cohort for %d-dimensional %s embeddings and too few enrollments "
                            "to be their own cohort: scoring by cosine at the embedder's match_threshold",
                            self.embedder.dim, self.embedder.name)
                normalization, threshold, split_margin = "none", float(self.embedder.match_threshold), None
            names.update(identify(centroids, enrollments, threshold=threshold, normalization=normalization,
                                  cohort=cohort, earlier=prior or {}, split_margin=split_margin,
                                  split_similarity=float(self.embedder.match_threshold)))
        if prior is None:
            return names
        taken = {n for n in names.values() if n}
        pending = {k: v for k, v in centroids.items() if names[k] is None}
        known = {k: v for k, v in prior.items() if k not in taken}
        if pending and known:
            scores = cosine_scores(pending, known)
            rows, cols = list(pending), list(known)
            for label, name in identify(pending, known, threshold=self.prior_threshold).items():
                if name and _margin(scores, rows.index(label), cols.index(name)) >= self.options.prior_margin:
                    names[label] = name
        return new_labels(names, set(prior))


def new_labels(names: dict[str, str | None], used: set[str]) -> dict[str, str | None]:
    """``names`` with each unnamed label (in sorted order) given a label ``Speaker N`` that
    neither ``names`` nor ``used`` (the names of earlier meetings) holds."""
    used = used | {n for n in names.values() if n}
    number = 1
    out = dict(names)
    for label in sorted(out):
        if out[label] is None:
            while f"Speaker {number}" in used:
                number += 1
            out[label] = f"Speaker {number}"
            used.add(out[label])
    return out


@dataclass(frozen=True)
class GivenNamesOptions(StageOptions):
    """The ``given`` backend has no options."""


class GivenNames:
    """The ``given`` backend: the names the diarization backend took from its source
    (:attr:`~speechkit.stages.diarize.Diarization.names`: a transcription server told the enrolled
    persons' names and voices labelled their speech with them) for the persons enrolled for the
    meeting; the other labels stay unnamed, or, with stable labels (L2 and up), get ``Speaker N``
    labels no earlier meeting used. It needs no embedder: the server compared the voices."""

    Options = GivenNamesOptions

    def __init__(self, options: GivenNamesOptions | None = None, device: str = "auto") -> None:
        self.options = options or GivenNamesOptions()

    @classmethod
    def for_stage(cls, options: GivenNamesOptions, device: str, stage: IdentifyStage) -> GivenNames:
        """The backend of an identification stage (it needs nothing of the diarization stage)."""
        return cls(options, device)

    def name_meeting(self, record: MeetingRecord, stage: IdentifyStage) -> dict[str, str | None]:
        """Label -> name for the speakers of ``record``'s diarization: the names it was given of
        the persons enrolled for the meeting; with stable labels, new labels for the others."""
        diarization, context = record.result("diarize"), record.context
        names = {label: diarization.names.get(label) for label in diarization.speakers}
        names = {label: name if name in context.enrollments else None for label, name in names.items()}
        return new_labels(names, set(context.prior_speakers)) if context.stable_labels else names


def _margin(scores: np.ndarray, row: int, col: int) -> float:
    """How far ``scores[row, col]`` is above the best other entry of its row (infinite when
    there is none)."""
    rivals = np.delete(scores[row], col)
    return float(scores[row, col] - rivals.max()) if rivals.size else float("inf")


def build(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> IdentifyStage:
    return IdentifyStage(spec, device, reads)


class IdentifyStage(Stage[dict[str, "str | None"]]):
    """Diarization label -> name (None: unnamed) for one meeting (see the module docstring).

    The backend (``BACKENDS``) provides ``Options``, ``for_stage(options, device, stage)`` (the
    backend built for this stage) and ``name_meeting(record, stage)`` (label -> name). A backend
    that listens to the recording (``chat``) needs no audio key of its own: the diarization's key,
    part of this stage's, holds the recording's.
    """

    name = "identify"
    reads = ("diarize",)
    context_fields = ("enrollments", "stable_labels", "prior_speakers", "identify_unenrolled")
    caches = ("enroll",)

    def __init__(self, spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
        super().__init__(spec, device, reads)
        self.diarize: Any = self.inputs["diarize"]
        self.backend_class = registered_class(BACKENDS, self.spec.backend, "stages.identify.backend")
        self._identifier: Any = None

    def extra_inputs(self, record: MeetingRecord) -> dict[str, Any]:
        context = record.context
        return {"enrollments": {name: [file_digest(c) for c in clips] for name, clips in context.enrollments.items()},
                "stable_labels": context.stable_labels,
                "prior_speakers": {name: np.asarray(v).tolist() for name, v in context.prior_speakers.items()},
                "identify_unenrolled": context.identify_unenrolled}

    @property
    def identifier(self) -> Any:
        """The backend, built on first use."""
        if self._identifier is None:
            self._identifier = self.backend_class.for_stage(self.spec.options, self.device, self)
        return self._identifier

    def run(self, record: MeetingRecord) -> dict[str, str | None]:
        context = record.context
        if not (context.enrollments or context.stable_labels or context.identify_unenrolled):
            return dict.fromkeys(record.result("diarize").centroids)
        return self.identifier.name_meeting(record, self)

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        """The transcript and the speaker turns with the names given, and each name's voice
        (:func:`voice_prints`)."""
        names = record.result(self.name)
        out: dict[str, Any] = {VOICES: voice_prints(record.result("diarize"), names)}
        for key in (TRANSCRIPT, TURNS):
            if key in so_far:
                out[key] = replace(so_far[key], segments=name_segments(so_far[key].segments, names))
        return out

    def enrollment_vectors(self, record: MeetingRecord) -> dict[str, np.ndarray]:
        """One voice print per enrolled person (:func:`enroll`: the clips embedded jointly),
        cached under the clips' content and the embedder's identity."""
        out = {}
        for name, clips in record.context.enrollments.items():
            key = digest([file_digest(c) for c in clips], self.diarize.embedder_identity(), "joint")
            vector = record.cache.get_or_compute(self.caches[0], key, lambda clips=clips: enroll(
                self.identifier.embedder, {"_": [load_audio(c) for c in clips]})["_"].tolist())
            out[name] = np.asarray(vector, dtype=np.float32)
        return out
