"""DER and JER: equal pyannote.metrics' to the last bit, on the real RTTM references with perturbed
hypotheses and on random sessions, and near-linear in the turns of a session."""
from __future__ import annotations

import dataclasses
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyannote.core import Segment as PaSegment
from pyannote.core import Timeline
from pyannote.database.util import load_rttm
from pyannote.metrics.diarization import DiarizationErrorRate, JaccardErrorRate

from speechkit.io import read_rttm, write_rttm
from speechkit.metrics.diarization import DiarizationResult, diarization_errors, to_annotation
from speechkit.scoring import score_files
from speechkit.transcript import Segment, Transcript


def shifted(t: Transcript, by: float) -> Transcript:
    return Transcript(t.session_id, [dataclasses.replace(s, start=max(0.0, s.start + by), end=s.end + by)
                                     for s in t.segments], has_words=False)


def swapped(t: Transcript) -> Transcript:
    """Every other turn goes to another speaker (a confusion no mapping can undo)."""
    labels = t.speakers
    segs = [s.with_speaker(labels[(labels.index(s.speaker) + 1) % len(labels)]) if i % 2 else s
            for i, s in enumerate(t.segments)]
    return Transcript(t.session_id, segs, has_words=False)


def dropped(t: Transcript) -> Transcript:
    return Transcript(t.session_id, [s for i, s in enumerate(t.segments) if i % 3 != 1], has_words=False)


pytestmark = pytest.mark.filterwarnings("ignore:.uem. was approximated")

PERTURB = {"shifted": lambda t: shifted(t, 0.4), "swapped": swapped, "dropped": dropped,
           "all": lambda t: dropped(swapped(shifted(t, -0.3)))}


def pyannote_reference(tmp_path, name, hyp: Transcript):
    path = tmp_path / f"{name}.rttm"
    write_rttm(path, [hyp])
    return load_rttm(path)[hyp.session_id]


@pytest.mark.parametrize("kind", sorted(PERTURB))
@pytest.mark.parametrize("collar", [0.0, 0.25])
def test_der_jer_equal_pyannote_on_sample(realdata, tmp_path, kind, collar):
    rttm = realdata / "pyannote-sample" / "sample.rttm"
    ref = read_rttm(rttm)["sample"]
    hyp = PERTURB[kind](ref)
    result = diarization_errors(ref, hyp, collar=collar)
    # pyannote's own reader and metric; its collar is the total width (2 x per side)
    ref_ann, hyp_ann = load_rttm(rttm)["sample"], pyannote_reference(tmp_path, "hyp", hyp)
    der = DiarizationErrorRate(collar=2 * collar, skip_overlap=False)(ref_ann, hyp_ann)
    jer = JaccardErrorRate(collar=2 * collar, skip_overlap=False)(ref_ann, hyp_ann)
    assert result.der.value == pytest.approx(der, abs=1e-9)
    assert result.jer == pytest.approx(jer, abs=1e-9)
    assert result.der.value > 0.01


def test_collar_is_per_side(realdata):
    ref = read_rttm(realdata / "pyannote-sample" / "sample.rttm")["sample"]
    hyp = shifted(ref, 0.2)  # every boundary off by 0.2 s: within a 0.25 s collar on each side
    assert diarization_errors(ref, hyp, collar=0.0).der.value > 0.05
    assert diarization_errors(ref, hyp, collar=0.25).der.value < 0.01


def test_ami_aggregate_is_pyannote_accumulated_der(realdata, tmp_path):
    """Over the ten AMI excerpts, the aggregate DER is pyannote's accumulated |DER| (micro)."""
    rttm = realdata / "ami-debug" / "train.rttm"
    refs = read_rttm(rttm)
    hyps = [PERTURB["all"](refs[sid]) for sid in sorted(refs)]
    hyp_path = tmp_path / "hyp.rttm"
    write_rttm(hyp_path, hyps)
    scores = score_files(rttm, hyp_path)

    metric = DiarizationErrorRate(collar=0.5, skip_overlap=False)
    jer = JaccardErrorRate(collar=0.5, skip_overlap=False)
    ref_anns, hyp_anns = load_rttm(rttm), load_rttm(hyp_path)
    per_file, per_file_jer = {}, {}
    for sid in sorted(refs):
        per_file[sid] = metric(ref_anns[sid], hyp_anns[sid])
        per_file_jer[sid] = jer(ref_anns[sid], hyp_anns[sid])
        assert scores["meetings"][sid]["der"]["value"] == pytest.approx(per_file[sid], abs=1e-9)
        assert scores["meetings"][sid]["jer"]["value"] == pytest.approx(per_file_jer[sid], abs=1e-9)
    agg = scores["aggregate"]
    assert agg["der"]["value"] == pytest.approx(abs(metric), abs=1e-9)
    assert agg["jer"]["value"] == pytest.approx(sum(per_file_jer.values()) / len(per_file_jer), abs=1e-9)
    assert agg["der"]["ci_low"] < agg["der"]["value"] < agg["der"]["ci_high"]
    assert scores["settings"]["der_collar_s"] == 0.25
    # RTTM on both sides: no words, so the word metrics are n/a, not zero
    for key in ("wer", "cpwer", "tcpwer", "named_speaker_accuracy"):
        assert agg[key] == {"value": None, "ci_low": None, "ci_high": None}
        assert "no words" in scores["not_applicable"][key]


def test_empty_hypothesis_is_all_missed(realdata):
    ref = read_rttm(realdata / "pyannote-sample" / "sample.rttm")["sample"]
    result = diarization_errors(ref, Transcript("sample", [], has_words=False))
    assert result.der.value == 1.0 and result.missed == result.total > 0
    nothing = diarization_errors(Transcript("x", []), Transcript("x", []))
    assert nothing.der.value is None and nothing.jer is None


def pyannote_figures(ref: Transcript, hyp: Transcript, collar: float, uem=None) -> tuple:
    """DER components and JER from pyannote.metrics itself (quadratic in the turns: small sessions)."""
    ref_ann, hyp_ann = to_annotation(ref), to_annotation(hyp)
    speech = ref_ann.get_timeline().union(hyp_ann.get_timeline())
    if not speech:
        return 0.0, 0.0, 0.0, 0.0, 0.0, None
    region = Timeline([speech.extent()]) if uem is None else Timeline([PaSegment(s, e) for s, e in uem])
    c = DiarizationErrorRate(collar=2 * collar)(ref_ann, hyp_ann, uem=region, detailed=True)
    jer = JaccardErrorRate(collar=2 * collar)(ref_ann, hyp_ann, uem=region) if ref_ann.labels() else None
    return c["total"], c["confusion"], c["missed detection"], c["false alarm"], c["correct"], jer


def figures(result: DiarizationResult) -> tuple:
    return result.total, result.confusion, result.missed, result.false_alarm, result.correct, result.jer


@pytest.mark.parametrize("kind", sorted(PERTURB))
@pytest.mark.parametrize("collar", [0.0, 0.25])
def test_figures_are_pyannotes_to_the_last_bit_on_ami(realdata, kind, collar):
    refs = read_rttm(realdata / "ami-debug" / "train.rttm")
    for sid in sorted(refs):
        hyp = PERTURB[kind](refs[sid])
        assert figures(diarization_errors(refs[sid], hyp, collar)) == pyannote_figures(refs[sid], hyp, collar), sid


TIMES = st.one_of(st.integers(0, 30_000).map(lambda ms: ms / 1000),  # RTTM/STM-like millisecond times
                  st.floats(0, 30), st.sampled_from([0.0, 0.5, 1.0, 2.5]))  # exact ties
DURATIONS = st.one_of(st.integers(0, 5_000).map(lambda ms: ms / 1000), st.floats(0, 5),
                      st.sampled_from([1e-7, 1e-6, 2e-6, 0.5]))  # around pyannote's 1 us precision
SPEAKERS = st.one_of(st.sampled_from("abc"), st.sampled_from([f"s{i}" for i in range(30)]))  # past pyannote's Z
SESSIONS = st.lists(st.builds(lambda start, duration, speaker: Segment(start, start + duration, speaker),
                              TIMES, DURATIONS, SPEAKERS), max_size=25).map(
    lambda segments: Transcript("x", segments + segments[:1], has_words=False))  # a repeated turn
UEMS = st.none() | st.lists(st.tuples(TIMES, DURATIONS).map(lambda t: (t[0], t[0] + 4 * t[1])), min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(ref=SESSIONS, hyp=SESSIONS, collar=st.sampled_from([0.0, 0.1, 0.25]), uem=UEMS)
def agrees_with_pyannote(ref, hyp, collar, uem):
    assert figures(diarization_errors(ref, hyp, collar, uem)) == pyannote_figures(ref, hyp, collar, uem)


def test_figures_are_pyannotes_to_the_last_bit_on_random_sessions(importable_modules):
    agrees_with_pyannote()


def repeated(t: Transcript, turns: int, every: float = 31.0) -> Transcript:
    """``turns`` turns: the turns of ``t`` again and again along the time axis, ``every`` seconds apart."""
    segs = [dataclasses.replace(s, start=s.start + k * every, end=s.end + k * every)
            for k in range(turns // len(t.segments) + 1) for s in t.segments]
    return Transcript(t.session_id, segs[:turns], has_words=False)


def test_time_is_near_linear_in_the_turns_of_a_session(realdata):
    """A long session repeats the sample: the same figures as one copy, and four times the turns
    take well under sixteen times as long (pyannote.metrics itself is quadratic)."""
    ref = read_rttm(realdata / "pyannote-sample" / "sample.rttm")["sample"]
    hyp = swapped(shifted(ref, 0.4))
    one = diarization_errors(ref, hyp)
    seconds = {}
    for turns in (5_000, 20_000):
        start = time.perf_counter()
        long = diarization_errors(repeated(ref, turns), repeated(hyp, turns))
        seconds[turns] = time.perf_counter() - start
        assert long.der.value == pytest.approx(one.der.value, rel=1e-9) and one.der.value > 0.05
        assert long.jer == pytest.approx(one.jer, rel=1e-9) and long.total == pytest.approx(one.total * turns / 10)
    assert seconds[20_000] < 8 * seconds[5_000] + 0.5, seconds
