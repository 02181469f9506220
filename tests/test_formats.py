"""Round trips and error messages of the transcript formats, on the real references."""
from __future__ import annotations

import json

import pytest

from speechkit.errors import FormatError
from speechkit.io import read_transcripts, write_transcripts
from speechkit.io.atomic import atomic_open
from speechkit.io.ctm import read_ctm, write_ctm
from speechkit.io.rttm import read_rttm, write_rttm
from speechkit.io.seglst import read_seglst, write_seglst
from speechkit.io.stm import read_stm, write_stm
from speechkit.transcript import Segment, Transcript, Word


def test_rttm_reads_real_reference(realdata):
    turns = read_rttm(realdata / "pyannote-sample" / "sample.rttm")
    assert list(turns) == ["sample"]
    t = turns["sample"]
    assert not t.has_words
    assert len(t.speakers) == 2
    assert all(s.end > s.start for s in t.segments)


def test_rttm_multi_file(realdata):
    turns = read_rttm(realdata / "ami-debug" / "train.rttm")
    assert len(turns) >= 10
    # speakers recur across excerpts of one meeting (README of realdata)
    assert {"FEE087", "FEE088"} <= set(turns["trn07"].speakers)


def test_rttm_round_trip(realdata, tmp_path):
    original = read_rttm(realdata / "pyannote-sample" / "sample.rttm")["sample"]
    write_rttm(tmp_path / "out.rttm", [original])
    again = read_rttm(tmp_path / "out.rttm")["sample"]
    assert [(s.speaker, round(s.start, 3), round(s.end, 3)) for s in again.segments] == \
           [(s.speaker, round(s.start, 3), round(s.end, 3)) for s in original.segments]


def test_stm_reads_real_reference(realdata):
    t = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    assert t.has_words and len(t.speakers) == 2
    assert len(t.text.split()) > 30


def test_stm_round_trip(realdata, tmp_path):
    original = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    write_stm(tmp_path / "out.stm", [original])
    again = read_stm(tmp_path / "out.stm")["sample"]
    assert [(s.speaker, s.text) for s in again.segments] == [(s.speaker, s.text) for s in original.segments]


def _timed() -> Transcript:
    words = [Word("hello", 0.5, 0.9, 0.8), Word("world", 1.0, 1.4, 0.6)]
    return Transcript("m1", [Segment.from_words(words, speaker="p1", speaker_name="Ada Byron"),
                             Segment.from_words([Word("yes", 2.0, 2.2, 0.9)], speaker="p2")])


def test_seglst_round_trip_keeps_word_times_and_names(tmp_path):
    write_seglst(tmp_path / "m1.json", [_timed()])
    again = read_seglst(tmp_path / "m1.json")["m1"]
    assert again.segments[0].speaker_name == "Ada Byron"
    assert again.segments[0].words[1] == Word("world", 1.0, 1.4, 0.6)
    assert again.segments[1].speaker_name is None
    # standard SegLST keys for other tools (meeteval)
    obj = json.loads((tmp_path / "m1.json").read_text())[0]
    assert {"session_id", "speaker", "start_time", "end_time", "words"} <= set(obj)


def test_ctm_round_trip(tmp_path):
    write_ctm(tmp_path / "m1.ctm", [_timed()])
    again = read_ctm(tmp_path / "m1.ctm")["m1"]
    assert not again.has_speakers
    assert [w.text for w, _ in again.words()] == ["hello", "world", "yes"]
    assert again.words()[0][0].confidence == pytest.approx(0.8)


def test_nist_writers_write_one_line_per_turn_or_word(tmp_path):
    two = [_timed(), Transcript("m 2", [Segment(3.0, 4.25, "p 3", "ok  then")])]
    expected = {
        "rttm": "SPEAKER m1 1 0.500 0.900 <NA> <NA> Ada_Byron <NA> <NA>\n"
                "SPEAKER m1 1 2.000 0.200 <NA> <NA> p2 <NA> <NA>\n"
                "SPEAKER m_2 1 3.000 1.250 <NA> <NA> p_3 <NA> <NA>\n",
        "stm": "m1 1 Ada_Byron 0.500 1.400 hello world\nm1 1 p2 2.000 2.200 yes\nm_2 1 p_3 3.000 4.250 ok then\n",
        "ctm": "m1 1 0.500 0.400 hello 0.800\nm1 1 1.000 0.400 world 0.600\nm1 1 2.000 0.200 yes 0.900\n",
    }
    for fmt, text in expected.items():
        write_transcripts(tmp_path / f"a.{fmt}", two)
        assert (tmp_path / f"a.{fmt}").read_text() == text
        write_transcripts(tmp_path / f"empty.{fmt}", [])
        assert (tmp_path / f"empty.{fmt}").read_bytes() == b""
        with pytest.raises(FormatError, match=rf"bad\.{fmt}: cannot write {fmt.upper()}: empty session id"):
            write_transcripts(tmp_path / f"bad.{fmt}", [_timed(), Transcript(" ", _timed().segments)])
        assert not (tmp_path / f"bad.{fmt}").exists()


def test_dispatch_by_extension(tmp_path):
    for name in ("a.rttm", "a.stm", "a.ctm", "a.json"):
        write_transcripts(tmp_path / name, [_timed()])
        assert "m1" in read_transcripts(tmp_path / name)
    with pytest.raises(FormatError, match=r"a\.txt: unknown transcript format"):
        read_transcripts(tmp_path / "a.txt")


@pytest.mark.parametrize("name, text, pattern", [
    ("bad.rttm", "SPEAKER f 1 0.0 1.0 <NA> <NA> A <NA> <NA>\nSPEAKER f 1 2.0\n", r"bad\.rttm:2: .*at least 8 fields"),
    ("bad.rttm", "SPEAKER f 1 x 1.0 <NA> <NA> A <NA> <NA>\n", r"bad\.rttm:1: onset: expected a number"),
    ("bad.rttm", "SPEAKER f 1 1.0 -2 <NA> <NA> A <NA> <NA>\n", r"bad\.rttm:1: duration: expected a finite time"),
    ("bad.stm", ";; comment\nf 1 A 0.0\n", r"bad\.stm:2: expected at least 5 fields"),
    ("bad.stm", "f 1 A 3.0 1.0 hello\n", r"bad\.stm:1: end: end 1\.0 is before begin 3\.0"),
    ("bad.ctm", "f 1 0.0 0.5 word 0.9 extra\n", r"bad\.ctm:1: expected 5 or 6 fields"),
    ("bad.ctm", "f 1 0.0 0.5 word high\n", r"bad\.ctm:1: confidence: expected a number"),
    ("bad.json", "[{\"session_id\": \"m\", \"speaker\": \"A\", \"start_time\": 0}]",
     r"bad\.json: \[0\]\.end_time: missing"),
    ("bad.json", "{\"not\": \"a list\"}", r"bad\.json: expected a JSON list"),
    ("bad.json", "[{", r"bad\.json:1: invalid JSON"),
    ("bad.json", "[{\"session_id\": \"m\", \"speaker\": \"A\", \"start_time\": 0, \"end_time\": 1, "
                 "\"words\": \"a b\", \"word_times\": [{\"word\": \"a\", \"start\": 0, \"end\": 1}]}]",
     r"bad\.json: \[0\]\.word_times: expected a list of 2 objects"),
])
def test_malformed_input_names_file_line_and_field(tmp_path, name, text, pattern):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(FormatError, match=pattern):
        read_transcripts(path)


def test_not_utf8_and_missing_file(tmp_path):
    (tmp_path / "x.stm").write_bytes(b"f 1 A 0 1 \xff\xfe\n")
    with pytest.raises(FormatError, match=r"x\.stm: not UTF-8"):
        read_transcripts(tmp_path / "x.stm")
    with pytest.raises(FormatError, match=r"nope\.rttm: file not found"):
        read_transcripts(tmp_path / "nope.rttm")


def test_failed_write_leaves_previous_file_intact(tmp_path):
    path = tmp_path / "m1.json"
    write_seglst(path, [_timed()])
    before = path.read_bytes()
    with pytest.raises(RuntimeError):
        with atomic_open(path) as handle:
            handle.write("[partial")
            raise RuntimeError("simulated failure in the middle of a write")
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m1.json"]  # no temp file left behind
