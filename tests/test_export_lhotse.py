"""`speechkit export lhotse`: a synthetic workspace (the shipped demo) to Lhotse manifests and back."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from lhotse import CutSet, RecordingSet, SupervisionSet

from speechkit.cli import main
from speechkit.corpora.from_lhotse import import_lhotse
from speechkit.io import read_transcripts
from speechkit.io.manifest import load_workspace

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lhotse")
    assert main(["export", "lhotse", "--workspace", str(DEMO), "--out", str(out)]) == 0
    return out


def test_manifests_hold_the_demo(exported):
    ws = load_workspace(DEMO)
    recordings = RecordingSet.from_file(exported / "recordings.jsonl.gz").to_eager()
    supervisions = SupervisionSet.from_file(exported / "supervisions.jsonl.gz").to_eager()
    cuts = CutSet.from_file(exported / "cuts.jsonl.gz")
    assert sorted(recordings.ids) == [m.id for m in ws.meetings]
    for meeting in ws.meetings:
        ref = read_transcripts(meeting.reference)[meeting.id]
        sups = sorted(supervisions.find(recording_id=meeting.id), key=lambda s: (s.start, s.id))
        assert [(s.speaker, s.text) for s in sups] == [(g.speaker, g.text) for g in ref.segments]
        assert all(s.custom["speaker_name"] == ws.person(s.speaker).name for s in sups)
        words = [(a.symbol, a.start) for s in sups for a in s.alignment["word"]]
        assert words == [(w.text, w.start) for g in ref.segments for w in g.words]
        audio, rate = sf.read(meeting.audio, dtype="float32")
        assert recordings[meeting.id].num_samples == len(audio) and recordings[meeting.id].sampling_rate == rate
    custom = {c.recording_id: c.custom for c in cuts}
    assert custom["m01"]["date"] == ws.meetings[0].date.isoformat() and custom["m01"]["workspace"] == "demo"
    assert custom["m01"]["title"] == ws.meetings[0].title


def test_import_gives_back_meetings_references_and_audio(exported, tmp_path):
    demo = load_workspace(DEMO)
    back = import_lhotse(tmp_path / "ws", cuts=[exported / "cuts.jsonl.gz"], progress=False)
    assert back.name == "demo"
    assert [(m.id, m.date, m.title, m.kind) for m in back.meetings] == \
        [(m.id, m.date, m.title, m.kind) for m in demo.meetings]
    assert {(p.id, p.name) for p in back.people} <= {(p.id, p.name) for p in demo.people}
    assert back.metadata["import"]["references"]["m01"] == "words with times"
    for a, b in zip(demo.meetings, back.meetings):
        ra, rb = read_transcripts(a.reference)[a.id], read_transcripts(b.reference)[b.id]
        assert [(s.speaker, s.speaker_name, s.start, s.end, s.text) for s in ra.segments] == \
            [(s.speaker, s.speaker_name, s.start, s.end, s.text) for s in rb.segments]
        assert [(w.text, w.start, w.end) for s in ra.segments for w in s.words] == \
            [(w.text, w.start, w.end) for s in rb.segments for w in s.words]
        assert np.array_equal(sf.read(a.audio, dtype="int16")[0], sf.read(b.audio, dtype="int16")[0])
    # the terms are derived from the references (numbers and rare words in at least two meetings)
    assert back.metadata["terms"]["source"] == "derived from the references"
    assert "kafka" in back.terms.jargon


def test_export_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["export", "lhotse", "--workspace", str(DEMO), "--out", str(tmp_path / "file")]) == 1
    assert capsys.readouterr().err.strip() == (f"speechkit export: error: {tmp_path / 'file'}: "
                                               "exists and is not a folder")
    assert main(["export", "lhotse", "--workspace", str(tmp_path), "--out", str(tmp_path / "x")]) == 1
    assert "workspace manifest not found" in capsys.readouterr().err
