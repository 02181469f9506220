"""The extractive notes backend on the demo's meetings (tuned phrasing, the families its rules were
written on; their reference words: disfluencies, interruptions, no punctuation), on free speech in
phrasings no family writes, and on the text of tuned-phrasing scripts.

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
from speechkit.stages.summarize.extractive import extract_notes, requested_items
from speechkit.text_similarity import LexicalSimilarity
from speechkit.transcript import Segment, Transcript
from speechkit.workspace import Person

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
    assert l3["summary_fact_recall"] >= 0.5 and l3["summary_number_recall"] >= 0.5
    # the reference has no punctuation: a turn's later sentences open with capitals ("Still",
    # "Ideally") that the metric counts as names
    assert l3["summary_entity_precision"] >= 0.85


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


ROSTER = (Person("p1", "Priya Whitfield"), Person("p2", "Helena Lindqvist", ("Lena",)),
          Person("p3", "Tobias Tanaka", ("Toby",)), Person("p4", "Renata Hargrove"))
HOST, PRIYA, TOBY = ("A", "Renata Hargrove"), ("B", "Priya Whitfield"), ("C", "Tobias Tanaka")


def _said(*turns: tuple[tuple[str, str], str]) -> Transcript:
    return _transcript(*((who[0], who[1], text) for who, text in turns))


def test_items_from_calls_volunteers_relays_and_named_assignments():
    """The ways the tuned phrasing families hand out work, and the acts that only look like it."""
    talk = _said(
        (HOST, "Priya, would you map the remaining pacs.008 fields? Ideally by Thursday."),
        (PRIYA, "Okay, will do."),
        (HOST, "Can anyone write the validation rules for BIC? We need it by Friday."),
        (TOBY, "I'll take it."),
        (TOBY, "I can update the XSD test vectors by Monday if that helps."),
        (HOST, "Yes please. Lena isn't here, but can you ask Lena to check the LEI samples by Tuesday?"),
        (PRIYA, "Sure, I'll tell Lena."),
        (HOST, "Toby should fix the Kafka alerting by Wednesday. I'll send Toby a note."),
        (PRIYA, "Makes sense. We could add a load test for gRPC some day."),
        (HOST, "If we had time, someone would fix the RTO alerting, but we don't. Is Toby still going to "
               "document the dbt lineage?"),
        (PRIYA, "I think so, Toby said Friday. The plan to migrate the Airflow jobs is done. I did that last week."),
        (HOST, "Let's give the etcd design review to Priya, due Friday."),
        (PRIYA, "Okay. Priya, did you get a chance to fix the CAS alerting? Not yet, I'm waiting on Lena."),
    )
    items = {(a.assignee, a.description, a.due) for a in extract_notes(talk, ROSTER).action_items}
    assert items == {("Priya Whitfield", "map the remaining pacs.008 fields", "Thursday"),
                     ("Tobias Tanaka", "write the validation rules for BIC", "Friday"),
                     ("Tobias Tanaka", "update the XSD test vectors", "Monday"),
                     ("Helena Lindqvist", "check the LEI samples", "Tuesday"),
                     ("Tobias Tanaka", "fix the Kafka alerting", "Wednesday"),
                     ("Priya Whitfield", "the etcd design review", "Friday")}
    asked = {(a.description, by) for a, by in requested_items(talk, ROSTER)}
    assert ("update the XSD test vectors", None) in asked  # volunteered: nobody asked
    assert ("write the validation rules for BIC", "Renata Hargrove") in asked


def test_a_corrected_due_day_and_a_reversed_decision_keep_the_final_version():
    talk = _said(
        (HOST, "Priya, can you add a load test for Kafka by Monday?"),
        (PRIYA, "Monday is tight, but sure."),
        (HOST, "Actually, make that Thursday, no rush."),
        (PRIYA, "Okay, Thursday then."),
        (HOST, "For the table format, Iceberg tables or plain files?"),
        (TOBY, "Iceberg tables, I think."),
        (HOST, "Let's go with Iceberg tables. On the pricing model, I've decided, we go with a flat fee."),
        (TOBY, "Fine by me."),
        (HOST, "So for the rollout plan, let's go with a staged rollout."),
        (PRIYA, "Wait, a staged rollout breaks the Kafka timeline."),
        (HOST, "Fair point. Scrap that, let's go with everyone at once."),
    )
    notes = extract_notes(talk, ROSTER)
    assert [(a.assignee, a.due) for a in notes.action_items] == [("Priya Whitfield", "Thursday")]
    assert [(d.topic, d.choice) for d in notes.decisions] == [
        ("the table format", "Iceberg tables"), ("the pricing model", "a flat fee"),
        ("the rollout plan", "everyone at once")]


def test_ways_to_hand_out_work_and_decide_that_no_generator_writes():
    """Phrasings of no phrasing family (the issue's own examples): a named taker, an open call
    taken, "let's have X ...", a declined request passed on, a reversal, "X it is", a decision
    that names its topic."""
    adriana, lena = ("E", "Adriana Castellanos"), ("D", "Helena Lindqvist")
    roster = (*ROSTER, Person("p5", "Adriana Castellanos", ("Adri",)))
    talk = _said(
        (adriana, "Yes. Adriana's taking the Kafka load test."),
        (HOST, "Someone needs to update the failover runbook before Friday. Who can own this?"),
        (PRIYA, "I'll take it."),
        (HOST, "And let's have Priya look at the flaky etcd test."),
        (HOST, "Toby, could you draft the release notes by Friday?"),
        (TOBY, "I can't, I'm swamped this week."),
        (HOST, "Okay. Lena, can you take it?"),
        (lena, "Sure."),
        (HOST, "On the payment rail, we said SWIFT last time."),
        (TOBY, "I think we should move to instant payments."),
        (HOST, "No, let's stay with SEPA for now. For the table format, Iceberg or Delta?"),
        (PRIYA, "Iceberg."),
        (HOST, "Iceberg it is. If nobody objects, we go with nightly runs for the batch schedule."),
    )
    notes = extract_notes(talk, roster)
    assert {(a.assignee, a.description, a.due) for a in notes.action_items} == {
        ("Adriana Castellanos", "the Kafka load test", None),
        ("Priya Whitfield", "update the failover runbook", "Friday"),
        ("Priya Whitfield", "look at the flaky etcd test", None),
        ("Helena Lindqvist", "draft the release notes", "Friday")}
    assert [(d.topic, d.choice) for d in notes.decisions] == [
        ("the payment rail", "SEPA"), ("the table format", "Iceberg"), ("the batch schedule", "nightly runs")]


def test_tuned_phrasing_scripts_are_read_back_with_names(tuned_scores):
    """The text of tuned-phrasing meetings (speakers named, the roster given, as at L3): the rules
    were written on these families, so they find nearly everything. docs/synth.md sets this beside
    held-out phrasing and decoded speech."""
    assert tuned_scores["action_item_f1"] >= 0.95 and tuned_scores["assignee_accuracy"] >= 0.95
    assert tuned_scores["decision_recall"] >= 0.95
    assert tuned_scores["qa"] >= 0.95


@pytest.fixture(scope="module")
def tuned_scores() -> dict:
    import dataclasses
    import json

    from speechkit.io.run_output import MeetingOutput
    from speechkit.meeting_context import NotesContext
    from speechkit.metrics.qa import score_answers
    from speechkit.steps.qa.extractive import ExtractiveAnswerer, ExtractiveQaOptions
    from speechkit.synth import SynthOptions
    from speechkit.synth.notes import gold_notes
    from speechkit.synth.questions import gold_questions
    from speechkit.synth.script import write_script
    from speechkit.synth.spoken import canonical_text
    from speechkit.synth.voices import VOICES

    options = SynthOptions(seed=5, meetings=6, people=5, minutes=3, phrasing="tuned")
    script = write_script(options, [v.id for v in VOICES])
    truth = json.loads(json.dumps(dataclasses.asdict(script.state), default=str))
    people = tuple(Person(p.id, p.name, (p.nickname,) if p.nickname else ()) for p in script.state.people)
    kinds = {t.canonical: t.kind for t in script.state.terms()}
    ratios: dict[str, list] = {}
    right = asked = 0
    for plan in script.state.meetings:
        turns = script.turns[plan.id]
        talk = Transcript(plan.id, [Segment(5.0 * i, 5.0 * i + 4, t.speaker, canonical_text(t.pieces),
                                            speaker_name=next(p.name for p in people if p.id == t.speaker))
                                    for i, t in enumerate(turns) if canonical_text(t.pieces)])
        numbers = list(dict.fromkeys(p.term for t in turns for p in t.pieces if p.term and kinds[p.term] == "number"))
        notes = extract_notes(talk, people)
        gold = gold_notes(truth, plan.id, numbers)
        for key, ratio in score_notes(notes, gold, (), LexicalSimilarity()).ratios.items():
            ratios.setdefault(key, []).append(ratio)
        questions = gold_questions(truth, plan.id, numbers)
        output = MeetingOutput(plan.id, talk, notes, NotesContext(roster=people), 3, {})
        answers, _ = ExtractiveAnswerer(ExtractiveQaOptions()).answer([q.ask for q in questions.questions], output)
        marks = score_answers(questions, answers, people).right
        right, asked = right + sum(marks.values()), asked + len(marks)
    return {**{key: micro(rs).value for key, rs in ratios.items()}, "qa": right / asked}
