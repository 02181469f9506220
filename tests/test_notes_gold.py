"""Gold notes in workspaces: written by `speechkit synth` from the latent state, imported by
`speechkit import folder`.

The byte-for-byte reproducibility of a whole synthetic workspace, notes included, is
tests/test_synth.py::test_same_seed_same_bytes.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from speechkit.cli import main
from speechkit.corpora.folder import import_folder
from speechkit.errors import FormatError
from speechkit.io.manifest import load_workspace
from speechkit.io.notes import read_gold_notes
from speechkit.metrics.notes import score_notes, vocabulary
from speechkit.synth.notes import write_gold_notes
from speechkit.text_similarity import LexicalSimilarity

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


def _truth(root: Path) -> dict:
    return json.loads((root / "truth" / "state.json").read_text(encoding="utf-8"))


def test_demo_notes_are_what_synth_derives_from_its_state(tmp_path):
    ws = load_workspace(DEMO)
    write_gold_notes(tmp_path, _truth(DEMO), ws.meetings)
    for m in ws.meetings:
        assert (tmp_path / "meetings" / m.id / "notes.json").read_bytes() == m.notes.read_bytes(), m.id


def test_gold_notes_follow_the_latent_state(small_synth_workspace):
    ws = load_workspace(small_synth_workspace)
    truth = _truth(small_synth_workspace)
    names = {p["id"]: p["name"] for p in truth["people"]}
    for m in ws.meetings:
        assert m.notes == small_synth_workspace / "meetings" / m.id / "notes.json"
        gold = read_gold_notes(m.notes, m.id, names)
        opened = [a for a in truth["action_items"] if a["opened_in"] == m.id]
        assert [(a.id, a.assignee_id, a.assignee, a.description, a.due) for a in gold.action_items] == [
            (a["id"], a["assignee"], names[a["assignee"]], a["description"], a["due"]) for a in opened]
        closed = [a["id"] for a in truth["action_items"] if a["closed_in"] == m.id]
        assert [a.id for a in gold.closed_items] == closed
        assert [(d.topic, d.choice) for d in gold.decisions] == [
            (d["question"], d["choice"]) for d in truth["decisions"] if d["meeting"] == m.id]
        assert [f.entities[0] for f in gold.facts_of("number")] == list(m.terms.numbers)
        values = score_notes(gold, gold, vocabulary(ws), LexicalSimilarity()).values()
        assert values["summary_fact_recall"] in (1.0, None) and values["summary_entity_precision"] == 1.0


def test_writing_gold_notes_twice_gives_the_same_bytes(tmp_path):
    ws = load_workspace(DEMO)
    for out in ("a", "b"):
        write_gold_notes(tmp_path / out, _truth(DEMO), ws.meetings)
    first = sorted((tmp_path / "a").rglob("notes.json"))
    assert len(first) == len(ws.meetings)
    for path in first:
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()


NOTES = {"summary": "Diane and Sheila talked about moving.",
         "action_items": [{"description": "call the movers", "assignee": "Diane Smith", "assignee_id": "Diane",
                           "due": "Friday"}]}


@pytest.fixture
def folder(tmp_path, realdata) -> Path:
    src = tmp_path / "corpus"
    src.mkdir()
    (src / "sample.wav").symlink_to(realdata / "pyannote-sample" / "sample.wav")
    (src / "sample.stm").symlink_to(realdata / "pyannote-sample" / "sample.stm")
    (src / "people.csv").write_text("id,name\nDiane,Diane Smith\nSheila,Sheila Jones\n")
    return src


def test_import_folder_takes_a_meetings_notes(folder, tmp_path):
    (folder / "sample.notes.json").write_text(json.dumps(NOTES))
    ws = import_folder(folder, tmp_path / "ws", progress=False)
    [meeting] = ws.meetings
    assert meeting.notes == tmp_path / "ws" / "meetings" / "sample" / "notes.json"
    gold = read_gold_notes(meeting.notes, "sample")
    assert gold.action_items[0].assignee_id == "Diane" and gold.summary == NOTES["summary"]
    assert "notes" not in (tmp_path / "ws" / "workspace.yaml").read_text()  # the default place


def test_import_folder_refuses_bad_notes_naming_the_file(folder, tmp_path, capsys):
    bad = dict(NOTES, action_items=[{"description": "call the movers", "assignee": "Di", "assignee_id": "Diane"}])
    (folder / "sample.notes.json").write_text(json.dumps(bad))
    with pytest.raises(FormatError, match=r"sample\.notes\.json: action_items\[0\]\.assignee: 'Di' is not"):
        import_folder(folder, tmp_path / "ws", progress=False)
    assert not (tmp_path / "ws").exists()
    (folder / "other.notes.json").write_text(json.dumps(NOTES))
    assert main(["import", "folder", str(folder), "--out", str(tmp_path / "ws2")]) != 0
    err = capsys.readouterr().err.strip()
    assert "error: " in err and "other.notes.json" in err and "no audio file" in err
    assert "\n" not in err and "Traceback" not in err
