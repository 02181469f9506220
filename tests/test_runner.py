"""The runner over a small workspace of real speech: outputs, levels, cache reuse, identical reruns.

The workspace is cut from pyannote's sample.wav (two real speakers, Diane and Sheila): two
"meetings" of about 12 s each, STM references, and an enrollment clip per person taken from the
other meeting's solo speech.
"""
from __future__ import annotations

import json

import pytest

from speechkit.io.manifest import load_workspace
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, make_real_workspace):
    return load_workspace(make_real_workspace(tmp_path_factory.mktemp("ws")))


@pytest.fixture(scope="module")
def runs(workspace, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return {level: run_workspace(load_recipe(f"l{level}"), workspace, out / f"l{level}", progress=False)
            for level in (1, 2, 3)}


@pytest.mark.decodes
def test_run_writes_every_output(runs, real_meetings):
    out = runs[3].out
    for mid in real_meetings:
        for ext in ("json", "stm", "rttm"):
            assert (out / "transcripts" / f"{mid}.{ext}").stat().st_size > 0
        assert json.loads((out / "context" / f"{mid}.json").read_text())["level"] == 3
    for name in ("scores.json", "report.md", "report.html", "run.json", "aggregate.png", "wer.png"):
        assert (out / name).stat().st_size > 0, name
    run = json.loads((out / "run.json").read_text())
    assert run["recipe"]["level"] == 3 and run["packages"]["faster-whisper"]
    assert set(run["timings"]["meetings"]) == set(real_meetings)
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2 and "Speaker-consistency grid" in html


@pytest.mark.decodes
def test_real_speech_is_transcribed_and_attributed(runs):
    agg = runs[1].scores["aggregate"]
    # measured on one CPU's AVX-512, AVX2 and generic paths: WER 0.115 and DER 0.152 on each
    assert agg["wer"]["value"] < 0.3
    assert agg["der"]["value"] < 0.3


@pytest.mark.decodes
def test_levels_name_speakers_as_designed(runs):
    consistency = {level: r.scores["aggregate"]["speaker_consistency"]["value"] for level, r in runs.items()}
    named = {level: r.scores["aggregate"]["named_speaker_accuracy"]["value"] for level, r in runs.items()}
    assert consistency[1] == 0.0  # meeting-local labels never match across meetings
    assert consistency[2] > consistency[1]  # own centroids keep a voice's label
    assert named[1] == 0.0 and named[2] == 0.0  # no names without enrollments
    assert named[3] >= 0.8 and consistency[3] >= 0.9  # enrollments name both real speakers


@pytest.mark.decodes
def test_rerun_reuses_the_cache_and_writes_identical_outputs(runs, workspace, real_meetings):
    first = runs[2].out
    before = {p: p.read_bytes() for p in (first / "transcripts").iterdir()}
    before_scores = (first / "scores.json").read_bytes()
    again = run_workspace(load_recipe("l2"), workspace, first, progress=False)
    run = json.loads((again.out / "run.json").read_text())
    assert run["cache"]["misses"] == {} and run["cache"]["hits"]["asr"] == len(real_meetings)
    assert {p: p.read_bytes() for p in (first / "transcripts").iterdir()} == before
    assert (first / "scores.json").read_bytes() == before_scores
