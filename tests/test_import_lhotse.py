"""`speechkit import lhotse` on Lhotse manifests built with the lhotse API from ../shared/realdata.

ami-debug trn07 and trn08 are two excerpts with the same four AMI participants (speaker turns,
no words): a two-meeting series. pyannote-sample has text (STM, segment level).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml
from lhotse import Recording, RecordingSet, SupervisionSegment, SupervisionSet

from speechkit.cli import main
from speechkit.corpora.enroll import EnrollmentOptions, solo_spans
from speechkit.corpora.from_lhotse import import_lhotse
from speechkit.corpora.terms import derive_terms, read_terms
from speechkit.corpora.to_lhotse import export_lhotse
from speechkit.errors import SpeechkitError
from speechkit.io import read_transcripts
from speechkit.io.manifest import load_workspace, manifest_dict
from speechkit.io.rttm import read_rttm
from speechkit.io.stm import read_stm

SERIES = ("trn07", "trn08")
PEOPLE = ["FEE087", "MEE089", "FEE088", "MEO086"]  # in order of first speech over the series


@pytest.fixture(scope="module")
def manifests(realdata, tmp_path_factory) -> dict[str, Path]:
    """recordings.jsonl.gz / supervisions.jsonl.gz for trn07, trn08 (turns only) and sample (text)."""
    out = tmp_path_factory.mktemp("lhotse")
    ami = realdata / "ami-debug"
    turns = read_rttm(ami / "train.rttm")
    recordings = [Recording.from_file(ami / f"{rid}.wav") for rid in SERIES]
    recordings.append(Recording.from_file(realdata / "pyannote-sample" / "sample.wav"))
    sups = [SupervisionSegment(id=f"{rid}-{i:03d}", recording_id=rid, start=s.start, duration=round(s.duration, 3),
                               channel=0, speaker=s.speaker)
            for rid in SERIES for i, s in enumerate(turns[rid].segments)]
    sups += [SupervisionSegment(id=f"sample-{i:03d}", recording_id="sample", start=s.start,
                                duration=round(s.duration, 3), channel=0, text=s.text, speaker=s.speaker)
             for i, s in enumerate(read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"].segments)]
    paths = {"recordings": out / "recordings.jsonl.gz", "supervisions": out / "supervisions.jsonl.gz"}
    RecordingSet.from_recordings(recordings).to_file(paths["recordings"])
    SupervisionSet.from_segments(sups).to_file(paths["supervisions"])
    return paths


def _import(manifests, out, **kw):
    return import_lhotse(out, recordings=[manifests["recordings"]], supervisions=[manifests["supervisions"]],
                         progress=False, **kw)


@pytest.fixture(scope="module")
def series(manifests, tmp_path_factory):
    return _import(manifests, tmp_path_factory.mktemp("imp") / "ws", series=r"^(trn)0[78]$")


def test_series_becomes_a_workspace(series, realdata):
    assert series.name == "trn"
    assert [m.id for m in series.meetings] == list(SERIES)
    assert [p.id for p in series.people] == PEOPLE and all(p.name == p.id for p in series.people)
    assert series.metadata["import"]["series"]["left_out"] == ["sample"]
    assert series.metadata["import"]["references"] == {m: "speaker turns only (no text)" for m in SERIES}
    assert "placeholders" in series.metadata["import"]["dates"]
    assert series.metadata["terms"]["source"] == "none: the references have no text"
    rttm = read_rttm(realdata / "ami-debug" / "train.rttm")
    for meeting in series.meetings:
        assert meeting.reference is None  # no text: turns only, and the scorer says WER is n/a
        got = read_transcripts(meeting.rttm)[meeting.id].segments
        assert [(s.speaker, s.start, round(s.end, 3)) for s in got] == \
            [(s.speaker, s.start, round(s.end, 3)) for s in rttm[meeting.id].segments]
        assert set(meeting.attendees) == set(PEOPLE)
        original, rate = sf.read(realdata / "ami-debug" / f"{meeting.id}.wav", dtype="float32")
        imported, imported_rate = sf.read(meeting.audio, dtype="float32")
        assert imported_rate == rate == 16000 and len(imported) == len(original)
        assert np.abs(imported - original).max() < 1e-4  # 16-bit FLAC of the same samples


def test_several_series_need_select(manifests, tmp_path, realdata):
    with pytest.raises(SpeechkitError, match=r"form 2 series \(sample, trn\); pick one with --select"):
        _import(manifests, tmp_path / "ws", series=r"^([a-z]+)")
    assert not (tmp_path / "ws").exists()
    ws = _import(manifests, tmp_path / "ws", series=r"^([a-z]+)", select="sample")
    [meeting] = ws.meetings
    ref = read_transcripts(meeting.reference)["sample"]
    stm = read_stm(realdata / "pyannote-sample" / "sample.stm")
    assert [(s.speaker, s.start, s.text) for s in ref.segments] == \
        [(s.speaker, s.start, s.text) for s in stm["sample"].segments]
    assert ref.segments[0].speaker_name == "Diane"
    assert ws.metadata["import"]["references"] == {"sample": "segment-level words"}


def test_enrollments_cut_from_solo_speech(manifests, tmp_path, realdata):
    ws = _import(manifests, tmp_path / "ws", series="^(trn)", enrollment=EnrollmentOptions("first", min_seconds=1.5))
    assert [m.enrollment_only for m in ws.meetings] == [True, False]
    assert [m.id for m in ws.scored_meetings] == ["trn08"]
    record = ws.metadata["enrollment"]
    assert record["meeting"] == "trn07" and set(record["persons"]) == {"FEE087", "MEO086"}
    assert set(record["not_enrolled"]) == {"MEE089", "FEE088"}  # 0.4 s and 0.2 s of solo speech
    audio, rate = sf.read(realdata / "ami-debug" / "trn07.wav", dtype="float32")
    solo = solo_spans(read_rttm(realdata / "ami-debug" / "train.rttm")["trn07"])
    for pid, cut in record["persons"].items():
        [clip] = ws.person(pid).enrollments
        samples, _ = sf.read(clip, dtype="float32")
        assert len(samples) / rate == pytest.approx(cut["seconds"], abs=0.01) and cut["seconds"] >= 1.5
        first_start, first_end = cut["spans"][0]
        assert np.abs(samples[:100] - audio[round(first_start * rate):][:100]).max() < 1e-4
        for start, end in cut["spans"]:  # nobody else speaks in a cut span
            assert any(s - 1e-6 <= start and end <= e + 1e-6 for s, e in solo[pid])
    manifest = yaml.safe_load(ws.manifest_path.read_text())
    assert manifest["meetings"][0]["enrollment_only"] is True and "enrollment_only" not in manifest["meetings"][1]


def test_export_then_import_gives_back_the_workspace(manifests, tmp_path):
    first = _import(manifests, tmp_path / "a", series="^(trn)", enrollment=EnrollmentOptions("trn07", 1.5))
    written = export_lhotse(first, tmp_path / "lhotse")
    again = import_lhotse(tmp_path / "b", cuts=[written["cuts"]], progress=False)
    a, b = manifest_dict(first), manifest_dict(again)
    assert a["metadata"].pop("import")["from"] == b["metadata"].pop("import")["from"] == "lhotse"
    assert a == b
    for rel in ["enrollments/FEE087.flac", "meetings/trn08/audio.flac", "meetings/trn08/reference.rttm"]:
        assert (first.root / rel).read_bytes() == (again.root / rel).read_bytes(), rel


def test_failed_import_writes_no_workspace(manifests, tmp_path):
    bad = tmp_path / "supervisions.jsonl.gz"
    SupervisionSet.from_segments([SupervisionSegment(id="x", recording_id="trn99", start=0, duration=1,
                                                     speaker="A")]).to_file(bad)
    code = main(["import", "lhotse", "--recordings", str(manifests["recordings"]), "--supervisions",
                 str(manifests["supervisions"]), str(bad), "--out", str(tmp_path / "ws")])
    assert code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["supervisions.jsonl.gz"]  # no workspace, no temp folder


def test_cli_errors_are_one_line(manifests, tmp_path, capsys):
    args = ["import", "lhotse", "--recordings", str(manifests["recordings"]), "--supervisions",
            str(manifests["supervisions"])]
    assert main(args + ["--out", str(tmp_path / "ws"), "--series", "^(trn)", "--enroll-from", "trn09"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "speechkit import: error: --enroll-from 'trn09': no such meeting in the series (trn07, trn08)"
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert main(args + ["--out", str(tmp_path / "full")]) == 1
    assert "already exists and is not an empty folder" in capsys.readouterr().err
    assert main(args + ["--out", str(tmp_path / "ws"), "--channel", "3"]) == 1
    assert "has 1 channel(s); --channel 3 is out of range" in capsys.readouterr().err
    assert not (tmp_path / "ws").exists()


def test_terms_derived_from_two_meetings_only(realdata):
    """Rare words spoken in both halves of the real sample count; words of one half do not."""
    segments = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"].segments
    halves = {"a": " ".join(s.text for s in segments if s.end <= 17.8),
              "b": " ".join(s.text for s in segments if s.start >= 17.7)}
    terms = derive_terms(halves, rare_zipf=5.0)
    assert {"chicago", "jersey"} <= set(terms.jargon)  # in both halves
    assert "texas" not in terms.jargon and "yankee" not in terms.jargon  # one half only
    assert derive_terms(halves).jargon == ()  # default threshold (Zipf 4): these are common words


def test_user_term_lists(tmp_path):
    text = tmp_path / "terms.txt"
    text.write_text("# product names\npacs.008\nKafka\n42\n3.5%\nMarch 14\n$4.2m\n")
    assert read_terms(text).numbers == ("42", "3.5%", "March 14", "$4.2m")
    assert read_terms(text).jargon == ("pacs.008", "Kafka")
    (tmp_path / "terms.yaml").write_text("numbers: [42]\njargon: [P99]\n")
    assert read_terms(tmp_path / "terms.yaml").numbers == ("42",)


@pytest.mark.decodes
@pytest.mark.slow
def test_recipe_all_levels_on_the_imported_series(manifests, tmp_path, capsys):
    """Import trn07, trn08 and sample, run L1-L3 end to end and score what the references hold."""
    ws = tmp_path / "ws"
    assert main(["import", "lhotse", "--recordings", str(manifests["recordings"]), "--supervisions",
                 str(manifests["supervisions"]), "--out", str(ws)]) == 0
    assert main(["recipe", "--level", "all", "--workspace", str(ws), "--out", str(tmp_path / "runs")]) == 0
    for level in ("l1", "l2", "l3"):
        scores = json.loads((tmp_path / "runs" / level / "scores.json").read_text())
        meetings = scores["meetings"]
        assert list(meetings) == ["sample", "trn07", "trn08"]
        for mid in meetings:
            assert meetings[mid]["der"]["value"] is not None
        assert meetings["sample"]["wer"]["value"] is not None
        for mid in SERIES:  # turns only: word metrics n/a with the reason, never 0
            assert meetings[mid]["wer"]["value"] is None
            assert meetings[mid]["details"]["not_applicable"]["wer"] == "the meeting has no reference transcript"
            assert meetings[mid]["details"]["speakers"]["basis"] == "seconds"
        consistency = scores["totals"]["speaker_consistency"]
        assert consistency["denominator"] == 2 * len(PEOPLE)  # four people, two meetings, both orders
        assert scores["aggregate"]["speaker_consistency"]["value"] is not None
    assert (tmp_path / "runs" / "comparison.md").is_file()


@pytest.mark.decodes
@pytest.mark.slow
def test_enrollment_meeting_is_neither_run_nor_scored(manifests, tmp_path):
    ws = tmp_path / "ws"
    assert main(["import", "lhotse", "--recordings", str(manifests["recordings"]), "--supervisions",
                 str(manifests["supervisions"]), "--out", str(ws), "--series", "^(trn)", "--enroll-from", "first",
                 "--enroll-min-seconds", "1.5"]) == 0
    assert load_workspace(ws).meetings[0].enrollment_only
    run = tmp_path / "run"
    assert main(["recipe", "--level", "3", "--workspace", str(ws), "--out", str(run)]) == 0
    assert sorted(p.name for p in (run / "transcripts").glob("*.json")) == ["trn08.json"]
    assert list(json.loads((run / "scores.json").read_text())["meetings"]) == ["trn08"]
    context = json.loads((run / "context" / "trn08.json").read_text())
    enrolled = next(a for a in context["additions"] if a["source"] == "voice enrollments of the invited")
    assert enrolled["items"] == 2


def test_turns_only_references_score_der_and_consistency(series, tmp_path):
    """Hypothesis = the reference turns, named: DER 0 and consistency 1; unnamed labels: consistency 0."""
    from speechkit.io.seglst import write_seglst
    from speechkit.scoring import ScoreOptions, score_workspace
    from speechkit.transcript import Transcript

    for named in (True, False):
        run = tmp_path / ("named" if named else "labels")
        for meeting in series.meetings:
            turns = read_transcripts(meeting.rttm)[meeting.id]
            write_seglst(run / f"{meeting.id}.json", [Transcript(meeting.id, [
                s.with_speaker(speaker=f"SPK_{s.speaker}", speaker_name=s.speaker if named else None)
                for s in turns.segments])])
        scores = score_workspace(series, run, ScoreOptions(der_from_segments=True))  # the segments are the turns
        assert scores["aggregate"]["der"]["value"] == 0.0
        assert scores["aggregate"]["speaker_consistency"]["value"] == (1.0 if named else 0.0)
        assert scores["totals"]["speaker_consistency"]["denominator"] == 8
        assert scores["not_applicable"]["wer"] == "the meeting has no reference transcript"
        assert scores["aggregate"]["named_speaker_accuracy"]["value"] is None


def test_enrollment_only_meeting_is_not_scored_and_is_validated(manifests, tmp_path):
    from speechkit.errors import ManifestError
    from speechkit.io.seglst import write_seglst
    from speechkit.scoring import score_workspace

    ws = _import(manifests, tmp_path / "ws", series="^(trn)", enrollment=EnrollmentOptions("trn07", 1.5))
    turns = read_transcripts(ws.meetings[1].rttm)["trn08"]
    write_seglst(tmp_path / "run" / "trn08.json", [turns])  # no hypothesis for trn07: none is needed
    assert list(score_workspace(ws, tmp_path / "run")["meetings"]) == ["trn08"]
    manifest = ws.manifest_path.read_text()
    ws.manifest_path.write_text(manifest.replace("enrollment_only: true", "enrollment_only: 'yes'"))
    with pytest.raises(ManifestError, match=r"meetings\[0\].enrollment_only: expected true or false, got 'yes'"):
        load_workspace(ws.root)
    data = yaml.safe_load(manifest)
    data["meetings"][1]["enrollment_only"] = True
    ws.manifest_path.write_text(yaml.safe_dump(data))
    with pytest.raises(ManifestError, match=r"meetings: every meeting is enrollment_only"):
        load_workspace(ws.root)


def test_ami_series_preset_and_date_order(manifests, tmp_path):
    from lhotse import CutSet
    from lhotse.utils import fastcopy

    from speechkit.corpora.series import compile_pattern, series_key

    ami = compile_pattern("ami")
    assert [series_key(ami, rid) for rid in ("ES2002a", "ES2002d", "IS1009c", "trn07")] == \
        ["ES2002", "ES2002", "IS1009", None]
    recordings = RecordingSet.from_file(manifests["recordings"])
    supervisions = SupervisionSet.from_file(manifests["supervisions"])
    dates = {"trn07": "2024-05-02", "trn08": "2024-05-01T09:30", "sample": "2024-05-03"}
    cuts = CutSet.from_cuts(fastcopy(c, custom={"date": dates[c.recording_id]})
                            for c in CutSet.from_manifests(recordings=recordings, supervisions=supervisions))
    cuts.to_file(tmp_path / "cuts.jsonl.gz")
    ws = import_lhotse(tmp_path / "ws", cuts=[tmp_path / "cuts.jsonl.gz"], order="date", progress=False)
    assert [(m.id, m.date.isoformat()) for m in ws.meetings] == \
        [("trn08", "2024-05-01T09:30:00"), ("trn07", "2024-05-02"), ("sample", "2024-05-03")]
    with pytest.raises(SpeechkitError, match=r"meeting 'trn07' is dated 2024-05-02, before 'sample' \(2024-05-03\), "
                                              "but comes after it in id order; use --order date"):
        import_lhotse(tmp_path / "ws2", cuts=[tmp_path / "cuts.jsonl.gz"], progress=False)


def test_channel_choice_on_a_stereo_recording(realdata, tmp_path):
    """faster-whisper's stereo_diarization.wav: one speaker per channel."""
    path = realdata / "faster-whisper" / "stereo_diarization.wav"
    recording = Recording.from_file(path, recording_id="stereo")
    RecordingSet.from_recordings([recording]).to_file(tmp_path / "r.jsonl.gz")
    SupervisionSet.from_segments([
        SupervisionSegment(id=f"s{c}", recording_id="stereo", start=0, duration=round(recording.duration, 3),
                           channel=c, speaker=f"channel{c}") for c in (0, 1)]).to_file(tmp_path / "s.jsonl.gz")
    stereo, rate = sf.read(path, dtype="float32")
    assert stereo.ndim == 2 and rate == 16000
    for channel, expected in ((0, stereo[:, 0]), (1, stereo[:, 1]), (None, stereo.mean(axis=1))):
        ws = import_lhotse(tmp_path / f"ws{channel}", recordings=[tmp_path / "r.jsonl.gz"],
                           supervisions=[tmp_path / "s.jsonl.gz"], channel=channel, progress=False)
        got, _ = sf.read(ws.meetings[0].audio, dtype="float32")
        assert len(got) == len(expected) and np.abs(got - expected).max() < 1e-4
        assert ws.metadata["import"]["channel"] == ("mix" if channel is None else channel)
