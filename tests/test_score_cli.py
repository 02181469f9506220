"""`speechkit score` end to end: a tiny workspace with two meetings, and single pair mode."""
from __future__ import annotations

import json
import wave
from pathlib import Path

import jiwer
import pytest

from speechkit.cli import main
from speechkit.io import write_ctm, write_seglst
from speechkit.metrics.normalize import normalize
from speechkit.scoring.catalogue import catalogue
from speechkit.transcript import Segment, Transcript, Word

NOTES_METRICS, QUESTION_METRICS = catalogue().family("notes").keys, catalogue().family("questions").keys
JUDGED_METRICS = catalogue().family("judged").keys

MANIFEST = """\
format: speechkit-workspace/1
name: tiny
people:
  - {id: p1, name: Robert Smith, nicknames: [Bob]}
  - {id: p2, name: Alice Jones}
  - {id: p3, name: Carol White}
terms:
  numbers: ["12%", "P99", "$4.2 million"]
  jargon: [pacs.008, Kubernetes]
meetings:
  - {id: m1, date: 2026-03-02, audio: audio.wav, reference: m1.ref.json}
  - id: m2
    date: 2026-03-04
    audio: audio.wav
    reference: m2.ref.json
    terms: {numbers: ["12%"], jargon: [Kubernetes]}
"""


def seg(speaker: str, start: float, text: str, name: str | None = None, step: float = 0.5) -> Segment:
    words = [Word(w, start + i * step, start + (i + 1) * step) for i, w in enumerate(text.split())]
    return Segment.from_words(words, speaker=speaker, speaker_name=name)


REF = {
    "m1": [seg("p1", 0.0, "our p ninety nine latency rose twelve percent"),
           seg("p2", 5.0, "we should move pacs.008 to kubernetes")],
    "m2": [seg("p1", 0.0, "kubernetes costs went up twelve percent"),
           seg("p2", 3.5, "thanks bob"), seg("p3", 6.0, "sure")],
}
HYP = {
    "m1": [seg("SPEAKER_00", 0.0, "our p ninety nine latency rose twelve percent", "Bob"),
           seg("SPEAKER_01", 5.0, "we should move packs zero zero eight to kubernetes", step=3 / 8)],
    "m2": [seg("SPEAKER_00", 0.0, "kubernetes costs went up twelve percent", "Bob"),
           seg("SPEAKER_01", 3.5, "thanks bob"), seg("SPEAKER_02", 6.0, "sure", "carol")],
}


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path]:
    ws, run = tmp_path / "ws", tmp_path / "run"
    ws.mkdir()
    (ws / "workspace.yaml").write_text(MANIFEST, encoding="utf-8")
    with wave.open(str(ws / "audio.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(b"\0\0" * 16000)
    for mid, segs in REF.items():
        write_seglst(ws / f"{mid}.ref.json", [Transcript(mid, segs)])
    write_seglst(run / "m1.json", [Transcript("m1", HYP["m1"])])
    write_seglst(run / "m2.seglst.json", [Transcript("m2", HYP["m2"])])
    return ws, run


def test_workspace_scores(workspace, capsys):
    ws, run = workspace
    assert main(["score", "--workspace", str(ws), "--run", str(run), "--der-from-segments"]) == 0
    out = capsys.readouterr().out
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))

    keys = {"wer", "number_recall", "term_recall", "speaker_consistency", "named_speaker_accuracy",
            "der", "jer", "cpwer", "tcpwer", *NOTES_METRICS, *QUESTION_METRICS, *JUDGED_METRICS}
    assert scores["schema"] == "speechkit.scores/1"
    assert set(scores["aggregate"]) == keys
    assert all(set(v) == {"value", "ci_low", "ci_high"} for v in scores["aggregate"].values())
    assert list(scores["meetings"]) == ["m1", "m2"]
    assert set(scores["meetings"]["m1"]) == keys | {"details"}
    assert scores["settings"]["der_collar_s"] == 0.25 and scores["settings"]["tcpwer_collar_s"] == 5.0
    # the workspace has no gold notes or questions, the run nothing judged: only those metrics are n/a
    assert set(scores["not_applicable"]) == {*NOTES_METRICS, *QUESTION_METRICS, *JUDGED_METRICS}
    assert {scores["not_applicable"][k] for k in NOTES_METRICS} == {
        "no gold notes for this meeting (a workspace's meetings/<id>/notes.json)"}
    agg, m1, m2 = scores["aggregate"], scores["meetings"]["m1"], scores["meetings"]["m2"]

    # WER: m1 has one substitution (pacs.008 -> packs) and one insertion (008) in 12 words; m2 is exact
    ref1 = " ".join(s.text for s in REF["m1"])
    hyp1 = " ".join(s.text for s in HYP["m1"])
    assert m1["wer"]["value"] == pytest.approx(jiwer.wer(normalize(ref1), normalize(hyp1))) == pytest.approx(2 / 12)
    assert m1["details"]["wer"]["substitutions"] == 1 and m1["details"]["wer"]["insertions"] == 1
    assert [op for r, _, op in m1["details"]["wer"]["pairs"] if r == "pacs.008"] == ["substitute"]
    assert m2["wer"]["value"] == 0.0
    assert agg["wer"]["value"] == pytest.approx(2 / 20)  # 12 + 8 normalised reference words
    assert agg["wer"]["ci_low"] <= agg["wer"]["value"] <= agg["wer"]["ci_high"]

    # terms: m1 by reference scan (P99, 12%; pacs.008, Kubernetes), m2 from the manifest
    assert m1["details"]["number_recall"]["spoken"] == ["12%", "P99"]
    assert m1["details"]["term_recall"]["missed"] == ["pacs.008"]
    assert m1["term_recall"]["value"] == 0.5 and m2["term_recall"]["value"] == 1.0
    assert m2["details"]["term_recall"]["source"] == "manifest"
    assert agg["number_recall"]["value"] == 1.0 and agg["term_recall"]["value"] == pytest.approx(2 / 3)

    # speakers: p1 is "Bob" in both meetings, p2 an unnamed SPEAKER_01 in both, p3 only in m2
    assert m1["details"]["speakers"]["persons"]["p2"]["name"] == "m1:SPEAKER_01"
    assert m1["speaker_consistency"]["value"] == 0.5 and agg["speaker_consistency"]["value"] == 0.5
    # named: m1 8 of 14 words (Bob), m2 6 (Bob) + 1 (carol) of 9
    assert m1["named_speaker_accuracy"]["value"] == pytest.approx(8 / 14)
    assert agg["named_speaker_accuracy"]["value"] == pytest.approx(15 / 23)

    # no RTTM in the run: DER/JER from the transcript segments, as asked
    assert 0 <= agg["der"]["value"] < 0.2 and agg["cpwer"]["value"] == pytest.approx(2 / 20)
    assert m2["der"]["ci_low"] is None and m2["details"]["diarization"]["hypothesis"] == "transcript segments"
    assert scores["settings"]["der_from_segments"] is True

    # the table: a row per meeting, the aggregate and its CI, the collar
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["meeting", "WER", "cpWER", "tcpWER"]
    assert any(line.startswith("m1 ") and "0.167" in line for line in lines)
    assert any(line.startswith("aggregate") for line in lines)
    assert any(line.startswith("95% CI") for line in lines)
    assert "collar 0.25 s" in out
    assert "n=2 meeting(s) < 5: CIs over so few meetings are too narrow to mean much" in out


def test_options_reach_the_settings(workspace, tmp_path):
    ws, run = workspace
    out = tmp_path / "elsewhere" / "s.json"
    assert main(["score", "--workspace", str(ws), "--run", str(run), "--out", str(out), "--collar", "0.1",
                 "--seed", "3", "--resamples", "50"]) == 0
    settings = json.loads(out.read_text(encoding="utf-8"))["settings"]
    assert settings["der_collar_s"] == 0.1 and settings["bootstrap"]["seed"] == 3
    assert settings["bootstrap"]["resamples"] == 50
    assert not (run / "scores.json").exists()


def test_missing_hypothesis_names_the_file(workspace, capsys):
    ws, run = workspace
    (run / "m2.seglst.json").unlink()
    assert main(["score", "--workspace", str(ws), "--run", str(run)]) == 1
    err = capsys.readouterr().err
    assert str(run / "m2.json") in err and "'m2'" in err
    assert not (run / "scores.json").exists()


def test_unknown_reference_speaker_is_an_error(workspace, capsys):
    ws, run = workspace
    write_seglst(ws / "m2.ref.json", [Transcript("m2", [seg("p9", 0.0, "hello")])])
    assert main(["score", "--workspace", str(ws), "--run", str(run)]) == 1
    err = capsys.readouterr().err
    assert "m2.ref.json" in err and "'p9'" in err


def test_pair_mode_reports_what_a_format_lacks(workspace, tmp_path, capsys):
    ws, _ = workspace
    ctm = tmp_path / "m1.ctm"
    write_ctm(ctm, [Transcript("m1", HYP["m1"])])
    out = tmp_path / "pair.json"
    assert main(["score", "--ref", str(ws / "m1.ref.json"), "--hyp", str(ctm), "--out", str(out)]) == 0
    table = capsys.readouterr().out
    scores = json.loads(out.read_text(encoding="utf-8"))
    agg = scores["aggregate"]
    assert agg["wer"]["value"] == pytest.approx(2 / 12)
    for key in ("der", "jer", "cpwer", "tcpwer", "named_speaker_accuracy"):
        assert agg[key]["value"] is None and "no speakers (CTM)" in scores["not_applicable"][key]
    assert "no term set" in scores["not_applicable"]["term_recall"]
    assert "n/a" in table


def test_pair_mode_sessions(realdata, tmp_path, capsys):
    stm = realdata / "pyannote-sample" / "sample.stm"
    assert main(["score", "--ref", str(stm), "--hyp", str(stm), "--session", "nope"]) == 1
    assert "no session 'nope'" in capsys.readouterr().err
    assert main(["score", "--ref", str(stm), "--hyp", str(stm), "--session", "sample"]) == 0
    assert "sample " in capsys.readouterr().out


def test_mode_options_are_checked(capsys):
    assert main(["score", "--ref", "a.stm"]) == 1
    assert main(["score", "--workspace", "w", "--ref", "a.stm", "--hyp", "b.stm"]) == 1
    assert "either --workspace and --run, or --ref and --hyp" in capsys.readouterr().err


def test_help_describes_every_option(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = capsys.readouterr().out
    for option in ("--workspace", "--run", "--ref", "--hyp", "--session", "--out", "--collar", "--tcp-collar",
                   "--seed", "--resamples", "--der-from-segments"):
        assert option in text
    assert "EACH side" in text


def test_score_workspace_api_takes_a_loaded_workspace(workspace, tmp_path):
    from speechkit.io.manifest import load_workspace
    from speechkit.scoring import score_workspace

    ws, run = workspace
    out = tmp_path / "api" / "scores.json"
    scores = score_workspace(load_workspace(ws), run, out=out)
    assert json.loads(out.read_text(encoding="utf-8")) == scores
    assert scores["aggregate"]["term_recall"]["value"] == pytest.approx(2 / 3)


def test_der_scores_the_runs_speaker_turns_where_it_wrote_them(workspace):
    """A run's RTTM (its diarization) is what DER and JER score; a meeting without one has them n/a
    with the reason, or scored on its transcript segments when asked, and the details say which."""
    from speechkit.io import write_rttm
    from speechkit.scoring import ScoreOptions, score_workspace

    ws, run = workspace
    segments = ScoreOptions(der_from_segments=True)
    transcript_only = score_workspace(ws, run, segments)["meetings"]
    # m1's turns: one speaker throughout, where the transcript has two
    write_rttm(run / "m1.rttm", [Transcript("m1", [Segment(0.0, 8.0, speaker="SPEAKER_00")], has_words=False)])
    scores = score_workspace(ws, run, segments)["meetings"]
    m1, m2 = scores["m1"]["details"]["diarization"], scores["m2"]["details"]["diarization"]
    assert (m1["hypothesis"], m2["hypothesis"]) == ("speaker turns (RTTM)", "transcript segments")
    assert transcript_only["m1"]["details"]["diarization"]["confusion_s"] == 0.0
    assert m1["confusion_s"] > 2.0  # p2's turn (3 s) is given p1's label
    assert scores["m2"]["der"] == transcript_only["m2"]["der"]
    assert scores["m1"]["wer"] == transcript_only["m1"]["wer"]  # words still come from the SegLST
    by_default = score_workspace(ws, run)
    assert by_default["meetings"]["m1"]["der"] == scores["m1"]["der"]
    for key in ("der", "jer"):
        assert by_default["meetings"]["m2"][key]["value"] is None
        reason = by_default["meetings"]["m2"]["details"]["not_applicable"][key]
        assert reason.startswith("no hypothesis speaker turns") and "--der-from-segments" in reason
    assert "diarization" not in by_default["meetings"]["m2"]["details"]
    assert by_default["aggregate"]["der"]["value"] == scores["m1"]["der"]["value"]  # m1's turns alone


def _pair(realdata, tmp_path, capsys, hyp: Path, *options: str) -> dict:
    out = tmp_path / f"{hyp.stem}{len(options)}.json"
    assert main(["score", "--ref", str(realdata / "pyannote-sample" / "sample.stm"), "--hyp", str(hyp),
                 "--out", str(out), "--resamples", "0", *options]) == 0
    scores = json.loads(out.read_text(encoding="utf-8"))
    scores["table"] = capsys.readouterr().out
    return scores


def test_der_comes_from_speaker_turns_never_from_word_segments_unless_asked(realdata, tmp_path, capsys):
    """The pyannote sample's reference STM against transcripts of it: a SegLST and an STM hypothesis
    (word segments) get DER/JER n/a with the reason, its RTTM (speaker turns) a DER figure;
    --der-from-segments scores the segments, as the details say."""
    from speechkit.io import read_rttm, read_stm, write_stm

    ref = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    # the reference's segments, each cut after its first word: word segments whose turns leave gaps
    cut = [Segment.from_words([Word(s.text.split()[0], s.start, s.start + 0.3)], speaker=f"SPK_{s.speaker}")
           for s in ref.segments]
    write_seglst(tmp_path / "words.json", [Transcript("sample", cut)])
    write_stm(tmp_path / "words.stm", [Transcript("sample", cut)])
    rttm = realdata / "pyannote-sample" / "sample.rttm"
    assert read_rttm(rttm)["sample"].segments  # the system's turns: DER is scored on them
    assert _pair(realdata, tmp_path, capsys, rttm)["aggregate"]["der"]["value"] is not None

    for hyp in (tmp_path / "words.json", tmp_path / "words.stm"):
        scores = _pair(realdata, tmp_path, capsys, hyp)
        for key in ("der", "jer"):
            assert scores["aggregate"][key]["value"] is None
            assert scores["not_applicable"][key].startswith("no hypothesis speaker turns")
        assert "n/a DER: no hypothesis speaker turns" in scores["table"]
        asked = _pair(realdata, tmp_path, capsys, hyp, "--der-from-segments")
        assert asked["meetings"]["sample"]["details"]["diarization"]["hypothesis"] == "transcript segments"
        assert asked["aggregate"]["der"]["value"] > 0.5  # most speech lies outside the one-word segments
        assert asked["settings"]["der_from_segments"] is True


def test_named_accuracy_needs_a_hypothesis_that_names_someone(realdata, tmp_path, capsys):
    """A SegLST hypothesis with labels only gets named-speaker accuracy and consistency n/a with the
    reason, not a foregone 0.000; the same hypothesis naming the speakers is scored (1.0, as the
    reference names them)."""
    from speechkit.io import read_stm

    ref = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    for named in (False, True):
        segs = [s.with_speaker(speaker=f"SPEAKER_{s.speaker}", speaker_name=s.speaker if named else None)
                for s in ref.segments]
        write_seglst(tmp_path / f"named{named}.json", [Transcript("sample", segs)])
        scores = _pair(realdata, tmp_path, capsys, tmp_path / f"named{named}.json")
        accuracy = scores["aggregate"]["named_speaker_accuracy"]["value"]
        if named:
            assert accuracy == 1.0 and "named_speaker_accuracy" not in scores["not_applicable"]
        else:
            assert accuracy is None and scores["aggregate"]["speaker_consistency"]["value"] is None
            assert scores["not_applicable"]["named_speaker_accuracy"].startswith("the hypothesis names no speaker")
            assert "n/a NamedAcc: the hypothesis names no speaker" in scores["table"]
        assert scores["aggregate"]["wer"]["value"] == 0.0  # the words are scored either way
