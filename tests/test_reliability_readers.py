"""Readers bounded and exact (issue 26): size limits, nesting, line breaks, byte-order marks, and the
time of a large but valid STM, on the real pyannote sample's reference."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from speechkit.corpora.terms import read_terms
from speechkit.errors import FormatError
from speechkit.io import _lines, read_transcripts
from speechkit.io.rttm import read_rttm
from speechkit.io.seglst import read_seglst
from speechkit.io.stm import read_stm


def test_line_separators_inside_an_stm_line_do_not_split_it(tmp_path):
    """U+2028, U+0085 and a form feed are whitespace inside a line, not line breaks."""
    path = tmp_path / "x.stm"
    path.write_text("m1 1 A 0.0 1.0 hello\u2028there\n"
                    "m1 1 B 1.0 2.0 good\u0085bye\x0cnow\n"
                    "m1 1 C 2.0 oops words\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"x.stm:3: end: expected a number of seconds, got 'oops'"):
        read_stm(path)
    path.write_text(path.read_text(encoding="utf-8").replace("oops", "3.0"), encoding="utf-8")
    assert [s.text for s in read_stm(path)["m1"].segments] == ["hello there", "good bye now", "words"]


def test_an_rttm_with_a_byte_order_mark_reads_its_first_line(realdata, tmp_path):
    plain = realdata / "pyannote-sample" / "sample.rttm"
    marked = tmp_path / "sample.rttm"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert read_rttm(marked)["sample"].segments == read_rttm(plain)["sample"].segments
    assert len(read_rttm(marked)["sample"].segments) == len(plain.read_text().splitlines())


def test_an_input_over_the_size_limit_is_refused_with_the_limit_named(realdata, monkeypatch):
    stm = realdata / "pyannote-sample" / "sample.stm"
    monkeypatch.setattr(_lines, "MAX_INPUT_BYTES", stm.stat().st_size - 1)
    with pytest.raises(FormatError, match=r"sample.stm: larger than 0 MiB, the limit for an input file"):
        read_stm(stm)


@pytest.mark.parametrize("text,expect", [
    ("[" * 100_000, "values nested too deeply"),
    ('[{"session_id": "m1", "speaker": "A", "start_time": 1' + "0" * 5000 + "}]", "an integer of 5001 digits"),
    ('[{"session_id": "m1", "speaker": "A", "start_time": 1e999, "end_time": 2, "words": "x"}]', "not finite"),
    ('[{"session_id": "m1", "speaker": "A", "start_time": NaN, "end_time": 2, "words": "x"}]', "NaN"),
])
def test_hostile_seglst_json_is_a_format_error(tmp_path, text, expect):
    (tmp_path / "x.json").write_text(text)
    with pytest.raises(FormatError, match=expect):
        read_seglst(tmp_path / "x.json")


def test_deeply_nested_yaml_terms_are_a_format_error(tmp_path):
    (tmp_path / "terms.yaml").write_text("jargon: " + "[" * 100_000)
    with pytest.raises(FormatError, match=r"terms.yaml: invalid YAML: values nested too deeply"):
        read_terms(tmp_path / "terms.yaml")


def _big_stm(path, realdata, lines: int) -> None:
    """``lines`` STM lines: the real sample's reference segments repeated along the time axis."""
    segments = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"].segments
    out, offset = [], 0.0
    while len(out) < lines:
        for s in segments[: lines - len(out)]:
            out.append(f"big 1 {s.speaker} {s.start + offset:.3f} {s.end + offset:.3f} {s.text}")
        offset += 31.0
    path.write_text("\n".join(out) + "\n")


def test_stm_reading_is_linear_in_size(tmp_path, realdata):
    seconds = {}
    for lines in (25_000, 100_000):
        _big_stm(tmp_path / f"{lines}.stm", realdata, lines)
        start = time.perf_counter()
        assert len(read_transcripts(tmp_path / f"{lines}.stm")["big"].segments) == lines
        seconds[lines] = time.perf_counter() - start
    # four times the lines: linear, not 16 times (quadratic)
    assert seconds[100_000] < 8 * seconds[25_000] + 0.5, seconds


@pytest.mark.slow
def test_a_100000_line_stm_scores_in_under_10_seconds(tmp_path, realdata):
    _big_stm(tmp_path / "big.stm", realdata, 100_000)
    done = subprocess.run([sys.executable, "-m", "speechkit", "score", "--ref", str(tmp_path / "big.stm"), "--hyp",
                           str(tmp_path / "big.stm"), "--resamples", "0"], capture_output=True, text=True, timeout=10)
    assert done.returncode == 0 and "WER" in done.stdout, done.stderr
