"""cpWER and tcpWER: equal meeteval's on the real sample.stm reference with perturbed hypotheses."""
from __future__ import annotations

import dataclasses

import meeteval
import pytest

from speechkit.io import read_stm
from speechkit.metrics.cpwer import cpwer, tcpwer
from speechkit.metrics.normalize import normalize
from speechkit.transcript import Transcript


@pytest.fixture(scope="module")
def sample(realdata):
    return read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]


def relabel(t: Transcript, mapping: dict[str, str], every: int = 1) -> Transcript:
    return Transcript(t.session_id, [s.with_speaker(mapping[s.speaker]) if i % every == 0 else s
                                     for i, s in enumerate(t.segments)])


def drop_words(t: Transcript) -> Transcript:
    segs = []
    for s in t.segments:
        words = s.text.split()
        segs.append(dataclasses.replace(s, text=" ".join(w for i, w in enumerate(words) if i % 3 != 1), words=()))
    return Transcript(t.session_id, segs)


PERTURB = {
    "swapped speakers": lambda t: relabel(t, {"Diane": "spk1", "Sheila": "spk0"}),
    "half swapped": lambda t: relabel(relabel(t, {"Diane": "A", "Sheila": "B"}), {"A": "B", "B": "A"}, every=3),
    "dropped words": lambda t: relabel(drop_words(t), {"Diane": "A", "Sheila": "B"}),
    "both": lambda t: relabel(relabel(drop_words(t), {"Diane": "A", "Sheila": "B"}), {"A": "B", "B": "A"}, every=4),
}


def normalised_seglst(t: Transcript) -> list[dict]:
    return [{"session_id": t.session_id, "speaker": s.speaker, "start_time": s.start, "end_time": s.end,
             "words": normalize(s.text)} for s in t.segments]


@pytest.mark.parametrize("kind", sorted(PERTURB))
def test_cpwer_tcpwer_equal_meeteval(sample, kind):
    hyp = PERTURB[kind](sample)
    ref_s, hyp_s = normalised_seglst(sample), normalised_seglst(hyp)
    expected = meeteval.wer.cpwer(ref_s, hyp_s)["sample"]
    result = cpwer(sample, hyp)
    assert (result.errors, result.length) == (expected.errors, expected.length)
    assert result.ratio.value == pytest.approx(expected.error_rate)
    assert result.substitutions + result.deletions + result.insertions == result.errors
    expected_tc = meeteval.wer.tcpwer(ref_s, hyp_s, collar=5)["sample"]
    result_tc = tcpwer(sample, hyp, collar=5)
    assert (result_tc.errors, result_tc.length) == (expected_tc.errors, expected_tc.length)
    if kind == "swapped speakers":  # a pure relabelling costs nothing: the permutation undoes it
        assert result.errors == 0 and result_tc.errors == 0
        assert dict(result.assignment) == {"Diane": "spk1", "Sheila": "spk0"}
    else:
        assert result.errors > 0


def test_tcpwer_collar_matters(sample):
    """Hypothesis segments moved 3 s late: inside a 5 s collar, outside a 1 s one."""
    late = Transcript("sample", [dataclasses.replace(s, start=s.start + 3, end=s.end + 3) for s in sample.segments])
    assert tcpwer(sample, late, collar=5).errors == 0
    assert tcpwer(sample, late, collar=1).errors > 0
    assert cpwer(sample, late).errors == 0


def test_empty_hypothesis(sample):
    result = cpwer(sample, Transcript("sample", []))
    assert result.errors == result.deletions == result.length > 0
    assert result.missed_speakers == 2
