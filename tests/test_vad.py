"""VAD: silero on real speech and silence; speechbrain and pyannote loading offline."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from model_builders import build_pyannote_segmentation

from speechkit.stages import make_backend
from speechkit.stages.audio import load_audio
from speechkit.errors import ModelNotAvailableError
from speechkit.stages.vad import VadOptions, regions_from_probabilities


@pytest.fixture(scope="module")
def silero():
    return make_backend("vad", "silero", device="cpu")


@pytest.fixture(scope="module")
def jfk(realdata: Path) -> np.ndarray:
    return load_audio(realdata / "faster-whisper" / "jfk.flac")


@pytest.fixture(scope="module")
def sample(realdata: Path) -> np.ndarray:
    return load_audio(realdata / "pyannote-sample" / "sample.wav")


def reference_speech(rttm: Path) -> list[tuple[float, float]]:
    turns = sorted((float(f[3]), float(f[3]) + float(f[4])) for f in map(str.split, rttm.read_text().splitlines()))
    union: list[tuple[float, float]] = []
    for s, e in turns:
        if union and s <= union[-1][1]:
            union[-1] = (union[-1][0], max(union[-1][1], e))
        else:
            union.append((s, e))
    return union


def overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


def test_jfk_is_one_region_covering_the_speech(silero, jfk: np.ndarray) -> None:
    regions = silero(jfk)
    assert len(regions) == 1
    start, end = regions[0]
    assert start < 0.5 and end > 10.4  # the speech runs from ~0.3 s to ~10.6 s of 11 s


def test_short_pauses_split_regions_when_asked(jfk: np.ndarray, silero) -> None:
    fine = make_backend("vad", "silero", device="cpu", min_silence_s=0.1, pad_s=0.03)
    regions = fine(jfk)
    assert len(regions) >= 3  # JFK pauses ~1 s between phrases
    assert all(b[0] - a[1] >= 0.1 for a, b in zip(regions, regions[1:]))
    assert overlap(regions, silero(jfk)) == pytest.approx(sum(e - s for s, e in regions))


def test_conversation_matches_reference_turns(silero, sample: np.ndarray, realdata: Path) -> None:
    reference = reference_speech(realdata / "pyannote-sample" / "sample.rttm")
    regions = silero(sample)
    speech = sum(e - s for s, e in reference)
    found = sum(e - s for s, e in regions)
    assert overlap(regions, reference) / speech > 0.97  # recall
    assert overlap(regions, reference) / found > 0.95  # precision
    assert regions[0][0] == pytest.approx(reference[0][0], abs=0.3)  # 6.4 s of silence first


def test_silence_and_noise_have_no_speech(silero) -> None:
    assert silero(np.zeros(16000 * 10, dtype=np.float32)) == []
    noise = np.random.default_rng(0).normal(0, 0.003, 16000 * 10).astype(np.float32)
    assert silero(noise) == []
    assert silero(np.zeros(0, dtype=np.float32)) == []


def test_other_sample_rates_are_resampled(silero, sample: np.ndarray, realdata: Path) -> None:
    at_8k = load_audio(realdata / "pyannote-sample" / "sample.wav", sample_rate=8000)
    expected = silero(sample)
    got = silero(at_8k, sample_rate=8000)
    assert len(got) == len(expected)
    assert np.allclose(got, expected, atol=0.1)


def test_torchscript_matches_onnx_and_keeps_torch_threads(silero, sample: np.ndarray) -> None:
    threads = torch.get_num_threads()
    jit = make_backend("vad", "silero", device="cpu", onnx=False)
    assert torch.get_num_threads() == threads  # importing silero_vad sets 1 for the process
    p_jit, step = jit.probabilities(sample)
    p_onnx, _ = silero.probabilities(sample)
    assert step == pytest.approx(0.032)
    assert np.abs(p_jit - p_onnx).max() < 1e-3
    assert torch.get_num_threads() == threads


def test_onnx_gives_the_probabilities_of_the_silero_package(silero, sample: np.ndarray, jfk: np.ndarray) -> None:
    """The sequence export run directly equals silero_vad's own streaming ONNX wrapper (the path
    before torch was dropped) on real speech, to float tolerance."""
    from silero_vad.utils_vad import OnnxWrapper

    from speechkit import registry
    wrapper = OnnxWrapper(str(registry.resolve("silero-vad") / "silero_vad.onnx"), force_onnx_cpu=True)
    for audio in (sample, jfk, sample[:16000 * 7 + 100]):
        ours, step = silero.probabilities(audio)
        theirs = wrapper.audio_forward(torch.from_numpy(audio), 16000)[0].numpy()
        assert step == pytest.approx(0.032)
        assert ours.shape == theirs.shape and ours.dtype == np.float32
        assert np.abs(ours - theirs).max() < 1e-5
        assert ours.max() > 0.9 and ours.min() < 0.1  # speech and silence, not a constant


def test_a_chunk_shorter_than_a_frame_is_scored(silero, sample: np.ndarray) -> None:
    probs, _ = silero.probabilities(sample[:300])  # the end of a recording: zero padded to 32 ms
    assert probs.shape == (1,) and 0.0 <= probs[0] <= 1.0


def test_region_rules() -> None:
    probs = np.array([0, .6, .6, .4, .6, 0, 0, 0, 0, 0, .9, 0, 0, 0, 0, 0, 0, 0, 0, .7, .7, .7, .7])
    opts = VadOptions(threshold=0.5, min_speech_s=0.25, min_silence_s=0.3, pad_s=0.05)
    # 0.1 s frames: .4 keeps a region on (above 0.35); the 0.1 s blip at 1.0 s is too short
    assert regions_from_probabilities(probs, 0.1, opts, 2.3) == [(0.05, 0.55), (1.85, 2.3)]
    merged = VadOptions(threshold=0.5, min_speech_s=0.0, min_silence_s=0.5, pad_s=0.05)
    assert regions_from_probabilities(probs, 0.1, merged, 2.3) == [(0.05, 1.15), (1.85, 2.3)]
    with pytest.raises(ValueError, match="stages.vad.backend: unknown backend 'webrtc'"):
        make_backend("vad", "webrtc")


@pytest.fixture
def no_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty local model folder and an empty Hugging Face cache."""
    import huggingface_hub.constants
    monkeypatch.setenv("SPEECHKIT_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    return tmp_path / "models"


@pytest.mark.parametrize("backend, name", [("speechbrain", "speechbrain-vad-crdnn"),
                                           ("pyannote", "pyannote-segmentation-3.0")])
def test_missing_weights_say_how_to_get_them(no_models: Path, backend: str, name: str) -> None:
    with pytest.raises(ModelNotAvailableError) as info:
        make_backend("vad", backend, device="cpu")
    message = str(info.value)
    assert f"speechkit models fetch {name}" in message
    assert str(no_models / name) in message


SPEECHBRAIN_HPARAMS = """\
sample_rate: 16000
time_resolution: 0.01
device: cpu
compute_features: !new:speechbrain.lobes.features.Fbank
    n_mels: 40
mean_var_norm: !new:speechbrain.processing.features.InputNormalization
    norm_type: sentence
cnn: !new:torch.nn.Unflatten
    dim: 2
    unflattened_size: [40, 1]
rnn: !new:torch.nn.GRU
    input_size: 40
    hidden_size: 8
    batch_first: True
dnn: !new:torch.nn.Linear
    in_features: 8
    out_features: 1
model: !new:torch.nn.ModuleList
    - [!ref <rnn>, !ref <dnn>]
modules:
    compute_features: !ref <compute_features>
    mean_var_norm: !ref <mean_var_norm>
    cnn: !ref <cnn>
    rnn: !ref <rnn>
    dnn: !ref <dnn>
    model: !ref <model>
pretrainer: !new:speechbrain.utils.parameter_transfer.Pretrainer
    loadables:
        model: !ref <model>
"""


def test_speechbrain_backend_loads_a_local_model(no_models: Path, sample: np.ndarray) -> None:
    """A tiny CRDNN-shaped model whose checkpoint says 'always speech' (bias +20)."""
    folder = no_models / "speechbrain-vad-crdnn"
    folder.mkdir(parents=True)
    (folder / "hyperparams.yaml").write_text(SPEECHBRAIN_HPARAMS)
    model = torch.nn.ModuleList([torch.nn.GRU(40, 8, batch_first=True), torch.nn.Linear(8, 1)])
    with torch.no_grad():
        model[1].bias.fill_(20.0)
    torch.save(model.state_dict(), folder / "model.ckpt")
    vad = make_backend("vad", "speechbrain", device="cpu")
    probs, step = vad.probabilities(sample[:16000 * 25])  # not a multiple of the 10 s pieces
    assert step == 0.01 and len(probs) == 2500
    assert probs.min() > 0.99  # the checkpoint's weights were loaded
    assert vad(sample) == [(0.0, 30.0)]


def test_pyannote_backend_loads_a_local_model(no_models: Path, sample: np.ndarray) -> None:
    """A tiny PyanNet powerset model whose checkpoint says 'nobody speaks'."""
    build_pyannote_segmentation(no_models / "pyannote-segmentation-3.0" / "pytorch_model.bin",
                                favour_class=0, bias=50.0)
    vad = make_backend("vad", "pyannote", device="cpu")
    probs, step = vad.probabilities(sample)
    assert step == pytest.approx(0.0169, abs=0.001)
    assert len(probs) * step == pytest.approx(30.0, abs=0.2)
    assert probs.max() < 0.01
    assert vad(sample) == []
