"""Reproducible runs: same inputs, recipe and machine give byte-identical transcripts, notes and scores."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from speechkit.core.audio import load_audio
from speechkit.stages import make_backend

# Every window decoded by sampling at temperature 1.0 (the sequential path samples 5 candidates):
# without a seed, two decodings of the same audio differ.
SAMPLING = {"backend": "whisper", "model": "tiny.en", "batch_size": 1, "temperatures": [1.0], "seed": 11}


@pytest.mark.decodes
def test_sampled_decoding_is_seeded(realdata: Path):
    recognizer = make_backend("asr", "whisper", device="cpu", **{k: v for k, v in SAMPLING.items() if k != "backend"})
    audio = load_audio(realdata / "pyannote-sample" / "sample.wav")
    first = [(w.text, w.start, w.end, w.confidence) for s in recognizer.transcribe(audio, speech=[(0.0, 30.0)])
             for w in s.words]
    again = [(w.text, w.start, w.end, w.confidence) for s in recognizer.transcribe(audio, speech=[(0.0, 30.0)])
             for w in s.words]
    assert first and first == again


def _run(recipe: Path, ws: Path, out: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "speechkit", "run", str(recipe), "--level", "2", "--workspace",
                           str(ws), "--out", str(out), "--device", "cpu"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.decodes
@pytest.mark.slow  # two whole runs in fresh processes
def test_a_run_repeated_in_a_fresh_process_gives_the_same_bytes(tmp_path: Path, make_real_workspace):
    """Two runs of the real two-meeting workspace at L2 (the second meeting gets the first one's
    context) into fresh folders, each in its own process, with sampling on every window."""
    ws = make_real_workspace(tmp_path / "ws")
    recipe = tmp_path / "sampling.yaml"
    recipe.write_text(yaml.safe_dump({"name": "sampling", "stages": {
        "vad": {"backend": "silero"}, "asr": SAMPLING, "diarize": {"backend": "embedding", "embedder": "resemblyzer"},
        "correct": {"backend": "lexicon"}, "summarize": {"backend": "extractive"}}}))
    runs = [tmp_path / "a", tmp_path / "b"]
    for out in runs:
        _run(recipe, ws, out)
    files = sorted(p.relative_to(runs[0]) for p in (runs[0] / "transcripts").iterdir())
    assert [f.name for f in files] == ["m1.json", "m1.rttm", "m1.stm", "m2.json", "m2.rttm", "m2.stm"]
    for name in files:
        assert (runs[0] / name).read_bytes() == (runs[1] / name).read_bytes(), name
    notes = sorted(p.name for p in (runs[0] / "notes").iterdir())
    assert notes == ["m1.json", "m2.json"]
    for name in notes:
        assert (runs[0] / "notes" / name).read_bytes() == (runs[1] / "notes" / name).read_bytes(), name
    assert (runs[0] / "scores.json").read_bytes() == (runs[1] / "scores.json").read_bytes()
    run = json.loads((runs[0] / "run.json").read_text())
    runtime = run["runtime"]
    assert runtime["device"] == "cpu" and runtime["asr_compute_type"] == "int8"
    assert runtime["seeds"] == {"run": 11, "asr": 11} and runtime["threads"]["cpu_count"] >= 1
    assert run["recipe"]["stages"]["asr"]["seed"] == 11
    assert run["packages"]["ctranslate2"] and run["asr"]["total"]["windows"] >= 2
    assert set(run["asr"]["meetings"]) == {"m1", "m2"}
    assert "## ASR loop and hallucination control" in (runs[0] / "report.md").read_text()
