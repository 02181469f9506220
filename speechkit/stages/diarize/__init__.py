"""Diarization: who spoke when in one recording.

Backends (``BACKENDS``), one output (:class:`Diarization`):

- ``embedding`` (default, :mod:`speechkit.stages.diarize.embedding`): speaker embeddings of
  sliding windows over the VAD's speech regions (:mod:`~speechkit.stages.diarize.embedders`:
  Resemblyzer, which ships its weights, or ECAPA), clustered.
- ``pyannote`` (:mod:`speechkit.stages.diarize.pyannote`): pyannote.audio's pipeline.
- ``transcribed`` (:mod:`speechkit.stages.diarize.transcribed`): the speaker labels a diarizing
  transcription endpoint gave the ASR result's segments (``asr: {backend: api,
  transcript_format: diarized_json}``); no centroids, and the names that server gave the
  enrolled persons in :attr:`Diarization.names` (identification's ``given`` backend takes them).

A backend provides ``diarize(record) -> Diarization`` and an ``embedder`` (an
:class:`~speechkit.stages.diarize.embedders.Embedder` whose space its centroids live in, or
None), which the identification stage uses to embed enrollment clips. A backend class may
declare ``reads`` (earlier stages whose results it reads besides ``vad``) and
``context_fields`` (what of the meeting's context it reads besides the speaker count): the
stage declares them in turn, so they are part of its key.
Labels are ``SPEAKER_00``, ``SPEAKER_01``, ... in order of first appearance.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from speechkit import registry
from speechkit.cache import digest
from speechkit.core.record import TURNS, MeetingRecord
from speechkit.core.stage import BackendStage, Spec, Stage, registered_class
from speechkit.io.seglst import segments_from_rows, segments_to_rows
from speechkit.transcript import Segment, Transcript

BACKENDS = {
    "embedding": "speechkit.stages.diarize.embedding:Diarizer",
    "pyannote": "speechkit.stages.diarize.pyannote:PyannoteDiarizer",
    "transcribed": "speechkit.stages.diarize.transcribed:TranscribedDiarizer",
}
DEFAULT_BACKEND = "embedding"


@dataclass
class Diarization:
    """Speaker turns of one recording and a voice print (centroid) per speaker label.

    ``turns`` are sorted by start time and carry no words; two turns of different speakers may
    overlap. ``centroids`` maps each label to the L2-normalised mean embedding of its windows
    (what :func:`speechkit.stages.identify.identify` scores). ``windows``, ``window_labels`` and
    ``window_embeddings`` describe the clustered windows (embedding backend only; a window whose
    cluster won no frame has the label ``""``). ``names``: label -> the name the diarizer's source
    itself gave that speaker (a transcription server told the enrolled persons' names and
    voices; empty for the other backends).
    """

    turns: list[Segment] = field(default_factory=list)
    centroids: dict[str, np.ndarray] = field(default_factory=dict)
    windows: list[tuple[float, float]] = field(default_factory=list)
    window_labels: list[str] = field(default_factory=list)
    window_embeddings: np.ndarray | None = None
    names: dict[str, str] = field(default_factory=dict)

    @property
    def speakers(self) -> list[str]:
        """Speaker labels in order of first appearance."""
        return list(dict.fromkeys(t.speaker for t in self.turns))

    def to_dict(self) -> dict[str, Any]:
        """The turns, centroids and names (the windows are not kept)."""
        return {"turns": segments_to_rows(self.turns),
                "centroids": {k: np.asarray(v).tolist() for k, v in self.centroids.items()},
                "names": dict(self.names)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diarization:
        return cls(segments_from_rows(data["turns"]),
                   {k: np.asarray(v, dtype=np.float32) for k, v in data["centroids"].items()},
                   names=dict(data.get("names", {})))


def speaker_label(index: int) -> str:
    """The label of the ``index``-th speaker (in order of first appearance)."""
    return f"SPEAKER_{index:02d}"


class DiarizationBackend(Protocol):
    """What every diarization backend provides."""

    embedder: Any

    def diarize(self, record: MeetingRecord) -> Diarization:
        """Turns and centroids of ``record``'s recording."""
        ...


def build(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> DiarizeStage:
    """The diarization stage for a recipe's ``stages.diarize``."""
    return DiarizeStage(spec, device, reads)


class DiarizeStage(BackendStage[Diarization]):
    """Speaker turns and centroids of a recording (backend loaded on first use)."""

    name = "diarize"
    backends = BACKENDS
    version = 2  # 2: Resemblyzer run by onnxruntime (embeddings differ from torch's by about 1e-7)
    reads = ("vad",)
    reads_audio = True
    context_fields = ("expected_speakers",)
    stored = True
    result_type = Diarization

    def __init__(self, spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> None:
        backend = registered_class(self.backends, spec.backend, "stages.diarize.backend")
        self.reads = ("vad", *getattr(backend, "reads", ()))
        self.context_fields = ("expected_speakers", *getattr(backend, "context_fields", ()))
        super().__init__(spec, device, reads)

    @property
    def embedder(self) -> Any:
        """The embedder whose space the centroids live in (None if the backend has none)."""
        return self.backend.embedder

    def embedder_identity(self) -> str:
        """The identity of the embedding space (backend, embedder, its options and weights):
        part of this stage's cache keys and of the enrollment vectors'."""
        options = self.spec.options
        embedder = getattr(options, "embedder", None)
        embedder_options = getattr(options, "embedder_options", {})
        if embedder:  # the embedder's resolved options name its weights (ecapa: a registry model)
            from speechkit.stages.diarize.embedders import embedder_class
            resolved = embedder_class(embedder).Options.from_dict(embedder_options).as_dict()
            weights = resolved.get("weights") or resolved.get("model")
        else:
            weights = getattr(options, "model", None)
        return digest(self.spec.backend, embedder, embedder_options, registry.identity(weights) if weights else None)

    def identity(self) -> str:
        return self.embedder_identity()

    def extra_inputs(self, record: MeetingRecord) -> int | None:
        """The known speaker count (None: estimated)."""
        return record.speaker_count

    def run(self, record: MeetingRecord) -> Diarization:
        return self.backend.diarize(record)

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        """Who spoke when: the speaker turns, by label."""
        return {TURNS: Transcript(record.session_id, record.result(self.name).turns, has_words=False)}
