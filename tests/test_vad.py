"""VAD: silero on real speech and silence; speechbrain and pyannote loading offline."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from model_builders import build_pyannote_segmentation, build_speechbrain_vad

from speechkit.core.audio import load_audio
from speechkit.errors import ModelNotAvailableError
from speechkit.stages import make_backend
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
        ours = silero.model(audio)  # the 16 kHz model alone (probabilities() adds the 8 kHz one)
        theirs = wrapper.audio_forward(torch.from_numpy(audio), 16000)[0].numpy()
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


def test_speechbrain_backend_loads_a_local_model(no_models: Path, sample: np.ndarray) -> None:
    """A tiny CRDNN-shaped model whose checkpoint says 'always speech' (bias +20)."""
    build_speechbrain_vad(no_models / "speechbrain-vad-crdnn")
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


# ---------------------------------------------------------------- telephone-band speech


def _hybrid(speech: np.ndarray, remote: bool, snr_db: float = 20.0) -> np.ndarray:
    """``speech`` with 3 s of silence on each side as the synthetic meetings render it: dry, or
    through the remote participants' telephone codec (300-3400 Hz, 8 kHz, mu-law), with pink
    noise at ``snr_db``."""
    from speechkit.synth.acoustics import Codec, Condition, render
    silence = np.zeros(16000 * 3, np.float32)
    track = np.concatenate([silence, speech, silence])
    condition = Condition(kind="hybrid" if remote else "clean", snr_db=snr_db, gains_db={},
                          remote=("p1",) if remote else (), codec=Codec() if remote else None)
    return render({"p1": track}, condition, np.random.default_rng(0))


@pytest.fixture(scope="module")
def wideband(realdata: Path) -> np.ndarray:
    """30 s of real wideband room speech (AMI excerpt trn09, speech throughout)."""
    return load_audio(realdata / "ami-debug" / "trn09.wav")


def _middle(frames: int, frame_s: float = 0.032) -> np.ndarray:
    """The frames of the speech inside :func:`_hybrid`'s 3 s margins (0.5 s in from each edge)."""
    t = np.arange(frames) * frame_s
    return (t > 3.5) & (t < frames * frame_s - 3.5)


def test_codec_speech_is_found_telephone_band_and_wideband_speech_is_not(wideband: np.ndarray) -> None:
    from speechkit.stages.narrowband import narrowband_frames
    # the synthetic meetings' SNRs: 18-25 dB with remote people, 30-40 dB for a clean call
    remote = narrowband_frames(_hybrid(wideband, remote=True, snr_db=20.0))
    dry = narrowband_frames(_hybrid(wideband, remote=False, snr_db=35.0))
    speech = _middle(len(remote))
    assert remote[speech].mean() > 0.8
    assert dry.mean() < 0.05
    assert narrowband_frames(np.zeros(0, np.float32)).shape == (0,)
    assert narrowband_frames(np.zeros(100, np.float32)).shape == (1,)


def test_an_old_band_limited_recording_in_noise_is_telephone_band(jfk: np.ndarray) -> None:
    """JFK's 1961 recording holds almost nothing above 4 kHz (-44 dB): in room noise its speech
    is telephone-band too, and the 8 kHz model is the one made for it."""
    from speechkit.stages.narrowband import narrowband_frames
    flagged = narrowband_frames(_hybrid(jfk, remote=False))
    assert flagged[_middle(len(flagged))].mean() > 0.5


def test_real_telephone_speech_is_telephone_band(sample: np.ndarray, realdata: Path) -> None:
    """pyannote's sample.wav is a real telephone call: its speech is found telephone-band."""
    from speechkit.stages.narrowband import narrowband_frames
    flagged = narrowband_frames(sample)
    t = np.arange(len(flagged)) * 0.032
    reference = reference_speech(realdata / "pyannote-sample" / "sample.rttm")
    speech = np.zeros(len(flagged), bool)
    for start, end in reference:
        speech |= (t >= start) & (t < end)
    assert flagged[speech].mean() > 0.8


class _Scores:
    """A Silero stand-in: fixed 16 kHz probabilities, and the 8 kHz model hearing speech everywhere."""

    def __init__(self, wideband: np.ndarray) -> None:
        self.wideband = wideband

    def __call__(self, audio: np.ndarray) -> np.ndarray:
        return self.wideband

    def at_8k(self, audio: np.ndarray) -> np.ndarray:
        return np.full(-(-len(audio) // 256), 0.9, np.float32)


@pytest.mark.parametrize("wideband_hears", [False, True])
def test_the_8k_model_counts_only_where_the_16k_model_misses_telephone_speech(wideband: np.ndarray,
                                                                               wideband_hears: bool) -> None:
    """Codec speech the 16 kHz model misses takes the 8 kHz model's probabilities in its
    telephone-band frames (and nowhere else); codec speech the 16 kHz model hears keeps its own."""
    from speechkit.stages.narrowband import narrowband_frames
    audio = _hybrid(wideband, remote=True)
    frames = -(-len(audio) // 512)
    own = np.full(frames, 0.8 if wideband_hears else 0.05, np.float32)
    vad = make_backend("vad", "silero", device="cpu")
    vad.model = _Scores(own)
    probs, _ = vad.probabilities(audio)
    flagged = narrowband_frames(audio)
    assert np.array_equal(probs[~flagged], own[~flagged])
    if wideband_hears:
        assert np.array_equal(probs, own)
    else:
        assert flagged.sum() > 500 and np.all(probs[flagged] == np.float32(0.9))


def test_real_codec_speech_keeps_its_regions_where_the_16k_model_hears_it(silero, wideband: np.ndarray) -> None:
    """Real room speech through the codec is heard by the 16 kHz model already: same regions."""
    audio = _hybrid(wideband, remote=True)
    wideband_only = make_backend("vad", "silero", device="cpu", narrowband=False)
    assert silero(audio) == wideband_only(audio) != []


@pytest.mark.parametrize("excerpt", [f"trn0{i}" for i in range(10)])
def test_real_meeting_audio_gets_the_same_regions_with_the_8k_model(silero, realdata: Path, excerpt: str) -> None:
    """AMI's far-field room audio is wideband: the telephone model changes no region there."""
    audio = load_audio(realdata / "ami-debug" / f"{excerpt}.wav")
    wideband_only = make_backend("vad", "silero", device="cpu", narrowband=False)
    assert silero(audio) == wideband_only(audio)


def test_torchscript_8k_model_matches_onnx(silero, sample: np.ndarray) -> None:
    import soxr
    jit = make_backend("vad", "silero", device="cpu", onnx=False)
    at_8k = soxr.resample(sample[:16000 * 12], 16000, 8000).astype(np.float32)
    ours, theirs = silero.model.at_8k(at_8k), jit.model.at_8k(at_8k)
    assert ours.shape == theirs.shape == (len(at_8k) // 256 + (len(at_8k) % 256 > 0),)
    assert np.abs(ours - theirs).max() < 1e-3
    assert ours.max() > 0.9 and ours.min() < 0.1


def test_telephone_stretches_start_a_lead_earlier_and_merge() -> None:
    from speechkit.stages.vad import _runs
    mask = np.array([0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1], bool)
    assert _runs(mask, 0) == [(3, 4), (9, 9), (12, 13)]
    assert _runs(mask, 2) == [(1, 4), (7, 13)]  # 9 starts at 7 (> 4 + 1); 12 starts at 10, inside it
    assert _runs(mask, 5) == [(0, 13)]
    assert _runs(np.zeros(4, bool), 3) == []
