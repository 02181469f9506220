"""`speechkit score --uem`: DER and JER only inside the regions of a NIST UEM file (AMI excerpt)."""
from __future__ import annotations

import json

import pytest

from speechkit.cli import main
from speechkit.io.rttm import read_rttm, write_rttm
from speechkit.io.uem import read_uem
from speechkit.transcript import Transcript


def _score(capsys, *args) -> dict:
    assert main(["score", *map(str, args)]) == 0
    capsys.readouterr()
    return json.loads(args[list(args).index("--out") + 1].read_text())


@pytest.fixture
def first_half(realdata, tmp_path):
    """trn00's reference turns up to 15 s, nothing after: a system that stopped half way."""
    ref = read_rttm(realdata / "ami-debug" / "train.rttm")["trn00"]
    kept = [type(s)(s.start, min(s.end, 15.0), s.speaker) for s in ref.segments if s.start < 15.0]
    write_rttm(tmp_path / "half.rttm", [Transcript("trn00", kept, has_words=False)])
    return tmp_path / "half.rttm"


def test_der_is_scored_only_inside_the_uem(realdata, tmp_path, capsys, first_half):
    ref = realdata / "ami-debug" / "train.rttm"
    (tmp_path / "first.uem").write_text("trn00 1 0.000 15.000\n")
    common = ["--ref", ref, "--hyp", first_half, "--session", "trn00", "--resamples", "0"]
    whole = _score(capsys, *common, "--uem", realdata / "ami-debug" / "train.uem", "--out", tmp_path / "a.json")
    inside = _score(capsys, *common, "--uem", tmp_path / "first.uem", "--out", tmp_path / "b.json")
    unlimited = _score(capsys, *common, "--out", tmp_path / "c.json")

    # the second half's speech is all missed over the whole excerpt, and not scored with the UEM
    assert whole["aggregate"]["der"]["value"] > 0.2
    assert inside["aggregate"]["der"]["value"] == 0.0
    assert inside["settings"]["der_uem"] == str(tmp_path / "first.uem")
    # train.uem covers the whole 30 s excerpt: the same as pyannote.metrics with that UEM
    from pyannote.core import Segment, Timeline
    from pyannote.metrics.diarization import DiarizationErrorRate

    from speechkit.metrics.diarization import to_annotation
    expected = DiarizationErrorRate(collar=0.5, skip_overlap=False)(
        to_annotation(read_rttm(ref)["trn00"]), to_annotation(read_rttm(first_half)["trn00"]),
        uem=Timeline([Segment(0.0, 30.0)]))
    assert whole["aggregate"]["der"]["value"] == pytest.approx(expected, abs=1e-9)
    assert unlimited["aggregate"]["der"]["value"] == pytest.approx(expected, abs=0.02)  # extent ~ 0-30 s


def test_a_meeting_missing_from_the_uem_or_a_bad_line_is_one_error_line(realdata, tmp_path, capsys, first_half):
    ref = realdata / "ami-debug" / "train.rttm"
    for text, problem in (("trn01 1 0 30\n", "no scored region for session 'trn00'"),
                          ("trn00 1 20 10\n", ":1: the end 10 is not after the start 20"),
                          ("trn00 1 0\n", ":1: expected <file> <channel> <start> <end>"),
                          (";; nothing\n", "no scored region")):
        (tmp_path / "x.uem").write_text(text)
        assert main(["score", "--ref", str(ref), "--hyp", str(first_half), "--session", "trn00",
                     "--uem", str(tmp_path / "x.uem")]) != 0
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "error:" in err and str(tmp_path / "x.uem") in err and problem in err


def test_read_uem_sorts_regions_per_session(tmp_path):
    (tmp_path / "a.uem").write_text(";; comment\nm1 1 10 20\nm1 1 0 5\nm2 A 0.5 1.5\n")
    uem = read_uem(tmp_path / "a.uem")
    assert uem.regions_of("m1") == ((0.0, 5.0), (10.0, 20.0)) and uem.regions_of("m2") == ((0.5, 1.5),)
