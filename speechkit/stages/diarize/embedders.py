"""Speaker embeddings: one L2-normalised vector per clip or per time window of a recording.

Two backends behind one interface (:class:`Embedder`), built by :func:`make_embedder`:

- ``resemblyzer``: the Resemblyzer d-vector encoder (3-layer LSTM over 40 mel bands, 256 dims);
  its weights ship in the ``resemblyzer`` package, so it works offline; it runs in onnxruntime
  from those weights converted once (:mod:`speechkit.stages.diarize.voice_encoder`), without torch.
- ``ecapa``: SpeechBrain's ECAPA-TDNN (192 dims) loaded with ``EncoderClassifier.from_hparams``
  from the folder :mod:`speechkit.registry` resolves (``hyperparams.yaml`` +
  ``embedding_model.ckpt``, the layout of the hub model ``speechbrain/spkrec-ecapa-voxceleb``,
  registry name ``speechbrain-ecapa-voxceleb``); never downloaded at run time.

Cosine similarities live on different scales per backend (Resemblyzer's vectors are
non-negative, so unrelated voices still score about 0.5-0.8), hence each embedder carries the
thresholds that suit it: ``cluster_threshold`` for diarization and ``match_threshold`` for
identification. Measured with Resemblyzer on real speech: 1.5 s windows of one caller of
``pyannote-sample`` 0.75-0.79 on average, across the two callers 0.67; enrollment vs cluster
centroid 0.90-0.97 for the same caller, 0.81-0.84 for the other; AMI participants across
excerpts 0.67-0.92 for the same person, 0.46-0.76 for others. ECAPA's thresholds are the usual
values for the hub model, not measured here (its weights are not on this machine).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from speechkit import registry
from speechkit.core.audio import SAMPLE_RATE
from speechkit.core.options import StageOptions, bounded
from speechkit.core.stage import registered_class
from speechkit.core.vectors import l2_normalize
from speechkit.devices import resolve_device
from speechkit.errors import ModelNotAvailableError
from speechkit.stages.diarize.voice_encoder import (
    HOP,
    NORM_TARGET_DBFS,
    VoiceEncoder,
    power_spectrogram,
    trim_long_silences,
)

#: The registry name of the ECAPA model the ``ecapa`` embedder loads by default.
ECAPA_MODEL = "speechbrain-ecapa-voxceleb"
#: Embedder name -> "module:Class" (the ``embedder`` option of the diarization stage).
EMBEDDERS = {
    "resemblyzer": "speechkit.stages.diarize.embedders:ResemblyzerEmbedder",
    "ecapa": "speechkit.stages.diarize.embedders:EcapaEmbedder",
}


class Embedder(Protocol):
    """What every speaker-embedding backend offers."""

    name: str
    dim: int
    cluster_threshold: float
    match_threshold: float

    def embed(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
        """One L2-normalised vector (shape ``(dim,)``) for a whole clip."""
        ...

    def embed_windows(self, audio: np.ndarray, windows: list[tuple[float, float]],
                      sample_rate: int = SAMPLE_RATE, level_dbfs: float | None = None) -> np.ndarray:
        """One L2-normalised row per ``(start, end)`` window in seconds, shape ``(n, dim)``.

        ``level_dbfs``: when ``audio`` is one block of a longer recording, that recording's level
        (``10 * log10(mean(samples ** 2))``); a backend that normalises volume then scales every
        block alike, as it would the whole recording.
        """
        ...


def embedder_class(name: str) -> Any:
    """The class registered for embedder ``name`` in ``EMBEDDERS``."""
    return registered_class(EMBEDDERS, name, "stages.diarize.embedder", "embedder")


def make_embedder(backend: str = "resemblyzer", device: str = "auto", **options: Any) -> Embedder:
    """The speaker embedder named ``backend`` with keyword options (validated)."""
    cls = embedder_class(backend)
    return cls(cls.Options.from_dict(options, "stages.diarize.embedder_options"), device=device)


def _prepare(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """Mono float32 audio at 16 kHz; raises ValueError for empty or non-finite input."""
    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim != 1:
        raise ValueError(f"expected mono audio (1-D array), got shape {audio.shape}")
    if audio.size == 0:
        raise ValueError("cannot embed empty audio")
    if not np.all(np.isfinite(audio)):
        raise ValueError("audio contains NaN or infinite samples")
    if sample_rate != SAMPLE_RATE:
        from math import gcd

        from scipy.signal import resample_poly

        g = gcd(sample_rate, SAMPLE_RATE)
        audio = resample_poly(audio, SAMPLE_RATE // g, sample_rate // g).astype(np.float32)
    return audio


def _window_bounds(windows: list[tuple[float, float]], n_samples: int) -> list[tuple[int, int]]:
    """Sample index ranges of ``windows`` (seconds at 16 kHz), clipped to the audio."""
    bounds = []
    for start, end in windows:
        a = max(0, int(round(start * SAMPLE_RATE)))
        b = min(n_samples, int(round(end * SAMPLE_RATE)))
        if b <= a:
            raise ValueError(f"window ({start:.3f}, {end:.3f}) s is empty or outside the audio "
                             f"({n_samples / SAMPLE_RATE:.3f} s)")
        bounds.append((a, b))
    return bounds


def _same_length_batches(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices grouped by equal length, in batches of at most ``batch_size`` (no padding, so a
    window's embedding does not depend on its batch)."""
    by_length: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        by_length.setdefault(n, []).append(i)
    return [idx[k:k + batch_size] for idx in by_length.values() for k in range(0, len(idx), batch_size)]


@dataclass(frozen=True)
class ResemblyzerOptions(StageOptions):
    """Resemblyzer: ``model`` (a registry name, by default ``resemblyzer``: the weights the package
    ships, converted once to ONNX; or a path: a converted ``voice_encoder.onnx``, a folder holding
    one, or a Resemblyzer ``pretrained.pt``, converted once in the same way), ``batch_size``
    (windows per batch)."""

    model: str = "resemblyzer"
    batch_size: int = bounded(64, ge=1, le=4096)


class ResemblyzerEmbedder:
    """Resemblyzer's d-vector encoder, run by onnxruntime on the CPU whatever ``device`` is
    (:mod:`speechkit.stages.diarize.voice_encoder`: no torch at run time).

    ``embed`` follows Resemblyzer's own recipe (volume normalisation, long silences trimmed with
    webrtcvad, mean of 1.6 s partial embeddings). ``embed_windows`` computes the spectrogram of
    ``audio`` once and runs the network on each window's frames, batched by length.
    """

    Options = ResemblyzerOptions
    name = "resemblyzer"
    dim = VoiceEncoder.dim
    cluster_threshold = 0.70
    match_threshold = 0.75

    def __init__(self, options: ResemblyzerOptions | None = None, device: str = "auto",
                 **overrides: Any) -> None:
        self.options = (options or ResemblyzerOptions()).with_overrides(**overrides)
        self._encoder = VoiceEncoder(self._model_file(self.options.model))

    @staticmethod
    def _model_file(model: str) -> Path:
        """The ``voice_encoder.onnx`` that ``model`` names (a checkpoint is converted first)."""
        path = registry.resolve(model)
        if path.suffix == ".pt":
            path = registry.converted(registry.get("resemblyzer"), path)
        return registry.file_of(path, ".onnx")

    def embed(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
        wav = self._normalize(_prepare(audio, sample_rate))
        trimmed = trim_long_silences(wav)
        if len(trimmed) >= SAMPLE_RATE // 2:  # keep the untrimmed clip if the VAD left too little
            wav = trimmed
        return l2_normalize(self._encoder.embed_utterance(wav))

    def embed_windows(self, audio: np.ndarray, windows: list[tuple[float, float]],
                      sample_rate: int = SAMPLE_RATE, level_dbfs: float | None = None) -> np.ndarray:
        wav = self._normalize(_prepare(audio, sample_rate), level_dbfs)
        bounds = _window_bounds(windows, len(wav))
        power = power_spectrogram(wav)  # one frame per 10 ms (HOP samples)
        frames = [(a // HOP, max(a // HOP + 1, min(len(power), b // HOP))) for a, b in bounds]
        out = np.zeros((len(frames), self.dim), dtype=np.float32)
        for chunk in _same_length_batches([b - a for a, b in frames], self.options.batch_size):
            out[chunk] = self._encoder(np.stack([power[frames[i][0]:frames[i][1]] for i in chunk]))
        return l2_normalize(out)

    @staticmethod
    def _normalize(wav: np.ndarray, level_dbfs: float | None = None) -> np.ndarray:
        """Resemblyzer's volume normalisation: raise audio quieter than -30 dBFS to -30 dBFS
        (judged by ``level_dbfs`` when given, else by ``wav``'s own level)."""
        if not np.any(wav):
            return wav
        if level_dbfs is None:
            level_dbfs = 10 * np.log10(np.mean(np.square(wav, dtype=np.float64)))
        change = NORM_TARGET_DBFS - level_dbfs
        return wav if change < 0 else (wav * 10 ** (change / 20)).astype(np.float32)


@dataclass(frozen=True)
class EcapaOptions(StageOptions):
    """ECAPA: ``model`` (a registry name, ``speechkit models list --stage embed``, or a folder
    holding ``hyperparams.yaml`` and ``embedding_model.ckpt``), ``batch_size`` (windows per batch)."""

    model: str = ECAPA_MODEL
    batch_size: int = bounded(32, ge=1, le=4096)


class EcapaEmbedder:
    """SpeechBrain ECAPA-TDNN speaker embeddings.

    ``model`` resolves (:func:`speechkit.registry.resolve`) to a folder laid out like the hub model:
    ``hyperparams.yaml`` whose ``pretrainer`` loads ``embedding_model.ckpt`` from
    ``pretrained_path``; it is loaded in place (``pretrained_path`` is pointed at the folder).
    """

    Options = EcapaOptions
    name = "ecapa"
    dim = 192
    cluster_threshold = 0.35
    match_threshold = 0.35

    def __init__(self, options: EcapaOptions | None = None, device: str = "auto", **overrides: Any) -> None:
        self.options = (options or EcapaOptions()).with_overrides(**overrides)
        self.device = resolve_device(device)
        self._model = self._load()
        self._model.eval()
        self.dim = int(self._embed_batch(np.zeros((1, SAMPLE_RATE), np.float32)).shape[1])

    def _load(self) -> Any:
        try:
            from speechbrain.inference.speaker import EncoderClassifier
        except ImportError as e:
            raise ModelNotAvailableError(
                f"the ecapa backend needs speechbrain (pip install 'speechkit[stages]'): {e}") from e
        folder = registry.resolve(self.options.model).resolve()
        expected = "expected an ECAPA model folder (hyperparams.yaml, embedding_model.ckpt)"
        if not (folder / "hyperparams.yaml").is_file():
            raise ModelNotAvailableError(f"{folder}: no hyperparams.yaml; {expected}")
        try:
            return EncoderClassifier.from_hparams(
                source=str(folder), run_opts={"device": self.device},
                overrides={"pretrained_path": str(folder)}, overrides_must_match=False)
        except (OSError, ValueError, RuntimeError) as e:  # missing or mismatched checkpoint
            problem = " ".join(str(e).split())[:300]
            raise ModelNotAvailableError(f"{folder}: cannot load the ECAPA model ({problem}); {expected}") from None

    def _embed_batch(self, wavs: np.ndarray) -> np.ndarray:
        """Normalised embeddings of equal-length clips, shape ``(batch, samples)``."""
        import torch

        with torch.inference_mode():
            emb = self._model.encode_batch(torch.from_numpy(wavs).to(self.device)).squeeze(1)
        return l2_normalize(emb.float().cpu().numpy())

    def embed(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
        wav = _prepare(audio, sample_rate)
        return self._embed_batch(wav[None, :])[0]

    def embed_windows(self, audio: np.ndarray, windows: list[tuple[float, float]],
                      sample_rate: int = SAMPLE_RATE, level_dbfs: float | None = None) -> np.ndarray:
        wav = _prepare(audio, sample_rate)  # ECAPA does not normalise volume: level_dbfs is unused
        bounds = _window_bounds(windows, len(wav))
        out = np.zeros((len(bounds), self.dim), dtype=np.float32)
        for chunk in _same_length_batches([b - a for a, b in bounds], self.options.batch_size):
            batch = np.stack([wav[bounds[i][0]:bounds[i][1]] for i in chunk])
            out[chunk] = self._embed_batch(batch)
        return out
