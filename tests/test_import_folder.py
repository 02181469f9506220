"""`speechkit import folder`: a user's folder of real recordings, references and a people CSV.

The folder is built in a temporary directory from ../shared/realdata (audio linked, not copied):
pyannote's sample with its STM (words), ami-debug trn07/trn08 with an RTTM (speaker turns).
"""
from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf

from speechkit.cli import main
from speechkit.corpora.folder import import_folder
from speechkit.errors import FormatError
from speechkit.io import read_transcripts
from speechkit.io.seglst import write_seglst
from speechkit.io.stm import read_stm

PEOPLE_CSV = """id,name,nicknames,enrollments
Diane,Diane Smith,Di,clips/diane.wav
Sheila,Sheila Jones,Shei;SJ,
FEE087,Fiona,,
MEE089,Mark,,
FEE088,Fran,,
MEO086,Marco,,
"""


@pytest.fixture
def folder(tmp_path, realdata) -> Path:
    src = tmp_path / "meetings"
    (src / "clips").mkdir(parents=True)
    (src / "sample.wav").symlink_to(realdata / "pyannote-sample" / "sample.wav")
    (src / "sample.stm").symlink_to(realdata / "pyannote-sample" / "sample.stm")
    for rid in ("trn07", "trn08"):
        (src / f"{rid}.wav").symlink_to(realdata / "ami-debug" / f"{rid}.wav")
    lines = (realdata / "ami-debug" / "train.rttm").read_text().splitlines()
    (src / "ami.rttm").write_text("\n".join(line for line in lines if line.split()[1] in ("trn07", "trn08")) + "\n")
    audio, rate = sf.read(realdata / "pyannote-sample" / "sample.wav", dtype="float32")
    sf.write(src / "clips" / "diane.wav", audio[int(17.8 * rate):int(21.4 * rate)], rate)  # Diane alone
    (src / "people.csv").write_text(PEOPLE_CSV)
    return src


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def test_folder_becomes_a_workspace(folder, tmp_path, realdata):
    ws = import_folder(folder, tmp_path / "ws", progress=False)
    assert ws.name == "meetings"
    assert [m.id for m in ws.meetings] == ["sample", "trn07", "trn08"]
    assert [(p.id, p.name) for p in ws.people][:2] == [("Diane", "Diane Smith"), ("Sheila", "Sheila Jones")]
    assert ws.person("Sheila").nicknames == ("Shei", "SJ")
    [clip] = ws.person("Diane").enrollments
    assert clip.read_bytes() == (folder / "clips" / "diane.wav").read_bytes()
    sample, trn07, _ = ws.meetings
    stm = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    ref = read_transcripts(sample.reference)["sample"]
    assert ref.text == stm.text and ref.segments[0].speaker_name == "Diane Smith"
    assert [(s.start, round(s.end, 3)) for s in read_transcripts(sample.rttm)["sample"].segments] == \
        [(s.start, s.end) for s in stm.segments]
    assert trn07.reference is None and ws.metadata["import"]["references"]["trn07"] == "speaker turns only (no text)"
    assert sf.info(trn07.audio).samplerate == 16000


def test_broken_reference_writes_no_workspace(folder, tmp_path, capsys):
    (folder / "extra.stm").write_text("sample 1 Diane 6.68 7.16 Hello?\nsample 1 Sheila 7.634 oops Hello?\n")
    assert main(["import", "folder", str(folder), "--out", str(tmp_path / "ws")]) == 1
    assert _error(capsys).startswith(f"speechkit import: error: {folder / 'extra.stm'}:2: end: "
                                     "expected a number of seconds, got 'oops'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meetings"]  # no workspace, no temporary folder


def test_reference_without_audio_and_audio_without_reference(folder, tmp_path, realdata, capsys):
    (folder / "late.stm").write_text(";; a meeting whose audio is missing\n\ntrn09 1 A 1.0 2.0 hello\n")
    assert main(["import", "folder", str(folder), "--out", str(tmp_path / "ws")]) == 1
    assert _error(capsys).startswith(f"speechkit import: error: {folder / 'late.stm'}:3: session 'trn09' matches "
                                     "no audio file in")
    (folder / "late.stm").unlink()
    (folder / "trn09.wav").symlink_to(realdata / "ami-debug" / "trn09.wav")
    assert main(["import", "folder", str(folder), "--out", str(tmp_path / "ws")]) == 1
    assert _error(capsys).startswith(f"speechkit import: error: {folder / 'trn09.wav'}: no reference for "
                                     "session 'trn09'")
    assert not (tmp_path / "ws").exists()


def test_people_csv_problems_name_the_line(folder, tmp_path):
    (folder / "people.csv").write_text(PEOPLE_CSV.replace("Sheila,Sheila Jones,Shei;SJ,\n", ""))
    with pytest.raises(FormatError, match=r"sample.stm:2: speaker 'Sheila' is not a person id of .*people.csv"):
        import_folder(folder, tmp_path / "ws", progress=False)
    (folder / "people.csv").write_text(PEOPLE_CSV.replace("clips/diane.wav", "clips/missing.wav"))
    with pytest.raises(FormatError, match=r"people.csv:2: enrollments: file 'clips/missing.wav' not found"):
        import_folder(folder, tmp_path / "ws", progress=False)
    (folder / "people.csv").write_text("person,label\nDiane,Diane\n")
    with pytest.raises(FormatError, match=r"people.csv:1: header must name the columns id and name"):
        import_folder(folder, tmp_path / "ws", progress=False)
    assert not (tmp_path / "ws").exists()


def test_seglst_references_and_people_from_speakers(folder, tmp_path):
    (folder / "people.csv").unlink()
    (folder / "clips" / "diane.wav").unlink()  # without the CSV naming it a clip, it would be a meeting
    stm = read_stm(folder / "sample.stm")
    (folder / "sample.stm").unlink()
    write_seglst(folder / "sample.json", list(stm.values()))
    ws = import_folder(folder, tmp_path / "ws", progress=False)
    assert [p.id for p in ws.people] == ["Diane", "Sheila", "FEE087", "MEE089", "FEE088", "MEO086"]
    assert ws.person("FEE087").name == "FEE087"
    write_seglst(folder / "again.json", list(stm.values()))
    with pytest.raises(FormatError, match=r"sample.json: \[0\].session_id: session 'sample' already has a word "
                                          r"reference in .*again.json"):  # files are read in name order
        import_folder(folder, tmp_path / "ws2", progress=False)


def test_turns_and_words_must_name_the_same_speakers(folder, tmp_path, realdata):
    """pyannote's sample.rttm labels the speakers speaker90/91 where its STM says Diane/Sheila."""
    (folder / "sample.rttm").symlink_to(realdata / "pyannote-sample" / "sample.rttm")
    with pytest.raises(FormatError, match=r"sample.rttm:1: speaker 'speaker90' of session 'sample' is not a speaker "
                                          r"of its word reference .*sample.stm \(Diane, Sheila\)"):
        import_folder(folder, tmp_path / "ws", progress=False)
    assert not (tmp_path / "ws").exists()
