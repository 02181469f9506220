"""Resemblyzer's d-vector encoder without torch at run time.

The ``resemblyzer`` package runs its encoder (a 3-layer LSTM of 256 units over 40 mel bands, a
linear 256 -> 256 layer, ReLU, L2 norm) in torch, and importing any part of the package imports
torch (about 600 MB of resident memory). Here the same network runs in onnxruntime, which the
Silero VAD loads anyway:

- :func:`convert` turns the package's ``pretrained.pt`` into ``voice_encoder.onnx`` once: the
  network with the mel filterbank in front of it (power spectrogram frames in, d-vectors out),
  exported from Resemblyzer's own ``VoiceEncoder`` in a child process, so that the caller never
  loads torch. The model registry calls it (the ``resemblyzer`` entry's ``convert``) and keeps the
  result in a folder keyed by the checkpoint's content; ``speechkit models fetch resemblyzer``
  (run by ``make setup``) does it ahead of time.
- :func:`power_spectrogram` gives the frames the model reads: librosa's STFT as Resemblyzer calls
  it (25 ms Hann windows every 10 ms, centred, zero padded), in numpy.
- :class:`VoiceEncoder` runs the model (one thread) on batches of frames, and embeds a whole
  utterance as Resemblyzer's ``embed_utterance`` does (the mean of 1.6 s partials).
- :func:`trim_long_silences` is Resemblyzer's preprocessing of a whole clip (webrtcvad).

The embeddings match Resemblyzer's torch ones to float precision (cosine >= 0.9999, tested on
real speech).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from speechkit.core.audio import SAMPLE_RATE
from speechkit.devices import onnx_cpu_session
from speechkit.errors import ModelNotAvailableError

# Resemblyzer's hyperparameters (resemblyzer/hparams.py), at its 16 kHz sample rate.
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms: one frame per 10 ms
N_MELS = 40
PARTIAL_FRAMES = 160  # 1.6 s partial utterances
PARTIALS_PER_S = 1.3
MIN_COVERAGE = 0.75
VAD_WINDOW = 480  # 30 ms webrtcvad frames
VAD_AVERAGE_WIDTH = 8
VAD_MAX_SILENCE = 6
NORM_TARGET_DBFS = -30  # quieter audio is raised to this level

#: The converted model's file name in its folder.
MODEL_FILE = "voice_encoder.onnx"
_WINDOW = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)  # periodic Hann


def power_spectrogram(wav: np.ndarray) -> np.ndarray:
    """Power spectrogram frames ``(1 + len(wav) // HOP, N_FFT // 2 + 1)`` of 16 kHz ``wav``, as
    librosa's ``stft(center=True, pad_mode="constant")`` squared, which Resemblyzer's mel uses."""
    padded = np.pad(np.asarray(wav, dtype=np.float32), N_FFT // 2)
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    spectrum = np.fft.rfft(frames * _WINDOW, axis=-1)
    return (spectrum.real ** 2 + spectrum.imag ** 2).astype(np.float32)


def trim_long_silences(wav: np.ndarray) -> np.ndarray:
    """``wav`` without the silences longer than about 0.2 s (webrtcvad, aggressiveness 3, smoothed
    and dilated), as Resemblyzer's ``trim_long_silences``; cut to a whole number of 30 ms frames."""
    from scipy.ndimage import binary_dilation
    try:
        import webrtcvad
    except ImportError as e:  # webrtcvad needs pkg_resources, i.e. setuptools < 81
        raise ModelNotAvailableError(f"whole-clip Resemblyzer embeddings need webrtcvad and setuptools<81 "
                                     f"(pip install 'speechkit[stages]'): {e}") from e

    wav = wav[:len(wav) - len(wav) % VAD_WINDOW]
    pcm = np.round(wav * (2 ** 15 - 1)).astype("<i2").tobytes()
    vad = webrtcvad.Vad(mode=3)
    flags = np.array([vad.is_speech(pcm[i * 2:(i + VAD_WINDOW) * 2], sample_rate=SAMPLE_RATE)
                      for i in range(0, len(wav), VAD_WINDOW)], dtype=float)
    width = VAD_AVERAGE_WIDTH
    padded = np.concatenate((np.zeros((width - 1) // 2), flags, np.zeros(width // 2)))
    sums = np.cumsum(padded)
    sums[width:] = sums[width:] - sums[:-width]
    mask = np.round(sums[width - 1:] / width).astype(bool)
    mask = binary_dilation(mask, np.ones(VAD_MAX_SILENCE + 1))
    return wav[np.repeat(mask, VAD_WINDOW)]


class VoiceEncoder:
    """The converted Resemblyzer encoder (``voice_encoder.onnx``) on one onnxruntime CPU thread:
    the LSTM's per-step matrices are too small for more threads to pay."""

    dim = 256

    def __init__(self, model_file: str | Path) -> None:
        self._session = onnx_cpu_session(model_file)

    def __call__(self, power: np.ndarray) -> np.ndarray:
        """L2-normalised d-vectors ``(batch, 256)`` of equal-length frame sequences
        ``(batch, frames, N_FFT // 2 + 1)`` (:func:`power_spectrogram` rows)."""
        return self._session.run(None, {"power": np.ascontiguousarray(power, dtype=np.float32)})[0]

    def embed_utterance(self, wav: np.ndarray) -> np.ndarray:
        """The d-vector of a whole utterance: the normalised mean of 1.6 s partials, 1.3 per second,
        the last one kept (zero padded) when it covers at least 75% (Resemblyzer's defaults)."""
        n_frames = int(np.ceil((len(wav) + 1) / HOP))
        step = int(np.round(SAMPLE_RATE / PARTIALS_PER_S / HOP))
        starts = list(range(0, max(1, n_frames - PARTIAL_FRAMES + step + 1), step))
        if len(starts) > 1 and (len(wav) - starts[-1] * HOP) / (PARTIAL_FRAMES * HOP) < MIN_COVERAGE:
            starts.pop()
        end = (starts[-1] + PARTIAL_FRAMES) * HOP
        power = power_spectrogram(np.pad(wav, (0, max(0, end - len(wav)))))
        partials = self(np.stack([power[s:s + PARTIAL_FRAMES] for s in starts]))
        mean = partials.mean(axis=0)
        return mean / np.linalg.norm(mean)


def convert(source: Path, folder: Path) -> None:
    """Write ``folder/voice_encoder.onnx`` from Resemblyzer's checkpoint ``source`` (a
    ``pretrained.pt``). The export needs torch and the resemblyzer package; it runs in a child
    process, so the calling process does not load torch."""
    package_root = str(Path(__file__).resolve().parents[3])  # this speechkit, wherever the child starts
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", __name__, str(source), str(Path(folder) / MODEL_FILE)],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        problem = " ".join(done.stderr.strip().splitlines()[-1:])[:300]
        raise ModelNotAvailableError(f"{source}: cannot convert the Resemblyzer weights to ONNX, which needs "
                                     f"torch and resemblyzer (pip install 'speechkit[stages]'): {problem}")


def export_onnx(source: Path, target: Path) -> None:
    """The torch side of :func:`convert`: Resemblyzer's ``VoiceEncoder`` with ``source``'s weights
    behind librosa's mel filterbank, exported to ONNX at ``target``."""
    import librosa
    import torch
    from resemblyzer import VoiceEncoder as TorchVoiceEncoder

    class WithMel(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = TorchVoiceEncoder(device="cpu", verbose=False, weights_fpath=source)
            mel = librosa.filters.mel(sr=SAMPLE_RATE, n_fft=N_FFT, n_mels=N_MELS)  # (mels, bins)
            self.register_buffer("mel_basis", torch.from_numpy(np.ascontiguousarray(mel.T)))

        def forward(self, power: torch.Tensor) -> torch.Tensor:
            return self.encoder(power @ self.mel_basis)

    example = torch.zeros((2, PARTIAL_FRAMES, N_FFT // 2 + 1))
    torch.onnx.export(WithMel().eval(), (example,), str(target), input_names=["power"],
                      output_names=["embedding"], opset_version=17, dynamo=False,
                      dynamic_axes={"power": {0: "batch", 1: "frames"}, "embedding": {0: "batch"}})


if __name__ == "__main__":
    export_onnx(Path(sys.argv[1]), Path(sys.argv[2]))
