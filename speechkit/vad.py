"""Voice activity detection: speech regions (seconds) of a 16 kHz mono signal.

Every backend computes a speech probability per frame; one shared post-processing turns the
probabilities into regions with the options of :class:`VadOptions` (hysteresis threshold,
padding, merging of short pauses, dropping of short blips), so backends differ only in their
model. Backends, created by :func:`make_vad`:

- ``silero`` (default): Silero VAD v5, whose weights ship in the ``silero-vad`` package
  (TorchScript, or ONNX with ``onnx=True``); 32 ms frames evaluated in one streaming pass.
- ``speechbrain``: the CRDNN VAD ``speechbrain/vad-crdnn-libriparty`` (10 ms frames).
- ``pyannote``: speech = any speaker active in ``pyannote/segmentation-3.0``.

Models are resolved through :mod:`speechkit.registry` (registry name or a folder); a model that
is not on the machine raises :class:`~speechkit.errors.ModelNotAvailableError` saying how to
get it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from speechkit import registry
from speechkit.devices import resolve_device

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000


@dataclass
class VadOptions:
    """How frame probabilities become speech regions.

    ``threshold``: a region starts at a frame with probability >= threshold and ends at the
    first frame below ``threshold - 0.15`` (hysteresis). ``pad_s``: seconds added on each side
    of a region. ``min_silence_s``: after padding, regions separated by less than this are
    merged. ``min_speech_s``: shorter regions are then dropped.
    """

    threshold: float = 0.5
    min_speech_s: float = 0.25
    min_silence_s: float = 1.0
    pad_s: float = 0.2


class Vad(Protocol):
    """What every VAD backend provides."""

    options: VadOptions

    def probabilities(self, audio: np.ndarray) -> tuple[np.ndarray, float]:
        """Speech probability per frame of 16 kHz ``audio``, and the frame step in seconds."""
        ...

    def __call__(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> list[tuple[float, float]]:
        """Speech regions (start, end) in seconds."""
        ...


class _FrameVad:
    """Shared ``__call__``: input checks, resampling, probabilities -> regions."""

    options: VadOptions

    def probabilities(self, audio: np.ndarray) -> tuple[np.ndarray, float]:
        raise NotImplementedError

    def __call__(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> list[tuple[float, float]]:
        audio = np.asarray(audio, dtype=np.float32)
        if audio.ndim != 1:
            raise ValueError(f"expected mono audio (1-D), got shape {audio.shape}")
        if sample_rate != SAMPLE_RATE:
            import soxr
            audio = soxr.resample(audio, sample_rate, SAMPLE_RATE).astype(np.float32)
        if len(audio) < SAMPLE_RATE // 100:
            return []
        probs, step = self.probabilities(audio)
        return regions_from_probabilities(probs, step, self.options, len(audio) / SAMPLE_RATE)


def regions_from_probabilities(probs: np.ndarray, step: float, options: VadOptions,
                               duration: float) -> list[tuple[float, float]]:
    """Speech regions from per-frame probabilities (frame i starts at ``i * step`` seconds)."""
    off = max(options.threshold - 0.15, 0.01)
    raw: list[tuple[float, float]] = []
    start = None
    for i, p in enumerate(np.asarray(probs, dtype=float)):
        if start is None and p >= options.threshold:
            start = i
        elif start is not None and p < off:
            raw.append((start * step, i * step))
            start = None
    if start is not None:
        raw.append((start * step, duration))
    regions: list[tuple[float, float]] = []
    for s, e in raw:
        s, e = max(0.0, s - options.pad_s), min(duration, e + options.pad_s)
        if regions and s - regions[-1][1] < options.min_silence_s:
            regions[-1] = (regions[-1][0], e)
        else:
            regions.append((s, e))
    return [(round(s, 3), round(e, 3)) for s, e in regions if e - s >= options.min_speech_s]


class SileroVad(_FrameVad):
    """Silero VAD (weights from the ``silero-vad`` package via the registry).

    ``onnx``: run the ONNX export with onnxruntime (one thread) instead of TorchScript; the
    default (None) uses ONNX on the CPU and TorchScript on a GPU. The model steps through the
    signal 32 ms at a time, and on the CPU one thread is much faster than several (TorchScript
    is run with one torch thread, restored afterwards).
    """

    def __init__(self, options: VadOptions, model: str = "silero-vad", onnx: bool | None = None,
                 device: str = "auto") -> None:
        import torch
        self.options = options
        self.device = resolve_device(device)
        self.onnx = self.device == "cpu" if onnx is None else onnx
        folder = registry.resolve(model)
        threads = torch.get_num_threads()
        try:
            from silero_vad.utils_vad import OnnxWrapper, init_jit_model
        finally:
            torch.set_num_threads(threads)  # importing silero_vad sets it to 1 for the process
        if self.onnx:
            self.model = OnnxWrapper(str(folder / "silero_vad.onnx"), force_onnx_cpu=True)
        else:
            self.model = init_jit_model(str(folder / "silero_vad.jit"), device=torch.device(self.device))

    def probabilities(self, audio: np.ndarray) -> tuple[np.ndarray, float]:
        import torch
        tensor = torch.from_numpy(audio)
        threads = torch.get_num_threads()
        if not self.onnx:
            tensor = tensor.to(self.device)
            torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                probs = self.model.audio_forward(tensor, SAMPLE_RATE)
        finally:
            torch.set_num_threads(threads)
        return probs[0].float().cpu().numpy(), 512 / SAMPLE_RATE


class SpeechBrainVad(_FrameVad):
    """SpeechBrain CRDNN VAD; the model folder holds ``hyperparams.yaml`` and its checkpoint."""

    #: audio is scored in pieces of this many seconds, batched per 30 s of signal
    piece_s = 10.0

    def __init__(self, options: VadOptions, model: str = "speechbrain-vad-crdnn",
                 device: str = "auto") -> None:
        from speechbrain.inference.VAD import VAD
        self.options = options
        self.device = resolve_device(device)
        folder = registry.resolve(model)
        self.model = VAD.from_hparams(source=str(folder), run_opts={"device": self.device})

    def probabilities(self, audio: np.ndarray) -> tuple[np.ndarray, float]:
        import torch
        step = float(self.model.time_resolution)
        piece = int(self.piece_s * SAMPLE_RATE)
        frames_per_piece = round(self.piece_s / step)
        out = []
        for begin in range(0, len(audio), 3 * piece):
            block = audio[begin:begin + 3 * piece]
            block = np.pad(block, (0, -len(block) % piece)).reshape(-1, piece)
            with torch.inference_mode():
                probs = self.model.get_speech_prob_chunk(torch.from_numpy(block))
            out.append(probs[:, :frames_per_piece, 0].reshape(-1).float().cpu().numpy())
        probs = np.concatenate(out)[:int(len(audio) / SAMPLE_RATE / step)]
        return probs, step


class PyannoteVad(_FrameVad):
    """Speech = any speaker active in a pyannote segmentation model (sliding-window inference)."""

    def __init__(self, options: VadOptions, model: str = "pyannote-segmentation-3.0",
                 device: str = "auto", batch_size: int = 32) -> None:
        import torch
        from pyannote.audio import Inference, Model
        self.options = options
        self.device = resolve_device(device)
        segmentation = Model.from_pretrained(registry.resolve(model))
        self.inference = Inference(segmentation, batch_size=batch_size, device=torch.device(self.device),
                                   pre_aggregation_hook=lambda scores: np.max(scores, axis=-1, keepdims=True))

    def probabilities(self, audio: np.ndarray) -> tuple[np.ndarray, float]:
        import torch
        scores = self.inference({"waveform": torch.from_numpy(audio)[None], "sample_rate": SAMPLE_RATE})
        return np.nan_to_num(scores.data[:, 0]), float(scores.sliding_window.step)


BACKENDS: dict[str, type[_FrameVad]] = {
    "silero": SileroVad, "speechbrain": SpeechBrainVad, "pyannote": PyannoteVad,
}


def make_vad(backend: str = "silero", **options: Any) -> Vad:
    """The VAD backend named ``backend``.

    ``options`` mixes :class:`VadOptions` fields (threshold, min_speech_s, min_silence_s,
    pad_s) with the backend's own (``model``, ``device``, ``onnx`` for silero, ``batch_size``
    for pyannote).
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown VAD backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    fields = VadOptions.__dataclass_fields__
    vad_options = VadOptions(**{k: v for k, v in options.items() if k in fields})
    return BACKENDS[backend](vad_options, **{k: v for k, v in options.items() if k not in fields})
