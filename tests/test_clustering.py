"""Speaker clustering and speaker-count estimation (speechkit.stages.diarize.clustering)."""
import numpy as np
import pytest

from speechkit.core.vectors import l2_normalize
from speechkit.stages.diarize import clustering as cl


def _speakers(sizes, dim=64, spread=0.15, seed=0, base=0.0):
    """Unit vectors around one random centre per speaker (``base`` adds a shared component,
    as Resemblyzer's non-negative vectors have)."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=dim)
    rows, labels = [], []
    for k, n in enumerate(sizes):
        centre = rng.normal(size=dim) + base * common
        centre /= np.linalg.norm(centre)
        rows.append(centre + spread * rng.normal(size=(n, dim)) / np.sqrt(dim))
        labels += [k] * n
    return l2_normalize(np.concatenate(rows), np.float64), np.array(labels)


def _agree(a, b):
    """True if two labellings are the same partition."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def test_silhouette_finds_well_separated_speakers():
    x, truth = _speakers([20, 15, 10])
    labels = cl.silhouette_ahc(x)
    assert _agree(labels, truth)


def test_silhouette_keeps_one_speaker_when_no_split_is_clear():
    x, _ = _speakers([40], spread=1.0)
    assert set(cl.silhouette_ahc(x).tolist()) == {0}


def test_silhouette_is_scale_free():
    # the same geometry with a large shared component (high cosine between everybody)
    x, truth = _speakers([20, 20], base=3.0, spread=0.05)
    assert (x @ x.T).min() > 0.5
    assert _agree(cl.silhouette_ahc(x), truth)


def test_given_number_of_speakers_and_bounds():
    x, _truth = _speakers([20, 15, 10])
    assert len(set(cl.silhouette_ahc(x, 2).tolist())) == 2
    assert len(set(cl.silhouette_ahc(x, max_speakers=2).tolist())) <= 2
    assert len(set(cl.silhouette_ahc(x, min_speakers=2, min_silhouette=0.99).tolist())) >= 2
    with pytest.raises(ValueError):
        cl.silhouette_ahc(x, 0)


def test_tiny_inputs():
    assert cl.silhouette_ahc(np.ones((2, 4))).tolist() == [0, 0]
    assert cl.nme_sc(np.ones((1, 4))).tolist() == [0]
    assert cl.cluster_windows(np.zeros((0, 4)), []).tolist() == []


def test_nme_sc_estimates_count():
    x, truth = _speakers([25, 20, 15], spread=0.3)
    k, p = cl.nme_sc_estimate(x)
    assert k == 3 and p >= 2
    assert _agree(cl.nme_sc(x), truth)
    assert len(set(cl.nme_sc(x, 2).tolist())) == 2


def test_threshold_ahc_baseline():
    x, truth = _speakers([10, 10])
    assert _agree(cl.threshold_ahc(x, threshold=0.5), truth)
    assert len(set(cl.threshold_ahc(x, 1).tolist())) == 1


def test_keep_large_clusters():
    labels = np.array([0] * 5 + [1] * 2 + [2] * 1)
    assert cl.keep_large_clusters(labels, 0.75, 2.0).tolist() == [0]
    assert cl.keep_large_clusters(labels, 0.75, 1.0).tolist() == [0, 1]
    assert cl.keep_large_clusters(labels, 0.75, 0.0, keep_at_most=2).tolist() == [0, 1]
    # the largest cluster counts even when all are small
    assert cl.keep_large_clusters(np.array([3, 3]), 0.1, 5.0).tolist() == [3]


def test_cluster_windows_drops_small_clusters_and_labels_short_windows():
    x, truth = _speakers([20, 16, 2])  # the third "speaker" covers 1.5 s < 2 s
    windows = [(i * 0.75, i * 0.75 + 1.5) for i in range(len(x))]
    windows[-1] = (windows[-1][0], windows[-1][0] + 0.3)  # a short window
    labels = cl.cluster_windows(x, windows, min_cluster_s=2.0)
    assert len(labels) == len(x)
    assert len(set(labels.tolist())) == 2
    assert _agree(labels[:36], truth[:36])


def test_cluster_windows_given_count_and_methods():
    x, truth = _speakers([20, 16, 12])
    windows = [(i * 0.75, i * 0.75 + 1.5) for i in range(len(x))]
    for method in cl.METHODS:
        labels = cl.cluster_windows(x, windows, method=method, threshold=0.5)
        assert _agree(labels, truth), method
    assert len(set(cl.cluster_windows(x, windows, 2).tolist())) == 2
    assert set(cl.cluster_windows(x, windows, 1).tolist()) == {0}
    with pytest.raises(ValueError):
        cl.cluster_windows(x, windows, method="kmeans")
    with pytest.raises(ValueError):
        cl.cluster_windows(x, windows[:-1])
