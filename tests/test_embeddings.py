"""Speaker embeddings: Resemblyzer (shipped weights) on real speech, and the ECAPA loader on a
small randomly initialised ECAPA-TDNN that the test saves in the hub model's folder layout."""
from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
from model_builders import ECAPA_YAML, build_ecapa

from speechkit.errors import ModelNotAvailableError
from speechkit.io.rttm import read_rttm
from speechkit.stages.diarize.embedders import make_embedder

SR = 16000


@pytest.fixture(scope="module")
def sample(realdata):
    audio, sr = sf.read(realdata / "pyannote-sample" / "sample.wav", dtype="float32")
    assert sr == SR
    turns = read_rttm(realdata / "pyannote-sample" / "sample.rttm")["sample"].segments
    return audio, turns


@pytest.fixture(scope="module")
def resemblyzer():
    return make_embedder("resemblyzer", device="cpu")


def test_resemblyzer_clip_embedding_is_a_deterministic_unit_vector(resemblyzer, sample):
    audio, _ = sample
    v = resemblyzer.embed(audio[7 * SR:17 * SR])
    assert v.shape == (256,) and v.dtype == np.float32
    assert np.isfinite(v).all() and np.linalg.norm(v) == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_array_equal(v, resemblyzer.embed(audio[7 * SR:17 * SR]))


def test_resemblyzer_windows_batched_equal_one_at_a_time(resemblyzer, sample):
    audio, _ = sample
    windows = [(7.6, 9.1), (10.0, 11.5), (14.8, 16.3), (22.0, 23.0), (25.0, 26.5)]
    batched = resemblyzer.embed_windows(audio, windows)
    assert batched.shape == (5, 256)
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    single = np.concatenate([resemblyzer.embed_windows(audio, [w]) for w in windows])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_resemblyzer_same_speaker_windows_are_closer(resemblyzer, sample):
    """On the real two-speaker call, 1.5 s windows of one speaker's solo speech are more similar
    to each other than to the other speaker's (means over all pairs)."""
    audio, turns = sample
    windows, who = [], []
    for t in turns:
        others = [o for o in turns if o.speaker != t.speaker and o.start < t.end and o.end > t.start]
        for s in np.arange(t.start, t.end - 1.5, 0.75):
            if not any(o.start < s + 1.5 and o.end > s for o in others):
                windows.append((s, s + 1.5))
                who.append(t.speaker)
    emb = resemblyzer.embed_windows(audio, windows)
    sim = emb @ emb.T
    who = np.array(who)
    same = (who[:, None] == who[None, :]) & ~np.eye(len(who), dtype=bool)
    assert len(set(who)) == 2 and len(who) >= 10
    assert sim[same].mean() > sim[who[:, None] != who[None, :]].mean() + 0.05


def test_resemblyzer_resamples_other_rates(resemblyzer, sample):
    audio, _ = sample
    clip = audio[14 * SR + 8000:17 * SR + 8000]
    v16 = resemblyzer.embed(clip)
    v8 = resemblyzer.embed(clip[::2], sample_rate=8000)  # crude decimation: same voice, less band
    as_if_16k = resemblyzer.embed(clip[::2])  # not resampled: twice as fast and high-pitched
    assert v8.shape == (256,)
    assert float(v16 @ v8) > 0.95 > 0.8 > float(v16 @ as_if_16k)


@pytest.mark.parametrize("bad, problem", [
    (np.zeros((2, 16000), np.float32), "mono"),
    (np.zeros(0, np.float32), "empty"),
    (np.full(16000, np.nan, np.float32), "NaN"),
])
def test_bad_audio_is_rejected_clearly(resemblyzer, bad, problem):
    with pytest.raises(ValueError, match=problem):
        resemblyzer.embed(bad)


def test_window_outside_audio_is_rejected(resemblyzer, sample):
    audio, _ = sample
    with pytest.raises(ValueError, match="outside the audio"):
        resemblyzer.embed_windows(audio, [(31.0, 32.0)])


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown embedder 'xvector'"):
        make_embedder("xvector")


@pytest.fixture(scope="module")
def ecapa_folder(tmp_path_factory):
    """A randomly initialised small ECAPA-TDNN saved as hyperparams.yaml + embedding_model.ckpt,
    plus the modules it was built from (to compute reference embeddings directly)."""
    folder = tmp_path_factory.mktemp("ecapa")
    return folder, build_ecapa(folder)


def _direct_ecapa(modules, wav: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        x = torch.from_numpy(wav)[None]
        feats = modules["mean_var_norm"](modules["compute_features"](x), torch.ones(1))
        v = modules["embedding_model"].eval()(feats, torch.ones(1)).reshape(-1).numpy()
    return v / np.linalg.norm(v)


def test_ecapa_loads_saved_weights_and_embeds_real_audio(ecapa_folder, sample):
    import torch

    folder, modules = ecapa_folder
    audio, _ = sample
    torch.manual_seed(123)  # the loader's fresh model starts from other random weights
    emb = make_embedder("ecapa", device="cpu", model=folder)
    assert emb.dim == 24
    clip = audio[14 * SR:18 * SR]
    v = emb.embed(clip)
    assert v.shape == (24,) and np.isfinite(v).all()
    assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-5)
    # the checkpoint's weights were loaded: same output as the saved model itself
    np.testing.assert_allclose(v, _direct_ecapa(modules, clip), atol=1e-5)
    # deterministic across loads
    np.testing.assert_array_equal(v, make_embedder("ecapa", device="cpu", model=folder).embed(clip))
    windows = [(7.6, 9.1), (14.8, 16.3), (22.0, 23.0)]
    rows = emb.embed_windows(audio, windows)
    assert rows.shape == (3, 24) and np.isfinite(rows).all()
    np.testing.assert_allclose(rows[2], emb.embed(audio[22 * SR:23 * SR]), atol=1e-5)


def test_ecapa_without_weights_says_how_to_get_them(tmp_path, offline_models):
    with pytest.raises(ModelNotAvailableError, match="speechkit models fetch speechbrain-ecapa-voxceleb"):
        make_embedder("ecapa", device="cpu")
    with pytest.raises(ModelNotAvailableError, match="no such model file or folder"):
        make_embedder("ecapa", device="cpu", model=tmp_path / "missing")
    with pytest.raises(ModelNotAvailableError, match="no hyperparams.yaml"):
        make_embedder("ecapa", device="cpu", model=tmp_path)
    (tmp_path / "hyperparams.yaml").write_text(ECAPA_YAML)  # but no checkpoint beside it
    with pytest.raises(ModelNotAvailableError, match="cannot load the ECAPA model"):
        make_embedder("ecapa", device="cpu", model=tmp_path)
