"""The ``pyannote`` backend of the diarization stage: a pyannote.audio speaker-diarization pipeline.

``model`` names the pipeline: a registry name (``pyannote-speaker-diarization-community-1`` for
pyannote 4's ``community-1``, ``pyannote-speaker-diarization-3.1``) or a folder holding its
``config.yaml``. The models the configuration refers to are resolved through the registry too:
``$model/sub`` entries (community-1) are subfolders of the pipeline's folder; hub ids
(``pyannote/segmentation-3.0`` in 3.1) are the registered models with that hub id, found offline
(package, local folder, Hugging Face cache) or reported with the command that fetches them.
Nothing is downloaded at run time. The weights are gated on the hub: ``speechkit models fetch``
needs their conditions accepted and a token in ``HF_TOKEN``.

The turns are the pipeline's *exclusive* diarization (one speaker at a time, what word
attribution needs) unless ``exclusive`` is false; the centroids are the pipeline's speaker
embeddings, and :attr:`PyannoteDiarizer.embedder` embeds enrollment clips with the pipeline's own
embedding model, so identification compares voices in one space.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from speechkit import registry
from speechkit.core.audio import SAMPLE_RATE, load_audio
from speechkit.core.options import StageOptions, bounded
from speechkit.core.record import MeetingRecord
from speechkit.core.vectors import l2_normalize
from speechkit.devices import resolve_device
from speechkit.errors import ModelNotAvailableError
from speechkit.stages.diarize import Diarization, speaker_label
from speechkit.stages.diarize.embedders import _prepare, _same_length_batches, _window_bounds
from speechkit.transcript import Segment

#: The registry name of the pipeline the backend loads by default (pyannote 4's community-1).
DEFAULT_PIPELINE = "pyannote-speaker-diarization-community-1"
_MODEL_PARAMS = ("segmentation", "embedding", "plda")


@dataclass(frozen=True)
class PyannoteOptions(StageOptions):
    """Options of the pyannote backend.

    ``model``: the pipeline, a registry name (``speechkit models list --stage diarize``) or a
    folder with ``config.yaml`` (or that file). ``exclusive``: turns from the exclusive
    diarization (no overlapping turns; true) or the overlapping one. ``batch_size``: windows per
    batch for the segmentation and embedding models (None: the pipeline's configuration).
    ``match_threshold``: the cosine between an enrollment and a speaker's embedding at which
    identification names the speaker (None: the embedder's default, 0.5).
    """

    model: str = DEFAULT_PIPELINE
    exclusive: bool = True
    batch_size: int | None = bounded(None, ge=1, le=4096)
    match_threshold: float | None = bounded(None, ge=-1.0, le=1.0)


class PipelineEmbedder:
    """The pipeline's speaker-embedding model behind the
    :class:`~speechkit.stages.diarize.embedders.Embedder` interface (for identification).

    ``match_threshold`` 0.5 is a cosine usual for WeSpeaker ResNet34 embeddings, not measured here
    (the gated weights are not on this machine); ``cluster_threshold`` is unused (the pipeline
    clusters itself).
    """

    name = "pyannote"
    cluster_threshold = 0.5

    def __init__(self, embedding: Any, match_threshold: float | None = None) -> None:
        self._embedding = embedding
        self.dim = int(embedding.dimension)
        self.match_threshold = 0.5 if match_threshold is None else match_threshold

    def _batch(self, wavs: np.ndarray) -> np.ndarray:
        import torch

        # The model needs a minimum length (pyannote's own minimum can still give degenerate
        # statistics, e.g. an x-vector's std over one frame): repeat a shorter clip up to 0.5 s.
        need = max(self._embedding.min_num_samples, SAMPLE_RATE // 2)
        if wavs.shape[1] < need:
            wavs = np.tile(wavs, (1, -(-need // wavs.shape[1])))[:, :need]
        with torch.inference_mode():
            rows = np.asarray(self._embedding(torch.from_numpy(wavs)[:, None, :]), dtype=np.float32)
        return l2_normalize(np.nan_to_num(rows))

    def embed(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
        """One L2-normalised vector for a whole clip."""
        return self._batch(_prepare(audio, sample_rate)[None, :])[0]

    def embed_windows(self, audio: np.ndarray, windows: list[tuple[float, float]],
                      sample_rate: int = SAMPLE_RATE, level_dbfs: float | None = None) -> np.ndarray:
        """One L2-normalised row per window (``level_dbfs`` is unused: no volume normalisation)."""
        wav = _prepare(audio, sample_rate)
        bounds = _window_bounds(windows, len(wav))
        out = np.zeros((len(bounds), self.dim), dtype=np.float32)
        for chunk in _same_length_batches([b - a for a, b in bounds], 32):
            out[chunk] = self._batch(np.stack([wav[bounds[i][0]:bounds[i][1]] for i in chunk]))
        return out


class PyannoteDiarizer:
    """pyannote.audio's speaker-diarization pipeline (finds speech itself: VAD regions unused)."""

    Options = PyannoteOptions

    def __init__(self, options: PyannoteOptions | None = None, device: str = "auto", **overrides: Any) -> None:
        self.options = replace(options or PyannoteOptions(), **overrides)
        self.device = resolve_device(device)
        self._pipeline = self._load()
        self.embedder = PipelineEmbedder(self._pipeline._embedding, self.options.match_threshold)

    def diarize(self, record: MeetingRecord) -> Diarization:
        """The pipeline's diarization of the whole recording."""
        audio = load_audio(record.audio, channel=record.channel)
        return self(audio, num_speakers=record.speaker_count)

    def _load(self) -> Any:
        try:
            from pyannote.audio import Pipeline
        except ImportError as e:
            raise ModelNotAvailableError(
                f"the pyannote backend needs pyannote.audio (pip install 'speechkit[stages]'): {e}") from e
        import torch

        config = pipeline_config(registry.resolve(self.options.model))
        params = config["pipeline"].setdefault("params", {})
        if self.options.batch_size is not None:
            params["segmentation_batch_size"] = params["embedding_batch_size"] = self.options.batch_size
        try:
            pipeline = Pipeline.from_pretrained(config)
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:
            problem = " ".join(str(e).split())[:300]
            raise ModelNotAvailableError(f"{self.options.model}: cannot load the pyannote pipeline "
                                         f"({type(e).__name__}: {problem})") from None
        if getattr(pipeline, "_embedding", None) is None:
            raise ModelNotAvailableError(f"{self.options.model}: the pyannote pipeline has no speaker "
                                         f"embedding model (identification needs one)")
        return pipeline.to(torch.device(self.device))

    def __call__(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                 num_speakers: int | None = None, sample_rate: int = SAMPLE_RATE) -> Diarization:
        """Turns and centroids of 16 kHz mono ``audio`` (``speech`` is unused)."""
        import torch

        waveform = torch.from_numpy(np.asarray(audio, dtype=np.float32)).reshape(1, -1)
        kwargs = {} if num_speakers is None else {"num_speakers": num_speakers}
        output = self._pipeline({"waveform": waveform, "sample_rate": sample_rate}, **kwargs)
        overlapping = getattr(output, "speaker_diarization", output)  # pyannote 4 / legacy output
        annotation = (getattr(output, "exclusive_speaker_diarization", None) or overlapping
                      if self.options.exclusive else overlapping)
        embeddings = getattr(output, "speaker_embeddings", None)
        tracks = sorted(annotation.itertracks(yield_label=True), key=lambda x: (x[0].start, x[0].end))
        order = list(dict.fromkeys(label for _, _, label in tracks))
        rename = {label: speaker_label(i) for i, label in enumerate(order)}
        turns = [Segment(start=float(seg.start), end=float(seg.end), speaker=rename[label])
                 for seg, _, label in tracks]
        centroids = {}
        if embeddings is not None:  # rows follow the overlapping diarization's sorted labels
            for row, label in zip(np.asarray(embeddings), overlapping.labels()):
                if label in rename and np.all(np.isfinite(row)) and np.any(row):
                    centroids[rename[label]] = l2_normalize(row)
        return Diarization(turns=turns, centroids=centroids)


def pipeline_config(path: Path) -> dict[str, Any]:
    """The pipeline configuration at ``path`` (a folder with ``config.yaml``, or the file) with
    every model it refers to resolved to a local path (see the module docstring)."""
    import yaml

    file = path / "config.yaml" if path.is_dir() else path
    if not file.is_file():
        raise ModelNotAvailableError(f"{path}: no config.yaml of a pyannote pipeline")
    try:
        config = yaml.safe_load(file.read_text(encoding="utf-8"))
        params = config["pipeline"].setdefault("params", {}) or {}
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as e:
        raise ModelNotAvailableError(f"{file}: not a pyannote pipeline configuration ({e})") from None
    config["pipeline"]["params"] = params
    for key in _MODEL_PARAMS:
        if key in params:
            try:
                params[key] = _local_model(params[key], file.parent, key)
            except ModelNotAvailableError as e:
                raise ModelNotAvailableError(f"{file}: pipeline.params.{key}: {e}") from None
    if "plda" not in params and params.get("clustering", "VBxClustering") != "VBxClustering":
        # pyannote 4 loads community-1's PLDA by default, from the hub, even for clusterings that
        # never use it (3.1's AgglomerativeClustering): hand it an unused placeholder instead.
        from pyannote.audio.core.plda import PLDA
        params["plda"] = object.__new__(PLDA)
    return config


def _local_model(value: Any, folder: Path, key: str) -> Any:
    """A pipeline parameter naming a model, as a local checkpoint pyannote loads without a hub."""
    if isinstance(value, dict) and isinstance(value.get("checkpoint"), str):
        local = _local_model(value["checkpoint"], folder, key)
        return {**value, **local} if isinstance(local, dict) else {**value, "checkpoint": local}
    if not isinstance(value, str):
        return value
    if value.startswith("$model/"):
        return {"checkpoint": str(folder), "subfolder": value[len("$model/"):].split("@")[0]}
    path = folder / value if not Path(value).is_absolute() and (folder / value).exists() else None
    resolved = path or registry.resolve(value)
    record = registry.get(value) if path is None and registry.known(value) else None
    if key == "embedding" and record is not None and record.framework == "speechbrain":
        return str(resolved)  # pyannote picks its speechbrain wrapper by the name
    return {"checkpoint": str(resolved)}
