"""Backchannels flagged in a reference (SegLST ``backchannel``) and ``score --exclude-backchannels``."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from speechkit.cli import main
from speechkit.errors import FormatError
from speechkit.io.seglst import parse_seglst, read_seglst, write_seglst
from speechkit.metrics.backchannels import without_backchannels
from speechkit.transcript import Segment, Transcript, Word


def seg(speaker: str, start: float, text: str, backchannel: bool = False) -> Segment:
    words = [Word(w, start + i * 0.4, start + i * 0.4 + 0.3) for i, w in enumerate(text.split())]
    return Segment.from_words(words, speaker=speaker, backchannel=backchannel)


REF = Transcript("m1", [seg("p1", 0.0, "the mapping is mostly done and the schema changed again"),
                        seg("p2", 1.6, "yeah", backchannel=True), seg("p2", 5.0, "okay thanks for that")])


def test_the_flag_round_trips_and_is_written_only_when_true(tmp_path):
    write_seglst(tmp_path / "ref.json", [REF])
    rows = json.loads((tmp_path / "ref.json").read_text())
    assert [r.get("backchannel") for r in rows] == [None, True, None]
    assert [s.backchannel for s in read_seglst(tmp_path / "ref.json")["m1"].segments] == [False, True, False]
    bad = [dict(rows[1], backchannel="yes")]
    with pytest.raises(FormatError, match=r"\[0\]\.backchannel"):
        parse_seglst(json.dumps(bad))


def test_excluding_drops_the_backchannel_and_the_hypothesis_words_that_transcribe_it():
    hyp = Transcript("m1", [seg("A", 0.0, "the mapping is mostly done and the schema changed again"),
                            seg("B", 1.7, "yeah"), seg("B", 5.0, "yeah okay thanks for that")])
    ref, out = without_backchannels(REF, hyp)
    assert [s.text for s in ref.segments] == [REF.segments[0].text, REF.segments[2].text]
    # the "yeah" at 1.7 s is the backchannel; the one opening the later turn is not
    assert [s.text for s in out.segments] == [hyp.segments[0].text, "yeah okay thanks for that"]
    untimed = Transcript("m1", [replace(s, words=tuple(Word(w.text) for w in s.words)) for s in hyp.segments])
    assert without_backchannels(REF, untimed)[1].segments == untimed.segments


def test_score_exclude_backchannels(tmp_path, capsys):
    write_seglst(tmp_path / "ref.json", [REF])
    missed = Transcript("m1", [s for s in REF.segments if not s.backchannel])
    write_seglst(tmp_path / "hyp.json", [Transcript("m1", [replace(s, backchannel=False) for s in missed.segments])])
    wer = {}
    for flag in ([], ["--exclude-backchannels"]):
        out = tmp_path / f"scores{len(flag)}.json"
        assert main(["score", "--ref", str(tmp_path / "ref.json"), "--hyp", str(tmp_path / "hyp.json"),
                     "--resamples", "0", "--out", str(out), *flag]) == 0
        scores = json.loads(out.read_text())
        assert scores["settings"]["exclude_backchannels"] is bool(flag)
        wer[bool(flag)] = scores["aggregate"]["wer"]["value"]
    assert wer[False] == pytest.approx(1 / 15) and wer[True] == 0.0
    capsys.readouterr()
