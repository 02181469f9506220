"""Preflight: a recipe whose models are not on this machine fails at once, all of them named in one
line, before any audio is read (issue 25, item 3)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from speechkit.cli import main
from speechkit.preflight import MissingModelsError, check_models, missing_models
from speechkit.recipe import load_recipe


def _offline_env(tmp_path) -> dict[str, str]:
    """This machine as one without the hub models: an empty model folder and Hugging Face cache."""
    (tmp_path / "models").mkdir(exist_ok=True)
    return {**os.environ, "SPEECHKIT_MODELS_DIR": str(tmp_path / "models"), "HF_HUB_OFFLINE": "1",
            "HF_HUB_CACHE": str(tmp_path / "hf")}


def test_recipe_with_a_missing_model_fails_in_seconds_before_any_audio(make_real_workspace, tmp_path):
    ws = make_real_workspace(tmp_path / "ws")
    out = tmp_path / "run"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "speechkit", "recipe", "-L", "1", "--asr", "pyannote",
                           "--workspace", str(ws), "--out", str(out)],
                          env=_offline_env(tmp_path), capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - started
    assert done.returncode == 2, done.stderr[-2000:]
    [line] = done.stderr.strip().splitlines()
    assert "error:" in line and "pyannote.yaml: models not on this machine: " \
        "pyannote-speaker-diarization-community-1 (stages.diarize.model)" in line
    assert elapsed < 5.0  # Python start and imports included; before preflight: 24 s of ASR first
    assert not out.exists()  # no run folder, no stage cache: no stage ran


def test_transcribe_fails_before_reading_audio(realdata, tmp_path, capsys, offline_models):
    out = tmp_path / "out"
    assert main(["transcribe", str(realdata / "faster-whisper" / "jfk.flac"), "--recipe", "pyannote",
                 "--out", str(out)]) == 2
    assert "pyannote-speaker-diarization-community-1 (stages.diarize.model)" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())  # nothing written


def test_every_missing_model_is_listed_in_one_error(tmp_path, offline_models):
    recipe = load_recipe("whisper").with_settings({"asr.model": "whisper-small", "diarize.backend": "embedding",
                                                   "diarize.embedder": "ecapa",
                                                   "vad.model": str(tmp_path / "no-such-vad")})
    assert missing_models(recipe) == [(str(tmp_path / "no-such-vad"), "stages.vad.model"),
                                      ("whisper-small", "stages.asr.model"),
                                      ("speechbrain-ecapa-voxceleb", "stages.diarize.embedder_options.model")]
    with pytest.raises(MissingModelsError) as caught:
        check_models(recipe)
    assert "\n" not in str(caught.value) and str(caught.value).count("(stages.") == 3


def test_a_model_put_in_its_local_folder_passes_and_its_requirements_are_checked(offline_models):
    recipe = load_recipe("pyannote").with_settings({"diarize.model": "pyannote-speaker-diarization-3.1"})
    (offline_models / "pyannote-speaker-diarization-3.1").mkdir()
    (offline_models / "pyannote-speaker-diarization-3.1" / "config.yaml").write_text("pipeline: {}\n")
    assert missing_models(recipe) == [
        ("pyannote-segmentation-3.0", "required by pyannote-speaker-diarization-3.1"),
        ("pyannote-wespeaker-resnet34", "required by pyannote-speaker-diarization-3.1")]
    for name in ("pyannote-segmentation-3.0", "pyannote-wespeaker-resnet34"):
        (offline_models / name).mkdir()
        (offline_models / name / "model.bin").write_bytes(b"\0")
    check_models(recipe)  # everything is here now
    check_models(load_recipe("whisper"))  # the default recipe's models ship in packages
