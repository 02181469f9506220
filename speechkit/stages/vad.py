"""Voice activity detection: speech regions (seconds) of a 16 kHz mono signal.

Every backend computes a speech probability per frame; one shared post-processing turns the
probabilities into regions with the options of :class:`VadOptions` (hysteresis threshold,
padding, merging of short pauses, dropping of short blips), so backends differ only in their
model. Backends (``BACKENDS``; ``make_backend("vad", NAME, **options)`` builds one from keyword options):

- ``silero`` (default): Silero VAD, whose weights ship in the ``silero-vad`` package; its ONNX
  export run by onnxruntime on the CPU (no torch), or its TorchScript model with ``onnx=False``;
  32 ms frames evaluated in one streaming pass; in telephone-band stretches its 8 kHz model
  too (``narrowband``).
- ``speechbrain``: the CRDNN VAD ``speechbrain/vad-crdnn-libriparty`` (10 ms frames).
- ``pyannote``: speech = any speaker active in ``pyannote/segmentation-3.0``.

The stage (:class:`VadStage`) streams a recording in ``chunk_s`` chunks (the backend's state
restarts at each chunk), measures the recording's level on the way, and turns the frame
probabilities of the whole recording into regions once, so a region may span chunks.

Models are resolved through :mod:`speechkit.registry` (registry name or a folder); a model that
is not on the machine raises :class:`~speechkit.errors.ModelNotAvailableError` saying how to
get it.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from speechkit import registry
from speechkit.core.audio import SAMPLE_RATE, iter_audio_chunks
from speechkit.core.options import StageOptions, bounded
from speechkit.core.record import MeetingRecord
from speechkit.core.stage import BackendStage, Spec, Stage
from speechkit.devices import onnx_cpu_session, resolve_device
from speechkit.stages.narrowband import narrowband_frames

log = logging.getLogger(__name__)

BACKENDS = {
    "silero": "speechkit.stages.vad:SileroVad",
    "speechbrain": "speechkit.stages.vad:SpeechBrainVad",
    "pyannote": "speechkit.stages.vad:PyannoteVad",
}
DEFAULT_BACKEND = "silero"


@dataclass(frozen=True)
class VadOptions(StageOptions):
    """How frame probabilities become speech regions (options every VAD backend has).

    ``threshold``: a region starts at a frame with probability >= threshold and ends at the
    first frame below ``threshold - hysteresis``. ``pad_s``: seconds added on each side of a
    region. ``min_silence_s``: after padding, regions separated by less than this are merged.
    ``min_speech_s``: shorter regions are then dropped. ``chunk_s``: seconds of audio the stage
    reads and scores at a time (a whole number of Silero's 32 ms frames keeps chunks aligned).
    """

    threshold: float = bounded(0.5, gt=0.0, le=1.0)
    hysteresis: float = bounded(0.15, ge=0.0, lt=1.0)
    min_speech_s: float = bounded(0.25, ge=0.0, le=3600.0)
    min_silence_s: float = bounded(1.0, ge=0.0, le=3600.0)
    pad_s: float = bounded(0.2, ge=0.0, le=60.0)
    chunk_s: float = bounded(60.0, ge=1.0, le=3600.0)


@dataclass(frozen=True)
class SileroOptions(VadOptions):
    """Silero: ``model`` (registry name, or a folder holding the package's
    ``silero_vad_16k_sequence.onnx``, ``silero_vad.onnx`` and ``silero_vad.jit``); ``onnx``: run
    the ONNX exports with onnxruntime on the CPU, on every device (its 32 ms steps are too small
    for a GPU to pay); False runs the TorchScript model on the stage's device, which loads torch.
    ``narrowband``: in telephone-band stretches (a dialled-in participant; see
    :mod:`speechkit.stages.narrowband`) where the 16 kHz model misses most of what Silero's 8 kHz
    model hears on the audio resampled to 8 kHz, a frame's probability is the larger of the two."""

    model: str = "silero-vad"
    onnx: bool = True
    narrowband: bool = True


@dataclass(frozen=True)
class SpeechBrainVadOptions(VadOptions):
    """SpeechBrain CRDNN: ``model`` (registry name or folder with ``hyperparams.yaml``)."""

    model: str = "speechbrain-vad-crdnn"


@dataclass(frozen=True)
class PyannoteVadOptions(VadOptions):
    """pyannote segmentation: ``model`` (registry name or folder), ``batch_size`` (windows per batch)."""

    model: str = "pyannote-segmentation-3.0"
    batch_size: int = bounded(32, ge=1, le=4096)


@dataclass
class Speech:
    """The VAD stage's result: speech regions (seconds) and the recording's level in dBFS
    (``10 * log10(mean(samples ** 2))``; None for a silent recording)."""

    regions: list[tuple[float, float]]
    level_dbfs: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"regions": [list(r) for r in self.regions], "level_dbfs": self.level_dbfs}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Speech:
        return cls([(float(s), float(e)) for s, e in data["regions"]], data["level_dbfs"])


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
    off = max(options.threshold - options.hysteresis, 0.01)
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
    """Silero VAD (weights from the ``silero-vad`` package via the registry): :class:`SileroOnnx`,
    or :class:`SileroTorchScript` with ``onnx=False``."""

    Options = SileroOptions

    def __init__(self, options: SileroOptions, device: str = "auto") -> None:
        self.options = options
        folder = registry.resolve(options.model)
        self.model = SileroOnnx(folder) if options.onnx else SileroTorchScript(folder, resolve_device(device))

    def probabilities(self, audio: np.ndarray) -> tuple[np.ndarray, float]:
        probs = self.model(audio)
        if self.options.narrowband:
            probs = self._with_telephone_model(audio, probs)
        return probs, SILERO_FRAME / SAMPLE_RATE

    def _with_telephone_model(self, audio: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """``probs`` raised to the 8 kHz model's probability in the telephone-band frames of each
        telephone-band stretch where the 16 kHz model misses most of the speech the 8 kHz model
        hears (fewer than half its frames at ``threshold``, and at least ``TELEPHONE_MISSED_S``
        fewer); a stretch the 16 kHz model hears keeps its probabilities, so its regions do not
        move. The 8 kHz model runs on each stretch from ``TELEPHONE_LEAD_S`` before it (its state
        settles there), and not at all where the 16 kHz model already hears half the stretch's
        frames (the 8 kHz model could not then hear twice as many)."""
        import soxr

        telephone = narrowband_frames(audio, SILERO_FRAME)[:len(probs)]
        probs = probs.copy()
        lead = round(TELEPHONE_LEAD_S * SAMPLE_RATE / SILERO_FRAME)
        threshold = self.options.threshold
        missed = round(TELEPHONE_MISSED_S * SAMPLE_RATE / SILERO_FRAME)
        for first, last in _runs(telephone, lead):
            span, flagged = slice(first, last + 1), telephone[first:last + 1]
            heard_16k = int((probs[span][flagged] >= threshold).sum())
            if 2 * heard_16k >= int(flagged.sum()):
                continue
            piece = audio[first * SILERO_FRAME:(last + 1) * SILERO_FRAME]
            # one 8 kHz frame per 16 kHz frame of the piece (both 32 ms, the last zero padded)
            at_8k = self.model.at_8k(soxr.resample(piece, SAMPLE_RATE, TELEPHONE_RATE).astype(np.float32))
            heard_8k = int((at_8k[flagged] >= threshold).sum())
            if heard_8k > 2 * heard_16k and heard_8k - heard_16k >= missed:
                probs[span] = np.where(flagged, np.maximum(probs[span], at_8k), probs[span])
        return probs


def _runs(mask: np.ndarray, lead: int) -> list[tuple[int, int]]:
    """(first, last) frame of each run of True in ``mask``, each started ``lead`` frames earlier
    (not before 0), runs that then touch or overlap merged."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(np.int8), [0]))))
    runs: list[tuple[int, int]] = []
    for start, stop in zip(edges[::2], edges[1::2]):
        first = max(0, int(start) - lead)
        if runs and first <= runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], int(stop) - 1)
        else:
            runs.append((first, int(stop) - 1))
    return runs


#: Silero's frame (32 ms) and the samples of the previous frame it sees with each frame.
SILERO_FRAME, SILERO_CONTEXT = 512, 64
#: The rate of Silero's telephone model, and its frame (also 32 ms) and context there.
TELEPHONE_RATE, TELEPHONE_FRAME, TELEPHONE_CONTEXT = 8000, 256, 32
#: Seconds of audio the 8 kHz model hears before each telephone-band stretch.
TELEPHONE_LEAD_S = 1.0
#: Speech (s) the 16 kHz model must miss in a telephone-band stretch for the 8 kHz model to count.
TELEPHONE_MISSED_S = 0.5


class SileroOnnx:
    """Silero's sequence export (``silero_vad_16k_sequence.onnx`` of the ``silero-vad`` package)
    on one onnxruntime thread, without torch: ``block`` frames per call, each with the last 64
    samples of the frame before, the LSTM state carried from block to block. The same
    probabilities as the streaming model stepped 32 ms at a time (equal to the bit on real
    speech, tested), about 5x faster."""

    file = "silero_vad_16k_sequence.onnx"
    #: the package's streaming export, which also holds the 8 kHz model
    streaming_file = "silero_vad.onnx"
    block = 512

    def __init__(self, folder: Path) -> None:
        self.session = onnx_cpu_session(folder / self.file)
        self.folder = folder
        self._streaming: Any = None  # loaded on first use of at_8k

    def __call__(self, audio: np.ndarray) -> np.ndarray:
        """Speech probability per 32 ms frame of 16 kHz ``audio`` (the last frame zero padded)."""
        inputs = _frames_with_context(np.asarray(audio, dtype=np.float32), SILERO_FRAME, SILERO_CONTEXT)
        hidden = cell = np.zeros((1, 1, 128), np.float32)
        probs = []
        for begin in range(0, len(inputs), self.block):
            p, hidden, cell = self.session.run(["speech_probs", "hn", "cn"], {
                "input": inputs[begin:begin + self.block], "h": hidden, "c": cell})
            probs.append(p)
        return np.concatenate(probs).astype(np.float32)

    def at_8k(self, audio: np.ndarray) -> np.ndarray:
        """Speech probability per 32 ms frame of 8 kHz ``audio`` by Silero's 8 kHz model, stepped
        one frame at a time (the sequence export is 16 kHz only)."""
        if self._streaming is None:
            self._streaming = onnx_cpu_session(self.folder / self.streaming_file)
        inputs = _frames_with_context(audio, TELEPHONE_FRAME, TELEPHONE_CONTEXT)
        state, rate = np.zeros((2, 1, 128), np.float32), np.array(TELEPHONE_RATE, dtype=np.int64)
        probs = np.empty(len(inputs), np.float32)
        for i, x in enumerate(inputs):
            p, state = self._streaming.run(["output", "stateN"], {"input": x[None], "state": state, "sr": rate})
            probs[i] = p[0, 0]
        return probs


def _frames_with_context(audio: np.ndarray, frame: int, context: int) -> np.ndarray:
    """Silero's model inputs: ``audio`` cut into ``frame``-sample frames (the last zero padded),
    each preceded by the last ``context`` samples of the frame before (zeros for the first)."""
    frames = np.pad(audio, (0, -len(audio) % frame)).reshape(-1, frame)
    before = np.concatenate([np.zeros((1, context), np.float32), frames[:-1, -context:]])
    return np.concatenate([before, frames], axis=1)


class SileroTorchScript:
    """Silero's TorchScript model (``silero_vad.jit``) on ``device``, stepped 32 ms at a time; on
    the CPU with one torch thread (restored afterwards), much faster there than several."""

    def __init__(self, folder: Path, device: str) -> None:
        import torch

        self.device = device
        threads = torch.get_num_threads()
        try:
            from silero_vad.utils_vad import init_jit_model
        finally:
            torch.set_num_threads(threads)  # importing silero_vad sets it to 1 for the process
        self.model = init_jit_model(str(folder / "silero_vad.jit"), device=torch.device(device))

    def __call__(self, audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
        """Speech probability per 32 ms frame of ``audio`` at ``sample_rate`` (16 or 8 kHz)."""
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                probs = self.model.audio_forward(torch.from_numpy(audio).to(self.device), sample_rate)
        finally:
            torch.set_num_threads(threads)
        return probs[0].float().cpu().numpy()

    def at_8k(self, audio: np.ndarray) -> np.ndarray:
        """Speech probability per 32 ms frame of 8 kHz ``audio`` by Silero's 8 kHz model."""
        return self(audio, TELEPHONE_RATE)


class SpeechBrainVad(_FrameVad):
    """SpeechBrain CRDNN VAD; the model folder holds ``hyperparams.yaml`` and its checkpoint."""

    #: audio is scored in pieces of this many seconds, batched per 30 s of signal
    piece_s = 10.0

    Options = SpeechBrainVadOptions

    def __init__(self, options: SpeechBrainVadOptions, device: str = "auto") -> None:
        from speechbrain.inference.VAD import VAD
        self.options = options
        self.device = resolve_device(device)
        folder = registry.resolve(options.model)
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

    Options = PyannoteVadOptions

    def __init__(self, options: PyannoteVadOptions, device: str = "auto") -> None:
        import torch
        from pyannote.audio import Inference, Model
        self.options = options
        self.device = resolve_device(device)
        segmentation = Model.from_pretrained(registry.resolve(options.model))
        self.inference = Inference(segmentation, batch_size=options.batch_size, device=torch.device(self.device),
                                   pre_aggregation_hook=lambda scores: np.max(scores, axis=-1, keepdims=True))

    def probabilities(self, audio: np.ndarray) -> tuple[np.ndarray, float]:
        import torch
        scores = self.inference({"waveform": torch.from_numpy(audio)[None], "sample_rate": SAMPLE_RATE})
        return np.nan_to_num(scores.data[:, 0]), float(scores.sliding_window.step)


def build(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> VadStage:
    """The VAD stage for a recipe's ``stages.vad``."""
    return VadStage(spec, device, reads)


class VadStage(BackendStage[Speech]):
    """Speech regions of a recording, read in ``chunk_s`` chunks (see the module docstring)."""

    name = "vad"
    backends = BACKENDS
    version = 3  # 2: Silero through onnxruntime's sequence export; 3: its 8 kHz model in telephone-band stretches
    reads_audio = True
    stored = True
    result_type = Speech

    def run(self, record: MeetingRecord) -> Speech:
        options = self.spec.options
        probs: list[np.ndarray] = []
        offsets: list[float] = []
        step, samples, energy = 0.0, 0, 0.0
        chunks = iter_audio_chunks(record.audio, options.chunk_s, SAMPLE_RATE, record.channel)
        for chunk in record.timed_iter("audio", chunks):
            if len(chunk) >= SAMPLE_RATE // 100:
                p, step = self.backend.probabilities(chunk)
                probs.append(np.asarray(p, dtype=np.float32))
                offsets.append(samples / SAMPLE_RATE)
            samples += len(chunk)
            energy += float(np.dot(chunk.astype(np.float64), chunk))
        level = 10 * float(np.log10(energy / samples)) if energy > 0 else None
        if not probs:
            return Speech([], level)
        duration = samples / SAMPLE_RATE
        frames = _on_grid(probs, offsets, step, duration)
        return Speech(regions_from_probabilities(frames, step, options, duration), level)


def _on_grid(probs: list[np.ndarray], offsets: list[float], step: float, duration: float) -> np.ndarray:
    """Per-chunk frame probabilities as one sequence of frames every ``step`` seconds from 0."""
    lengths = np.array([len(p) for p in probs])
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    grid = np.arange(int(np.ceil(duration / step - 1e-9))) * step
    which = np.searchsorted(np.asarray(offsets), grid + 1e-9, side="right") - 1
    local = np.minimum(((grid - np.asarray(offsets)[which]) / step + 1e-6).astype(int), lengths[which] - 1)
    return np.concatenate(probs)[starts[which] + local]
