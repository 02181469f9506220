"""The pyannote diarization backend on pipelines the tests build (the hub's weights are gated):
pyannote 4's community-1 layout (VBx + PLDA, ``$model/`` subfolders) and 3.1's (models named by
hub id, resolved through the registry), on real speech, and in a shipped recipe end to end."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
import soundfile as sf
from model_builders import build_pyannote_31, build_pyannote_community

from speechkit.errors import ModelNotAvailableError
from speechkit.stages.diarize.pyannote import PyannoteDiarizer

SR = 16000


@pytest.fixture(scope="module")
def sample(realdata) -> np.ndarray:
    audio, sr = sf.read(realdata / "pyannote-sample" / "sample.wav", dtype="float32")
    assert sr == SR
    return audio


@pytest.fixture(scope="module")
def community(tmp_path_factory):
    return build_pyannote_community(tmp_path_factory.mktemp("pipelines") / "community")


def _check(diarization, dim: int) -> None:
    turns = diarization.turns
    assert turns and all(t.speaker.startswith("SPEAKER_") and t.end > t.start for t in turns)
    assert [t.start for t in turns] == sorted(t.start for t in turns)
    assert set(diarization.centroids) <= set(diarization.speakers) and diarization.centroids
    for vector in diarization.centroids.values():
        assert vector.shape == (dim,) and np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)


def test_community_layout_diarizes_real_speech_with_exclusive_turns(community, sample):
    diarizer = PyannoteDiarizer(model=str(community), device="cpu")
    exclusive = diarizer(sample, num_speakers=2)
    _check(exclusive, 32)
    for a, b in zip(exclusive.turns, exclusive.turns[1:]):
        assert b.start >= a.end - 1e-6  # one speaker at a time: what word attribution needs
    assert exclusive.speakers == ["SPEAKER_00", "SPEAKER_01"]  # the speaker count is passed on


def test_the_embedder_is_the_pipelines_embedding_model(community, sample):
    """Enrollments are embedded by the model whose space the centroids live in."""
    import torch

    diarizer = PyannoteDiarizer(model=community, device="cpu")
    embedder = diarizer.embedder
    assert embedder.dim == 32 and embedder.name == "pyannote"
    clip = sample[7 * SR:10 * SR]
    v = embedder.embed(clip)
    assert v.shape == (32,) and np.linalg.norm(v) == pytest.approx(1.0, abs=1e-5)
    with torch.inference_mode():
        direct = np.asarray(diarizer._pipeline._embedding(torch.from_numpy(clip)[None, None]))[0]
    np.testing.assert_allclose(v, direct / np.linalg.norm(direct), atol=1e-5)
    rows = embedder.embed_windows(sample, [(7.0, 10.0), (20.0, 21.0), (25.0, 25.01)])
    assert rows.shape == (3, 32) and np.isfinite(rows).all()
    np.testing.assert_allclose(rows[0], v, atol=1e-5)
    assert np.linalg.norm(rows[2]) == pytest.approx(1.0, abs=1e-5)  # shorter than the model's minimum: padded


def test_31_layout_resolves_its_hub_models_through_the_registry(offline_models, sample):
    build_pyannote_31(offline_models)
    diarization = PyannoteDiarizer(model="pyannote-speaker-diarization-3.1", device="cpu")(sample[:15 * SR])
    _check(diarization, 32)
    shutil.rmtree(offline_models / "pyannote-wespeaker-resnet34")
    with pytest.raises(ModelNotAvailableError) as info:
        PyannoteDiarizer(model="pyannote-speaker-diarization-3.1", device="cpu")
    message = str(info.value)
    assert "pipeline.params.embedding" in message
    assert "speechkit models fetch pyannote-wespeaker-resnet34" in message


def test_missing_pipeline_says_how_to_get_it(offline_models, tmp_path):
    with pytest.raises(ModelNotAvailableError,
                       match="speechkit models fetch pyannote-speaker-diarization-community-1"):
        PyannoteDiarizer(device="cpu")
    with pytest.raises(ModelNotAvailableError, match="no such model file or folder"):
        PyannoteDiarizer(model=str(tmp_path / "missing"), device="cpu")
    with pytest.raises(ModelNotAvailableError, match="no config.yaml"):
        PyannoteDiarizer(model=str(tmp_path), device="cpu")


@pytest.mark.decodes
def test_the_pyannote_recipe_runs_end_to_end(offline_models, make_real_workspace, tmp_path):
    """The shipped recipe ``pyannote`` at L3 with a community-1-layout pipeline put where the
    registry looks: exclusive turns feed attribution, the pipeline's embeddings identification."""
    import json

    from speechkit.io.manifest import load_workspace
    from speechkit.recipe import load_recipe
    from speechkit.runner import run_workspace

    build_pyannote_community(offline_models / "pyannote-speaker-diarization-community-1")
    ws = load_workspace(make_real_workspace(tmp_path / "ws"))
    recipe = load_recipe("pyannote", level=3).with_overrides(device="cpu")
    run = run_workspace(recipe, ws, tmp_path / "out", progress=False)
    for result in run.results.values():
        assert result.speakers and all(len(v) == 32 for v in result.speakers.values())
        labels = {seg.speaker for seg in result.transcript.segments}
        assert "" not in labels and labels <= set(result.record.result("identify"))
    enrolled = list((tmp_path / "out" / "cache" / "enroll").rglob("*.json"))
    assert len(enrolled) == 2 and all(len(json.loads(p.read_text())) == 32 for p in enrolled)
    turns = [json.loads(p.read_text()) for p in (tmp_path / "out" / "cache" / "diarize").rglob("*.json")]
    for cached in turns:  # exclusive: no two turns overlap
        spans = sorted((t["start_time"], t["end_time"]) for t in cached["turns"])
        assert all(b[0] >= a[1] - 1e-6 for a, b in zip(spans, spans[1:]))
    assert 0 < run.scores["aggregate"]["wer"]["value"] < 1
