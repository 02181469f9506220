"""Resemblyzer without torch: the ONNX conversion gives the torch encoder's embeddings on real
speech, and the registry converts the package's checkpoint once per content."""
from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechkit import registry
from speechkit.errors import ModelNotAvailableError
from speechkit.stages.diarize import voice_encoder
from speechkit.stages.diarize.embedders import ResemblyzerEmbedder, make_embedder
from speechkit.stages.diarize.embedding import sliding_windows

SR = 16000
CLIPS = ("ami-debug/trn00.wav", "ami-debug/trn07.wav", "pyannote-sample/sample.wav")


@pytest.fixture(scope="module")
def recordings(realdata: Path) -> dict[str, np.ndarray]:
    out = {}
    for clip in CLIPS:
        audio, sr = sf.read(realdata / clip, dtype="float32")
        assert sr == SR
        out[clip] = audio
    return out


@pytest.fixture(scope="module")
def torch_encoder():
    """Resemblyzer's own torch encoder (the reference), on one thread."""
    torch = pytest.importorskip("torch")
    from resemblyzer import VoiceEncoder
    torch.set_num_threads(1)
    return VoiceEncoder(device="cpu", verbose=False)


@pytest.fixture(scope="module")
def embedder() -> ResemblyzerEmbedder:
    return make_embedder("resemblyzer", device="cpu")


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


def test_window_embeddings_match_the_torch_encoder(embedder, torch_encoder, recordings):
    import torch
    from resemblyzer.audio import wav_to_mel_spectrogram
    checked = 0
    for audio in recordings.values():
        windows = sliding_windows([(0.0, len(audio) / SR)], 1.5, 0.75)
        ours = embedder.embed_windows(audio, windows)
        wav = ResemblyzerEmbedder._normalize(audio)
        mel = wav_to_mel_spectrogram(wav)
        frames = [(round(s * SR) // 160, min(len(mel), round(e * SR) // 160)) for s, e in windows]
        assert {b - a for a, b in frames} == {150}
        with torch.inference_mode():
            theirs = torch_encoder(torch.from_numpy(np.stack([mel[a:b] for a, b in frames]))).numpy()
        assert ours.shape == theirs.shape == (len(windows), 256)
        assert cosines(ours, theirs).min() >= 0.9999
        checked += len(windows)
    assert checked > 100
    # and the embeddings still tell the two callers of sample.wav apart: not a constant vector
    sample = embedder.embed_windows(recordings["pyannote-sample/sample.wav"], [(7.0, 8.5), (11.0, 12.5)])
    assert cosines(sample[0], sample[1]) < 0.95


def test_clip_embeddings_match_the_torch_encoder(embedder, torch_encoder, recordings):
    from resemblyzer.audio import trim_long_silences
    for audio in recordings.values():
        for start, end in ((0.0, 10.0), (3.0, 4.1), (12.0, 29.0)):
            clip = audio[int(start * SR):int(end * SR)]
            wav = ResemblyzerEmbedder._normalize(clip)
            trimmed = trim_long_silences(wav)
            theirs = torch_encoder.embed_utterance(trimmed if len(trimmed) >= SR // 2 else wav)
            assert cosines(embedder.embed(clip), theirs) >= 0.9999


def test_features_are_resemblyzers(recordings):
    import librosa
    from resemblyzer.audio import trim_long_silences, wav_to_mel_spectrogram
    audio = recordings["ami-debug/trn00.wav"]
    mel = voice_encoder.power_spectrogram(audio) @ librosa.filters.mel(sr=SR, n_fft=400, n_mels=40).T
    reference = wav_to_mel_spectrogram(audio)
    assert mel.shape == reference.shape
    assert np.abs(mel - reference).max() <= 1e-5 * reference.max()
    for start in (0, 5, 17):
        clip = audio[start * SR:(start + 9) * SR]
        np.testing.assert_array_equal(voice_encoder.trim_long_silences(clip), trim_long_silences(clip))


@pytest.fixture
def converted_dir(tmp_path, monkeypatch) -> Path:
    """An empty folder for converted models."""
    monkeypatch.setenv("SPEECHKIT_CONVERTED_DIR", str(tmp_path / "converted"))
    registry.identity.cache_clear()
    yield tmp_path / "converted"
    registry.identity.cache_clear()


def test_the_package_checkpoint_converts_once_into_a_content_keyed_folder(converted_dir, monkeypatch):
    folder = registry.resolve("resemblyzer")  # converted here: the folder was empty
    assert folder.parent == converted_dir / "resemblyzer" and len(folder.name) == 16
    assert registry.file_of("resemblyzer", ".onnx") == folder / voice_encoder.MODEL_FILE
    monkeypatch.setattr(voice_encoder, "convert", lambda *a: pytest.fail("converted twice"))
    assert registry.resolve("resemblyzer") == folder
    # a checkpoint given by path with the package's content is the same conversion
    checkpoint = converted_dir / "mine.pt"
    shipped = Path(importlib.util.find_spec("resemblyzer").submodule_search_locations[0]) / "pretrained.pt"
    checkpoint.write_bytes(shipped.read_bytes())
    assert ResemblyzerEmbedder._model_file(str(checkpoint)) == folder / voice_encoder.MODEL_FILE


CONVERSIONS: list[Path] = []


def fake_convert(source: Path, folder: Path) -> None:
    """A stand-in converter: copies the source, counting calls."""
    CONVERSIONS.append(source)
    (Path(folder) / "copy.bin").write_bytes(Path(source).read_bytes())


def test_another_source_content_is_converted_again(converted_dir, tmp_path):
    record = dataclasses.replace(registry.get("resemblyzer"), package=dataclasses.replace(
        registry.get("resemblyzer").package, convert=f"{__name__}:fake_convert"))
    source = tmp_path / "weights.bin"
    source.write_bytes(b"one")
    first = registry.converted(record, source)
    assert registry.converted(record, source) == first and len(CONVERSIONS) == 1
    source.write_bytes(b"two")
    second = registry.converted(record, source)
    assert second != first and (second / "copy.bin").read_bytes() == b"two"
    assert len(CONVERSIONS) == 2
    assert not [p for p in (converted_dir / "resemblyzer").iterdir() if p.name.startswith(".")]  # no leftovers


def test_a_checkpoint_that_cannot_be_converted_is_a_clear_error(converted_dir, tmp_path):
    bad = tmp_path / "broken.pt"
    bad.write_bytes(b"not a torch checkpoint")
    with pytest.raises(ModelNotAvailableError, match=f"{bad}: cannot convert the Resemblyzer weights"):
        make_embedder("resemblyzer", device="cpu", model=str(bad))
    assert not (converted_dir / "resemblyzer").exists() or not any((converted_dir / "resemblyzer").iterdir())
