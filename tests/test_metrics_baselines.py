"""Where the errors are, in scores.json: the trivial diarization baselines beside DER/JER, the WER and
DER components summed over meetings, and the per-speaker split of cpWER, on real references."""
from __future__ import annotations

import pytest

from speechkit.io import read_transcripts
from speechkit.io.rttm import write_rttm
from speechkit.io.stm import read_stm, write_stm
from speechkit.metrics.bootstrap import micro
from speechkit.metrics.cpwer import cpwer
from speechkit.metrics.diarization import (
    BASELINES,
    baselines,
    diarization_errors,
    one_label,
    speech_seconds,
    to_annotation,
)
from speechkit.metrics.per_speaker import per_speaker_errors
from speechkit.scoring import ScoreOptions, score_files
from speechkit.scoring.catalogue import catalogue
from speechkit.transcript import Segment, Transcript

METRICS = catalogue().metrics

OPTIONS = ScoreOptions(resamples=200)


@pytest.fixture(scope="module")
def ami(realdata):
    """The reference turns of the real AMI excerpts (several speakers, overlaps)."""
    return read_transcripts(realdata / "ami-debug" / "train.rttm")


def test_one_label_over_the_reference_speech_leaves_all_but_the_main_speaker(ami):
    for sid, ref in ami.items():
        merged = one_label(ref)
        assert {s.speaker for s in merged.segments} <= {"speech"}
        assert all(a.end < b.start for a, b in zip(merged.segments, merged.segments[1:]))  # merged: no overlap
        assert speech_seconds(merged) == pytest.approx(speech_seconds(ref))
        seconds = [speech_seconds(Transcript(sid, [s for s in ref.segments if s.speaker == spk]))
                   for spk in ref.speakers]
        no_collar = diarization_errors(ref, merged, collar=0.0)
        # the one label maps to the speaker who speaks most: every other second is an error
        assert no_collar.der.value == pytest.approx(1 - max(seconds) / no_collar.total, rel=1e-9), sid
        assert no_collar.false_alarm == 0.0


def test_baselines_equal_pyannote_on_the_one_label_annotations(ami):
    from pyannote.metrics.diarization import DiarizationErrorRate, JaccardErrorRate

    for sid, ref in list(ami.items())[:5]:
        system = Transcript(sid, [Segment(s.start + 0.3, s.end + 0.1, s.speaker) for s in ref.segments])
        found = baselines(ref, system)
        assert list(found) == list(BASELINES)
        for key, hypothesis in (("one_label_reference_speech", ref), ("one_label_system_speech", system)):
            merged = to_annotation(hypothesis)  # pyannote's own union: one label, then its support
            merged = merged.rename_labels({label: "speech" for label in merged.labels()}).support()
            der = DiarizationErrorRate(collar=0.5, skip_overlap=False)
            jer = JaccardErrorRate(collar=0.5, skip_overlap=False)
            assert found[key].der.value == der(to_annotation(ref), merged), (sid, key)
            assert found[key].jer == jer(to_annotation(ref), merged), (sid, key)


def test_scores_json_holds_baselines_and_components(ami, tmp_path):
    sessions = dict(list(ami.items())[:4])
    system = [Transcript(sid, [Segment(s.start, s.end, "A" if i % 3 else "B") for i, s in enumerate(ref.segments)])
              for sid, ref in sessions.items()]
    write_rttm(tmp_path / "ref.rttm", list(sessions.values()))
    write_rttm(tmp_path / "hyp.rttm", system)
    scores = score_files(tmp_path / "ref.rttm", tmp_path / "hyp.rttm", options=OPTIONS)
    meetings = scores["meetings"]
    for key in BASELINES:
        details = [{"diarization": m["details"]["diarization"]["baselines"][key]} for m in meetings.values()]
        ratios = [METRICS["der"].from_details(d) for d in details]
        assert scores["baselines"][key]["der"]["value"] == pytest.approx(micro(ratios).value)
        assert scores["baselines"][key]["der"]["ci_low"] <= scores["baselines"][key]["der"]["value"]
    # the same speech found: one label over the system's speech is one label over the reference speech
    for m in meetings.values():
        b = m["details"]["diarization"]["baselines"]
        assert b["one_label_system_speech"] == pytest.approx(b["one_label_reference_speech"])
    der = scores["components"]["der"]
    assert der["meetings"] == len(sessions)
    parts = der["missed_detection_s"] + der["false_alarm_s"] + der["confusion_s"]
    assert parts / der["total_s"] == pytest.approx(scores["aggregate"]["der"]["value"])
    assert scores["components"]["wer"] == {"meetings": 0, "substitutions": 0, "deletions": 0, "insertions": 0,
                                           "reference_words": 0}  # RTTM: no words, WER n/a


def test_per_speaker_errors_add_up_to_cpwer(realdata, tmp_path):
    ref = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    # every third segment given to a third, unknown speaker; every other one loses its last words
    hyp = Transcript("sample", [Segment(s.start, s.end, "X" if i % 3 == 2 else s.speaker,
                                        " ".join(s.text.split()[:3]) if i % 2 else s.text)
                                for i, s in enumerate(ref.segments)])
    cp = cpwer(ref, hyp)
    split = per_speaker_errors(ref, hyp, cp.assignment, ref)
    persons = split["persons"]
    assert set(persons) == {"Diane", "Sheila"} and split["unassigned_hypothesis_words"] > 0
    assert sum(p["errors"] for p in persons.values()) + split["unassigned_hypothesis_words"] == cp.errors
    assert sum(p["words"] for p in persons.values()) == cp.length
    for person, p in persons.items():
        assert p["errors"] == p["substitutions"] + p["deletions"] + p["insertions"] > 0
        assert p["wer"] == p["errors"] / p["words"]
        assert 0 < p["speech_s"] <= sum(s.duration for s in ref.segments if s.speaker == person) + 1e-9
    write_stm(tmp_path / "hyp.stm", [hyp])
    scored = score_files(realdata / "pyannote-sample" / "sample.stm", tmp_path / "hyp.stm", options=OPTIONS)
    details = scored["meetings"]["sample"]["details"]
    assert details["per_speaker"]["persons"] == persons
    wer = scored["components"]["wer"]
    assert (wer["substitutions"] + wer["deletions"] + wer["insertions"]) / wer["reference_words"] == \
        pytest.approx(scored["aggregate"]["wer"]["value"])


def test_score_prints_der_and_jer_against_doing_nothing(ami, tmp_path, capsys):
    from speechkit.cli import main

    sessions = dict(list(ami.items())[:2])
    write_rttm(tmp_path / "ref.rttm", list(sessions.values()))
    write_rttm(tmp_path / "hyp.rttm", [Transcript(sid, [Segment(s.start, s.end, "A") for s in ref.segments[::2]])
                                       for sid, ref in sessions.items()])
    assert main(["score", "--ref", str(tmp_path / "ref.rttm"), "--hyp", str(tmp_path / "hyp.rttm"),
                 "--out", str(tmp_path / "scores.json"), "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    scores = score_files(tmp_path / "ref.rttm", tmp_path / "hyp.rttm", options=ScoreOptions(resamples=0))
    for key in ("der", "jer"):
        metric, base = METRICS[key], scores["baselines"]
        line = (f"{metric.short} {metric.format(scores['aggregate'][key]['value'])} against doing nothing: "
                + "; ".join(f"{label} {metric.format(base[b][key]['value'])}" for b, label in BASELINES.items()))
        assert line in out.splitlines()
    # half the speech missed: one label over the system's speech misses it too
    assert base["one_label_system_speech"]["der"]["value"] > base["one_label_reference_speech"]["der"]["value"]
