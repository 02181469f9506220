"""Gold questions in workspaces: derived by `speechkit synth` from the latent state (the demo's
included), imported by `speechkit import folder`, checked when read.

The byte-for-byte reproducibility of a whole synthetic workspace, questions included, is
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
from speechkit.io.questions import QUESTION_TYPES, default_questions_path, read_questions
from speechkit.synth.questions import gold_questions, write_gold_questions

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


def _truth(root: Path) -> dict:
    return json.loads((root / "truth" / "state.json").read_text(encoding="utf-8"))


def test_demo_questions_are_what_synth_derives_from_its_state(tmp_path):
    ws = load_workspace(DEMO)
    write_gold_questions(tmp_path, _truth(DEMO), ws.meetings)
    for m in ws.meetings:
        path = default_questions_path(m.id)
        assert (tmp_path / path).read_bytes() == (DEMO / path).read_bytes(), m.id


def test_demo_has_every_question_type(tmp_path):
    ws = load_workspace(DEMO)
    names = {p.id: p.name for p in ws.people}
    kinds = [q.type for m in ws.meetings
             for q in read_questions(DEMO / default_questions_path(m.id), m.id, names).questions]
    assert set(kinds) == set(QUESTION_TYPES)
    assert len(kinds) >= 40


def test_questions_follow_the_latent_state(small_synth_workspace):
    ws = load_workspace(small_synth_workspace)
    truth = _truth(small_synth_workspace)
    names = {p["id"]: p["name"] for p in truth["people"]}
    for m in ws.meetings:
        got = read_questions(small_synth_workspace / default_questions_path(m.id), m.id, names)
        plan = next(p for p in truth["meetings"] if p["id"] == m.id)
        by_type = {t: [q for q in got.questions if q.type == t] for t in QUESTION_TYPES}
        opened = [a for a in truth["action_items"] if a["opened_in"] == m.id]
        texts = [f"the action item to {a['description']}" for a in opened]
        unique = [a for a, t in zip(opened, texts) if texts.count(t) == 1]  # the same task twice is ambiguous
        assert [(q.answer, q.entities[0].get("id")) for q in by_type["who_owns"]] == [
            (names[a["assignee"]], a["assignee"]) for a in unique]
        assert [q.answer for q in by_type["due"]] == [a["due"] for a in unique]
        assert [q.answer for q in by_type["who_asked"]] == [names[a["requested_by"]] for a in unique
                                                             if a["requested_by"]]
        assert {a["requested_by"] for a in opened} <= {plan["host"], None}  # the host hands out the items
        assert [q.answer for q in by_type["decision"]] == [d["choice"] for d in truth["decisions"]
                                                           if d["meeting"] == m.id]
        assert [q.entities[0].get("value") for q in by_type["number"]] == list(m.terms.numbers)
        assert all(q.entities[0].get("value") in q.answer for q in by_type["number"])
        assert len({q.id for q in got.questions}) == len(got.questions)


def test_a_task_given_twice_in_a_meeting_asks_no_owner():
    truth = _truth(DEMO)
    first = dict(next(a for a in truth["action_items"] if a["requested_by"]))  # somebody asked for it
    other = next(p["id"] for p in truth["people"] if p["id"] != first["assignee"])
    truth["action_items"] = [first, dict(first, id="a99", assignee=other)]
    asked = gold_questions(truth, first["opened_in"], ())
    owners = [q for q in asked.questions if q.type == "who_owns"]
    assert owners == []
    assert [q.type for q in asked.questions] == ["due", "who_asked"]  # both facts agree on these


def test_writing_questions_twice_gives_the_same_bytes(tmp_path):
    ws = load_workspace(DEMO)
    for out in ("a", "b"):
        write_gold_questions(tmp_path / out, _truth(DEMO), ws.meetings)
    first = sorted((tmp_path / "a").rglob("questions.json"))
    assert len(first) == len(ws.meetings)
    for path in first:
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()


QUESTIONS = {"version": 1, "meeting": "sample", "questions": [
    {"id": "q1", "type": "who_owns", "question": "Who calls the movers?", "answer": "Diane Smith",
     "entities": [{"kind": "person", "id": "Diane", "canonical": "Diane Smith"}]},
    {"id": "q2", "type": "number", "question": "How many boxes?", "answer": "12 boxes",
     "entities": [{"kind": "number", "value": "12", "unit": "boxes"}]}]}


@pytest.fixture
def folder(tmp_path, realdata) -> Path:
    src = tmp_path / "corpus"
    src.mkdir()
    (src / "sample.wav").symlink_to(realdata / "pyannote-sample" / "sample.wav")
    (src / "sample.stm").symlink_to(realdata / "pyannote-sample" / "sample.stm")
    (src / "people.csv").write_text("id,name\nDiane,Diane Smith\nSheila,Sheila Jones\n")
    return src


def test_import_folder_takes_a_meetings_questions(folder, tmp_path):
    (folder / "sample.questions.json").write_text(json.dumps(QUESTIONS))
    ws = import_folder(folder, tmp_path / "ws", progress=False)
    got = read_questions(tmp_path / "ws" / default_questions_path("sample"), "sample",
                         {p.id: p.name for p in ws.people})
    assert [q.to_dict() for q in got.questions] == QUESTIONS["questions"]


@pytest.mark.parametrize(("change", "field"), [
    ({"entities": [{"kind": "person", "id": "Diane", "canonical": "Di"}]}, r"questions\[0\]\.entities\[0\]\.canonical"),
    ({"entities": [{"kind": "person", "id": "Nobody", "canonical": "Diane Smith"}]},
     r"questions\[0\]\.entities\[0\]\.id"),
    ({"entities": [{"kind": "day", "value": "Friday"}]},
     r"questions\[0\]\.entities: a who_owns question needs a person"),
    ({"type": "who_knows"}, r"questions\[0\]\.type"),
    ({"answer": ""}, r"questions\[0\]\.answer"),
])
def test_import_folder_refuses_bad_questions_naming_the_file_and_field(folder, tmp_path, change, field):
    bad = dict(QUESTIONS, questions=[dict(QUESTIONS["questions"][0], **change)])
    (folder / "sample.questions.json").write_text(json.dumps(bad))
    with pytest.raises(FormatError, match=rf"sample\.questions\.json: {field}"):
        import_folder(folder, tmp_path / "ws", progress=False)
    assert not (tmp_path / "ws").exists()


def test_questions_of_no_meeting_are_one_line_errors(folder, tmp_path, capsys):
    (folder / "other.questions.json").write_text(json.dumps(QUESTIONS))
    assert main(["import", "folder", str(folder), "--out", str(tmp_path / "ws")]) != 0
    err = capsys.readouterr().err.strip()
    assert "other.questions.json" in err and "questions of session 'other'" in err
    assert "\n" not in err and "Traceback" not in err
