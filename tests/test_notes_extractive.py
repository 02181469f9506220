"""The extractive notes backend on the demo's meetings (their reference words: real phrasing,
disfluencies, interruptions, no punctuation) and on free speech.

L1 is simulated by the reference with its speaker names removed and no roster; L3 by the
reference with the speakers named and the workspace roster.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from speechkit.io.manifest import load_workspace
from speechkit.io.notes import read_gold_notes
from speechkit.io.seglst import read_seglst
from speechkit.metrics.bootstrap import micro
from speechkit.metrics.notes import score_notes, vocabulary
from speechkit.notes import ActionItem
from speechkit.stages.summarize.extractive import extract_notes
from speechkit.text_similarity import LexicalSimilarity
from speechkit.transcript import Segment, Transcript

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


@pytest.fixture(scope="module")
def demo():
    return load_workspace(DEMO)


def _reference(meeting) -> Transcript:
    return next(iter(read_seglst(meeting.reference).values()))


def _unnamed(t: Transcript) -> Transcript:
    return Transcript(t.session_id, [replace(s, speaker=f"SPEAKER_{s.speaker}", speaker_name=None) for s in t.segments])


def _scores(demo, level: int) -> dict:
    ratios: dict[str, list] = {}
    for m in demo.meetings:
        ref = _reference(m)
        notes = extract_notes(ref, demo.people) if level == 3 else extract_notes(_unnamed(ref))
        scores = score_notes(notes, read_gold_notes(m.notes), vocabulary(demo), LexicalSimilarity())
        for key, ratio in scores.ratios.items():
            ratios.setdefault(key, []).append(ratio)
    return {key: micro(rs).value for key, rs in ratios.items()}


def test_finds_most_gold_items_decisions_and_assignees_with_the_roster(demo):
    l3 = _scores(demo, 3)
    assert l3["action_item_recall"] >= 0.8 and l3["action_item_precision"] >= 0.8
    assert l3["assignee_accuracy"] >= 0.8
    assert l3["decision_recall"] >= 0.8
    assert l3["summary_fact_recall"] >= 0.4 and l3["summary_number_recall"] >= 0.5
    assert l3["summary_entity_precision"] >= 0.9


def test_without_roster_names_stay_as_said(demo):
    l1, l3 = _scores(demo, 1), _scores(demo, 3)
    assert l1["action_item_f1"] == l3["action_item_f1"]  # the same words: the same items
    assert l1["assignee_accuracy"] < l3["assignee_accuracy"]
    assert l1["assignee_accuracy_partial"] > l1["assignee_accuracy"]  # first names get partial credit
    m01 = demo.meetings[0]
    said = {a.assignee for a in extract_notes(_unnamed(_reference(m01))).action_items}
    resolved = {a.assignee for a in extract_notes(_reference(m01), demo.people).action_items}
    gold = {a.assignee for a in read_gold_notes(m01.notes).action_items}
    assert resolved == gold and not said & gold


def test_is_deterministic(demo):
    ref = _reference(demo.meetings[1])
    assert extract_notes(ref, demo.people) == extract_notes(ref, demo.people)


def _transcript(*turns: tuple[str, str | None, str]) -> Transcript:
    return Transcript("free", [Segment(i * 5.0, i * 5.0 + 4, speaker, text, speaker_name=name)
                               for i, (speaker, name, text) in enumerate(turns)])


def test_free_speech_commitments_requests_and_decisions(demo):
    talk = _transcript(
        ("A", "Renata Hargrove", "Okay, so the vendor sent the contract back yesterday."),
        ("B", "Priya Whitfield", "Right. I'll send the DPA redlines to legal by Thursday."),
        ("A", "Renata Hargrove", "Great. We need to decide on the pilot size, whether it's ten or fifty seats."),
        ("B", "Priya Whitfield", "Fifty gives us better data, honestly."),
        ("A", "Renata Hargrove", "Fine, let's go with fifty seats then. Lena, could you set up SSO for the pilot?"),
        ("C", None, "Sure, no problem."),
        ("A", "Renata Hargrove", "Can you give us a quick update on the budget?"),
        ("B", "Priya Whitfield", "Sure. Lena, could you get us a brief update on the vendor call?"),
    )
    notes = extract_notes(talk, demo.people)
    items = {(a.assignee, a.description, a.due) for a in notes.action_items}
    lena = next(p.name for p in demo.people if "Lena" in p.nicknames)  # whoever "Lena" is in the demo
    assert items == {("Priya Whitfield", "send the DPA redlines to legal", "Thursday"),
                     (lena, "set up SSO for the pilot", None)}
    assert [(d.topic, d.choice) for d in notes.decisions] == [("the pilot size", "fifty seats")]
    assert "the pilot size" in notes.outline
    unresolved = extract_notes(talk)
    assert {a.assignee for a in unresolved.action_items} == {"Priya Whitfield", "Lena"}
    assert "let's go with fifty seats" in notes.summary and f"{lena}, could you" in notes.summary


@pytest.mark.parametrize("replier", ["B", "A"])  # answered by another speaker, or all one label (no diarization)
def test_a_cut_off_request_is_completed_by_its_acceptance(replier):
    talk = _transcript(("A", None, "Adriana can you add a load test"),
                       (replier, None, "Sure I'll add a load test for etcd by Wednesday"),
                       ("A", None, "Great. Next one."))
    assert extract_notes(talk).action_items == (
        ActionItem("add a load test for etcd", "Adriana", None, "Wednesday"),)
