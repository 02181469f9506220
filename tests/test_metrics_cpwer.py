"""cpWER and tcpWER: equal meeteval's (errors, length, insertions, deletions, substitutions, speakers
missed and falsely alarmed, assignment) on the real sample.stm reference with perturbed hypotheses,
on long sessions built from it, and on random sessions; long sessions take linear time."""
from __future__ import annotations

import dataclasses
import importlib
import time
from unittest import mock

import meeteval
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from meeteval.io import SegLST
from meeteval.wer.wer.cp import cp_word_error_rate
from meeteval.wer.wer.time_constrained import time_constrained_minimum_permutation_word_error_rate

from speechkit.io import read_stm
from speechkit.metrics import word_alignment
from speechkit.metrics.cpwer import CpWerResult, cpwer, tcpwer
from speechkit.metrics.normalize import normalize
from speechkit.transcript import Segment, Transcript

cpwer_module = importlib.import_module("speechkit.metrics.cpwer")  # the package exports a function of that name


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


def figures(result: CpWerResult) -> tuple:
    return (result.errors, result.length, result.insertions, result.deletions, result.substitutions,
            result.missed_speakers, result.false_alarm_speakers, result.assignment)


def meeteval_figures(ref: Transcript, hyp: Transcript, collar: float | None) -> tuple:
    """meeteval's figures for the normalised words: cpWER, or tcpWER with ``collar``."""
    ref_s, hyp_s = SegLST(normalised_seglst(ref)), SegLST(normalised_seglst(hyp))
    er = (cp_word_error_rate(ref_s, hyp_s) if collar is None
          else time_constrained_minimum_permutation_word_error_rate(ref_s, hyp_s, collar=collar))
    return (er.errors, er.length, er.insertions, er.deletions, er.substitutions, er.missed_speaker,
            er.falarm_speaker, tuple(tuple(a) for a in er.assignment))


def ours(ref: Transcript, hyp: Transcript, collar: float | None) -> tuple:
    return figures(cpwer(ref, hyp) if collar is None else tcpwer(ref, hyp, collar))


def repeated(t: Transcript, lines: int, every: float = 31.0) -> Transcript:
    """``lines`` segments: the segments of ``t`` again and again along the time axis."""
    segs = [dataclasses.replace(s, start=s.start + k * every, end=s.end + k * every)
            for k in range(lines // len(t.segments) + 1) for s in t.segments]
    return Transcript(t.session_id, segs[:lines])


@pytest.mark.parametrize("kind", sorted(PERTURB))
@pytest.mark.parametrize("collar", [None, 0.5, 5.0])
def test_long_sessions_equal_meeteval(sample, kind, collar):
    """1,300 lines (a few thousand words per speaker): the speaker pairs' distances are first bounded,
    and the pairs left out of the assignment keep only a lower bound."""
    ref = repeated(sample, 1300)
    assert ours(ref, PERTURB[kind](ref), collar) == meeteval_figures(ref, PERTURB[kind](ref), collar)


WORDS = st.sampled_from(["cat", "dog", "sun", "", "red dog", "cat cat sun", "um", "dog sun cat red"])
SPEAKERS = st.sampled_from(["a", "b", "c", "d"])
TIMES = st.integers(0, 40).map(lambda t: t / 4)
SESSIONS = st.lists(st.builds(lambda start, duration, speaker, text: Segment(start, start + duration, speaker, text),
                              TIMES, TIMES, SPEAKERS, WORDS), max_size=12).map(lambda segs: Transcript("x", segs))


@settings(max_examples=1000, deadline=None)
@given(ref=SESSIONS.filter(lambda t: t.segments), hyp=SESSIONS, collar=st.sampled_from([None, 0.0, 0.5, 5.0]),
       first_bound=st.sampled_from([0, 1, 64]), max_char=st.sampled_from([2, 0x10FFFF]))
def agrees_with_meeteval(ref, hyp, collar, first_bound, max_char):
    """Few words and speakers: many ties between alignments and between assignments; a first bound
    of 0 or 1 sends the bounded search through its rounds (lower bounds, uniqueness, the exact matrix),
    and a vocabulary over ``max_char`` gives rapidfuzz lists of ids instead of text."""
    with mock.patch.object(cpwer_module, "_FIRST_BOUND", first_bound), \
            mock.patch.object(word_alignment, "_MAX_CHAR", max_char):
        assert ours(ref, hyp, collar) == meeteval_figures(ref, hyp, collar)


def test_figures_are_meetevals_on_random_sessions(importable_modules):
    agrees_with_meeteval()


def test_time_is_linear_in_the_lines_of_a_session(sample):
    """A hypothesis that relabels the speakers of a long session: four times the lines take well
    under sixteen times as long (meeteval: 48 s for cpWER and 13 s and 3.8 GB for tcpWER at 8,000)."""
    hyp = PERTURB["swapped speakers"]
    seconds = {}
    for lines in (5_000, 20_000):
        ref = repeated(sample, lines)
        start = time.perf_counter()
        assert cpwer(ref, hyp(ref)).errors == tcpwer(ref, hyp(ref)).errors == 0
        seconds[lines] = time.perf_counter() - start
    assert seconds[20_000] < 8 * seconds[5_000] + 0.5, seconds


@pytest.mark.parametrize("cost,cols,unique", [
    ([[0, 5], [5, 0]], [0, 1], True),
    ([[0, 0], [0, 0]], [0, 1], False),  # the other assignment ties: the solver's tie-break on the exact matrix decides
    ([[1, 2, 9], [2, 1, 9], [9, 9, 0]], [0, 1, 2], True),
    ([[1, 2, 9], [2, 3, 9], [9, 9, 0]], [0, 1, 2], False),  # 1 + 3 = 2 + 2
    ([[4]], [0], True),  # no other assignment
])
def test_an_assignment_is_used_unchecked_only_when_every_other_costs_more(cost, cols, unique):
    assert cpwer_module._is_unique_optimum(np.array(cost), np.array(cols)) is unique
