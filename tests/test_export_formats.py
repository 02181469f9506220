"""`speechkit export seglst|rttm`: a workspace's references and a run's hypotheses as one file each,
scored back by `speechkit score` and read by meeteval."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from speechkit.cli import main
from speechkit.io import read_rttm, read_seglst, read_stm, write_rttm, write_seglst
from speechkit.scoring import ScoreOptions, score_files, score_workspace
from speechkit.transcript import Segment, Transcript

OPTIONS = ScoreOptions(resamples=0)


def _hypothesis(ref: Transcript, shift: float) -> tuple[Transcript, Transcript]:
    """A system's output for ``ref``: its words with every 4th left out, labelled and named, and its
    speaker turns, late by ``shift`` seconds."""
    segments, turns = [], []
    for k, s in enumerate(ref.segments):
        words = [w for i, w in enumerate(s.text.split()) if (i + k) % 4]
        segments.append(Segment(s.start, s.end, f"SPK_{s.speaker}", " ".join(words), speaker_name=s.speaker))
        turns.append(Segment(s.start + shift, s.end + shift, f"SPK_{s.speaker}"))
    return Transcript(ref.session_id, segments), Transcript(ref.session_id, turns, has_words=False)


@pytest.fixture
def series(tmp_path, make_real_workspace):
    """The real two-meeting workspace plus m3, a meeting with speaker turns only (an RTTM), and a run
    over the three (transcripts/<meeting>.json and .rttm, as a run writes them)."""
    ws = make_real_workspace(tmp_path / "ws")
    manifest = yaml.safe_load((ws / "workspace.yaml").read_text())
    m1 = read_stm(ws / "m1.stm")["m1"]
    write_rttm(ws / "m3.rttm", [Transcript("m3", m1.segments, has_words=False)])
    manifest["meetings"].append({"id": "m3", "date": "2026-03-09", "audio": "audio/m1.wav", "rttm": "m3.rttm"})
    (ws / "workspace.yaml").write_text(yaml.safe_dump(manifest))
    run = tmp_path / "run"
    for mid, ref in (("m1", m1), ("m2", read_stm(ws / "m2.stm")["m2"]), ("m3", Transcript("m3", m1.segments))):
        words, turns = _hypothesis(ref, 0.6)  # past the 0.25 s collar
        write_seglst(run / "transcripts" / f"{mid}.json", [words])
        write_rttm(run / "transcripts" / f"{mid}.rttm", [turns])
    return ws, run


def _export(capsys, fmt: str, source: str, path: Path, out: Path) -> str:
    assert main(["export", fmt, source, str(path), "--out", str(out)]) == 0
    return capsys.readouterr().out


def test_exported_files_score_as_the_workspace_scores(series, tmp_path, capsys):
    """The exported reference turns score DER 0 against the references; the exported hypotheses
    against the exported references give the figures `score --workspace --run` gives."""
    ws, run = series
    out = tmp_path / "out"
    printed = _export(capsys, "rttm", "--workspace", ws, out)
    assert f"exported 3 session(s) -> {out / 'reference.rttm'}" in printed
    printed = _export(capsys, "seglst", "--workspace", ws, out)
    assert "left out m3: no reference transcript" in printed  # turns only: no words for SegLST
    _export(capsys, "rttm", "--run", run, out)
    _export(capsys, "seglst", "--run", run, out)
    assert sorted(p.name for p in out.iterdir()) == ["hypothesis.json", "hypothesis.rttm",
                                                     "reference.json", "reference.rttm"]
    assert sorted(read_rttm(out / "reference.rttm")) == ["m1", "m2", "m3"]
    assert sorted(read_seglst(out / "reference.json")) == ["m1", "m2"]

    for mid in ("m1", "m2"):  # the reference turns are the references' own
        turns = score_files(ws / f"{mid}.stm", out / "reference.rttm", session=mid, options=OPTIONS)
        assert turns["aggregate"]["der"]["value"] == 0.0
    turns = score_files(ws / "m3.rttm", out / "reference.rttm", session="m3", options=OPTIONS)
    assert turns["aggregate"]["der"]["value"] == 0.0

    workspace = score_workspace(ws, run, OPTIONS)
    diarization = score_files(out / "reference.rttm", out / "hypothesis.rttm", options=OPTIONS)
    words = score_files(out / "reference.json", out / "hypothesis.json", session="m1", options=OPTIONS)
    for mid in ("m1", "m2", "m3"):
        der = workspace["meetings"][mid]["der"]["value"]
        assert der > 0.05 and diarization["meetings"][mid]["der"]["value"] == pytest.approx(der, abs=1e-9)
    assert words["meetings"]["m1"]["cpwer"] == workspace["meetings"]["m1"]["cpwer"]
    assert words["meetings"]["m1"]["wer"]["value"] > 0.1


def test_exported_seglst_is_read_by_meeteval(series, tmp_path, capsys):
    """meeteval reads both files; its cpWER counts exactly the words the run left out."""
    from meeteval.io import SegLST
    from meeteval.wer import cpwer

    ws, run = series
    out = tmp_path / "out"
    _export(capsys, "seglst", "--workspace", ws, out)
    _export(capsys, "seglst", "--run", run, out)
    reference, hypothesis = SegLST.load(out / "reference.json"), SegLST.load(out / "hypothesis.json")
    assert reference.unique("session_id") == {"m1", "m2"}
    assert reference.unique("speaker") == {"p_diane", "p_sheila"}  # person ids
    assert hypothesis.unique("session_id") == {"m1", "m2", "m3"}
    hypothesis = hypothesis.filter(lambda s: s["session_id"] != "m3")
    results = cpwer(reference, hypothesis)
    for mid in ("m1", "m2"):
        ref = read_stm(ws / f"{mid}.stm")[mid]
        spoken = sum(len(s.text.split()) for s in ref.segments)
        dropped = spoken - sum(len(s.text.split()) for s in _hypothesis(ref, 0.0)[0].segments)
        assert (results[mid].length, results[mid].errors, results[mid].deletions) == (spoken, dropped, dropped)
        assert results[mid].insertions == results[mid].substitutions == 0


def test_bad_sources_and_outputs_are_one_line_errors(series, tmp_path, capsys):
    ws, run = series
    for rttm in (run / "transcripts").glob("*.rttm"):
        rttm.unlink()
    out = tmp_path / "out"
    assert main(["export", "rttm", "--run", str(run), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"speechkit export: error: {run / 'transcripts'}: no hypotheses to export")
    assert "speaker turns" in err and err.count("\n") == 1 and not out.exists()

    transcripts = run / "transcripts"
    write_seglst(transcripts / "again.json", [read_seglst(transcripts / "m1.json")["m1"]])
    assert main(["export", "seglst", "--run", str(run), "--out", str(out)]) == 1
    assert "session 'm1' is also in" in capsys.readouterr().err and not out.exists()

    (tmp_path / "file").write_text("")
    assert main(["export", "seglst", "--workspace", str(ws), "--out", str(tmp_path / "file")]) == 1
    assert "exists and is not a folder" in capsys.readouterr().err
    assert main(["export", "rttm", "--workspace", str(tmp_path / "nowhere"), "--out", str(out)]) == 1
    assert capsys.readouterr().err.startswith("speechkit export: error: ")

    # the output never replaces a file read: a hypothesis folder holding a meeting named "hypothesis"
    (transcripts / "again.json").rename(transcripts / "hypothesis.json")
    (transcripts / "m1.json").unlink()
    before = (transcripts / "hypothesis.json").read_bytes()
    assert main(["export", "seglst", "--run", str(transcripts), "--out", str(transcripts)]) == 1
    assert "hypothesis.json" in capsys.readouterr().err
    assert (transcripts / "hypothesis.json").read_bytes() == before


def test_export_writes_the_same_bytes_twice(series, tmp_path, capsys):
    ws, run = series
    for n in (1, 2):
        _export(capsys, "rttm", "--workspace", ws, tmp_path / str(n))
        _export(capsys, "seglst", "--run", run, tmp_path / str(n))
    for name in ("reference.rttm", "hypothesis.json"):
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes()
    assert json.loads((tmp_path / "1" / "hypothesis.json").read_text())[0]["speaker_name"] == "p_diane"
