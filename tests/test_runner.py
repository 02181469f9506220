"""The runner over a small workspace of real speech: outputs, levels, cache reuse, identical reruns.

The workspace is cut from pyannote's sample.wav (two real speakers, Diane and Sheila): two
"meetings" of about 12 s each, STM references, and an enrollment clip per person taken from the
other meeting's solo speech.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import soundfile as sf
import yaml

from speechkit.io.manifest import load_workspace
from speechkit.io.stm import read_stm, write_stm
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace
from speechkit.transcript import Transcript

PEOPLE = {"Diane": "p_diane", "Sheila": "p_sheila"}
MEETINGS = {"m1": (6.5, 18.0), "m2": (17.7, 30.0)}
ENROLL = {"p_diane": (17.789, 21.475), "p_sheila": (9.838, 10.78)}


def build_real_workspace(root: Path, realdata: Path) -> Path:
    audio, sr = sf.read(realdata / "pyannote-sample" / "sample.wav", dtype="float32")
    ref = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    (root / "audio").mkdir(parents=True)
    meetings = []
    for mid, (t0, t1) in MEETINGS.items():
        sf.write(root / "audio" / f"{mid}.wav", audio[int(t0 * sr):int(t1 * sr)], sr)
        segs = [s.with_speaker(PEOPLE[s.speaker]) for s in ref.segments if t0 <= s.start and s.end <= t1]
        shifted = [type(s)(s.start - t0, s.end - t0, s.speaker, s.text, s.words) for s in segs]
        write_stm(root / f"{mid}.stm", [Transcript(mid, shifted)])
        meetings.append({"id": mid, "date": f"2026-03-0{len(meetings) + 2}", "audio": f"audio/{mid}.wav",
                         "reference": f"{mid}.stm", "attendees": list(PEOPLE.values())})
    people = []
    for name, pid in PEOPLE.items():
        t0, t1 = ENROLL[pid]
        sf.write(root / "audio" / f"enroll-{pid}.wav", audio[int(t0 * sr):int(t1 * sr)], sr)
        people.append({"id": pid, "name": f"{name} Doe", "enrollment": f"audio/enroll-{pid}.wav"})
    (root / "workspace.yaml").write_text(yaml.safe_dump(
        {"name": "pyannote-sample", "people": people, "meetings": meetings,
         "terms": {"numbers": [], "jargon": ["New Jersey", "Chicago"]}}))
    return root


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, realdata):
    return load_workspace(build_real_workspace(tmp_path_factory.mktemp("ws"), realdata))


@pytest.fixture(scope="module")
def runs(workspace, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return {level: run_workspace(load_recipe(f"l{level}"), workspace, out / f"l{level}", progress=False)
            for level in (1, 2, 3)}


def test_run_writes_every_output(runs):
    out = runs[3].out
    for mid in MEETINGS:
        for ext in ("json", "stm", "rttm"):
            assert (out / "transcripts" / f"{mid}.{ext}").stat().st_size > 0
        assert json.loads((out / "context" / f"{mid}.json").read_text())["level"] == 3
    for name in ("scores.json", "report.md", "report.html", "run.json", "aggregate.png", "wer.png"):
        assert (out / name).stat().st_size > 0, name
    run = json.loads((out / "run.json").read_text())
    assert run["recipe"]["level"] == 3 and run["packages"]["faster-whisper"]
    assert set(run["timings"]["meetings"]) == set(MEETINGS)
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2 and "Speaker-consistency grid" in html


def test_real_speech_is_transcribed_and_attributed(runs):
    agg = runs[1].scores["aggregate"]
    assert agg["wer"]["value"] < 0.3
    assert agg["der"]["value"] < 0.3


def test_levels_name_speakers_as_designed(runs):
    consistency = {level: r.scores["aggregate"]["speaker_consistency"]["value"] for level, r in runs.items()}
    named = {level: r.scores["aggregate"]["named_speaker_accuracy"]["value"] for level, r in runs.items()}
    assert consistency[1] == 0.0  # meeting-local labels never match across meetings
    assert consistency[2] > consistency[1]  # own centroids keep a voice's label
    assert named[1] == 0.0 and named[2] == 0.0  # no names without enrollments
    assert named[3] >= 0.8 and consistency[3] >= 0.9  # enrollments name both real speakers


def test_rerun_reuses_the_cache_and_writes_identical_outputs(runs, workspace):
    first = runs[2].out
    before = {p: p.read_bytes() for p in (first / "transcripts").iterdir()}
    before_scores = (first / "scores.json").read_bytes()
    again = run_workspace(load_recipe("l2"), workspace, first, progress=False)
    run = json.loads((again.out / "run.json").read_text())
    assert run["cache"]["misses"] == {} and run["cache"]["hits"]["asr"] == len(MEETINGS)
    assert {p: p.read_bytes() for p in (first / "transcripts").iterdir()} == before
    assert (first / "scores.json").read_bytes() == before_scores
