"""The mean of meetings beside the pooled (micro) ratio: scores.json, the report, comparisons."""
from __future__ import annotations

import json

import pytest

from speechkit.compare import compare, load_run
from speechkit.io import write_seglst
from speechkit.io.scores import Scores
from speechkit.metrics.bootstrap import meeting_mean
from speechkit.scoring import score_files
from speechkit.transcript import Segment, Transcript

REF = {"m1": "we ship the release on monday after the review meeting", "m2": "good morning"}
HYP = {"m1": "we ship the release on sunday after the review meeting", "m2": "could warning"}


def _write(path, texts):
    write_seglst(path, [Transcript(mid, [Segment(0.0, 5.0, "p1", text)]) for mid, text in texts.items()])
    return path


@pytest.fixture
def scores(tmp_path):
    return score_files(_write(tmp_path / "ref.json", REF), _write(tmp_path / "hyp.json", HYP),
                       out=tmp_path / "run" / "scores.json")


def test_the_mean_of_meetings_weighs_every_meeting_alike(scores):
    # m1: 1 error in 10 words (0.1); m2: 2 in 2 (1.0). Pooled 3 / 12, mean (0.1 + 1.0) / 2.
    assert scores["aggregate"]["wer"]["value"] == pytest.approx(3 / 12)
    mean = scores["meeting_mean"]["wer"]
    assert mean["value"] == pytest.approx(0.55) and mean["meetings"] == 2
    assert 0.1 <= mean["ci_low"] <= mean["ci_high"] <= 1.0
    assert list(scores)[list(scores).index("aggregate") + 1] == "meeting_mean"
    assert set(scores["meeting_mean"]) == set(scores["aggregate"])
    assert scores["meeting_mean"]["der"]["value"] is None and scores["meeting_mean"]["der"]["meetings"] == 0


def test_meetings_without_a_value_are_left_out_of_the_mean():
    assert meeting_mean([0.2, None, 0.4], resamples=0).value == pytest.approx(0.3)
    assert meeting_mean([None, None]).value is None
    one = meeting_mean([0.7], resamples=100)
    assert (one.value, one.ci_low, one.ci_high) == (0.7, 0.7, 0.7)
    assert meeting_mean([0.0, 1.0], seed=3) == meeting_mean([0.0, 1.0], seed=3)


def test_the_comparison_shows_both_and_names_them(scores, tmp_path):
    other = score_files(tmp_path / "ref.json", _write(tmp_path / "hyp2.json", REF), out=tmp_path / "b" / "scores.json")
    assert other["meeting_mean"]["wer"]["value"] == 0.0
    comparison = compare([load_run(tmp_path / "run", "a"), load_run(tmp_path / "b", "b")], metrics=("wer",))
    figures = json.loads(json.dumps(comparison.as_dict()))["figures"]
    assert figures["a"]["aggregate"]["wer"]["value"] == pytest.approx(0.25)
    assert figures["a"]["meeting_mean"]["wer"]["value"] == pytest.approx(0.55)
    assert Scores(scores).meeting_mean("wer")["value"] == pytest.approx(0.55)
