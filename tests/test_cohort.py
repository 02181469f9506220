"""Cohort score normalisation for identification (speechkit.stages.cohort)."""
import numpy as np
import pytest

from speechkit.stages import cohort as co
from speechkit.stages.identify import identify


def _unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_s_norm_matches_the_formula():
    rng = np.random.default_rng(0)
    e, t, c = _unit(rng.normal(size=(2, 8))), _unit(rng.normal(size=(3, 8))), _unit(rng.normal(size=(6, 8)))
    raw = t @ e.T
    got = co.s_norm(raw, e, t, c)
    ce, ct = e @ c.T, t @ c.T
    want = 0.5 * ((raw - ce.mean(1)) / (ce.std(1) + 1e-6) + (raw - ct.mean(1)[:, None]) / (ct.std(1)[:, None] + 1e-6))
    np.testing.assert_allclose(got, want, rtol=1e-9)
    top = co.s_norm(raw, e, t, c, top_k=6)
    np.testing.assert_allclose(top, got)
    assert not np.allclose(co.s_norm(raw, e, t, c, top_k=2), got)
    with pytest.raises(ValueError):
        co.s_norm(raw, e, t, c[:1])


def _voices(n, dim=32, seed=1, shared=2.0):
    rng = np.random.default_rng(seed)
    common = rng.normal(size=dim)
    return _unit(rng.normal(size=(n, dim)) + shared * common)


def test_snorm_identify_names_enrolled_and_leaves_impostors():
    rng = np.random.default_rng(2)
    voices = _voices(10)
    enrolled = {f"p{i}": voices[i] for i in range(3)}
    centroids = {"SPEAKER_00": _unit(voices[1] + 0.1 * rng.normal(size=32)),
                 "SPEAKER_01": _unit(voices[0] + 0.1 * rng.normal(size=32)),
                 "SPEAKER_02": voices[9]}  # not enrolled
    names = identify(centroids, enrolled, threshold=co.DEFAULT_THRESHOLD, normalization="snorm", cohort=voices[3:9])
    assert names == {"SPEAKER_00": "p1", "SPEAKER_01": "p0", "SPEAKER_02": None}


def test_normalized_scores_shape_and_errors():
    voices = _voices(6)
    s = co.normalized_scores({"a": voices[0]}, {"x": voices[1], "y": voices[2]}, voices[3:])
    assert s.shape == (1, 2)
    assert co.normalized_scores({}, {"x": voices[1]}, voices[3:]).shape == (0, 1)
    with pytest.raises(ValueError):
        co.normalized_scores({"a": voices[0]}, {"x": voices[1]}, None)  # no cohort at all
    with pytest.raises(ValueError):
        co.normalized_scores({"a": voices[0][:8]}, {"x": voices[1]}, voices[3:])


def test_bundled_cohort():
    c = co.load_cohort()
    assert c.shape == (13, 256) and c.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(c, axis=1), 1.0, atol=1e-3)
    assert co.cohort_path().stat().st_size < 16_000


def test_snorm_identify_uses_bundled_cohort_for_256_dims():
    c = co.load_cohort()
    names = identify({"S0": c[0]}, {"same": c[0], "other": c[5]}, threshold=co.DEFAULT_THRESHOLD, normalization="snorm")
    assert names == {"S0": "same"}
    assert identify({}, {"x": c[0]}, normalization="snorm") == {}
