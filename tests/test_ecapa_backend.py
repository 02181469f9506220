"""ECAPA-TDNN (speechbrain) for diarization and identification from a recipe, on a model the test
builds and puts where the registry looks for ``speechbrain-ecapa-voxceleb``."""
from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from model_builders import build_ecapa

from speechkit.io.manifest import load_workspace
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace
from speechkit.stages.diarize.embedders import make_embedder


@pytest.fixture
def ecapa_here(offline_models):
    """The test-built ECAPA in the registry's local folder for ``speechbrain-ecapa-voxceleb``."""
    folder = offline_models / "speechbrain-ecapa-voxceleb"
    build_ecapa(folder)
    return folder


def test_the_registry_name_loads_the_model_in_its_local_folder(ecapa_here, realdata):
    audio, _ = sf.read(realdata / "pyannote-sample" / "sample.wav", dtype="float32")
    by_name = make_embedder("ecapa", device="cpu")
    by_folder = make_embedder("ecapa", device="cpu", model=str(ecapa_here))
    assert by_name.dim == 24
    np.testing.assert_allclose(by_name.embed(audio[:48000]), by_folder.embed(audio[:48000]), atol=1e-6)


@pytest.mark.decodes
def test_the_ecapa_recipe_diarizes_and_identifies_end_to_end(ecapa_here, make_real_workspace, tmp_path):
    """The shipped recipe ``ecapa`` at L3 on real speech: centroids and enrollments in ECAPA's
    space (24 dimensions here), every word attributed, the run scored."""
    ws = load_workspace(make_real_workspace(tmp_path / "ws"))
    recipe = load_recipe("ecapa", level=3).with_overrides(device="cpu")
    assert recipe.stages["diarize"].as_dict()["embedder"] == "ecapa"
    run = run_workspace(recipe, ws, tmp_path / "out", progress=False)
    for result in run.results.values():
        assert result.speakers and all(len(v) == 24 for v in result.speakers.values())
        labels = {seg.speaker for seg in result.transcript.segments}
        # every attributed label went through identification
        assert "" not in labels and labels <= set(result.record.result("identify"))
    enrolled = list((tmp_path / "out" / "cache" / "enroll").rglob("*.json"))
    assert len(enrolled) == 2  # one voice print per person, in ECAPA's space
    assert all(len(json.loads(p.read_text())) == 24 for p in enrolled)
    assert 0 < run.scores["aggregate"]["wer"]["value"] < 1
