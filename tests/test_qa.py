"""The qa step: answers to the gold questions from a run's own output, and their scores.

The runs here are built from the demo's canonical transcripts (text, not decoded speech), named
as identification names speakers at L3 or left as labels as at L1, so what they assert holds on
every CPU.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from llm_helpers import Endpoint, completion

from speechkit.cli import main
from speechkit.core.step import StepJob
from speechkit.io.manifest import load_workspace
from speechkit.io.questions import Entity, default_questions_path, read_questions
from speechkit.io.run_folder import RunFolder
from speechkit.io.seglst import read_seglst, write_seglst
from speechkit.meeting_context import roster_line
from speechkit.metrics.bootstrap import RESAMPLES, SEED
from speechkit.metrics.qa import QUESTION_METRICS, entity_stated, score_answers
from speechkit.postrun import run_steps
from speechkit.recipe import RecipeError, load_recipe
from speechkit.scoring import score_workspace
from speechkit.steps import parse_step
from speechkit.transcript import Transcript
from speechkit.workspace import Person

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
PEOPLE = (Person("p1", "Tobias Tanaka", ("Toby",)), Person("p2", "Renáta Hargrove"),
          Person("p3", "Samuel Sokolowski", ("Sam",)))
TOBIAS = Entity.of("person", id="p1", canonical="Tobias Tanaka")


@pytest.mark.parametrize(("answer", "exact", "lenient"), [
    ("Tobias Tanaka", True, True),
    ("tobias tanaka.", True, True),
    ("It is Tobias Tanaka, by Friday", True, True),
    ("Toby", False, True),            # a roster nickname: lenient only
    ("Tobias", False, False),         # a first name alone: neither
    ("Tobias Tanaka and Samuel Sokolowski", False, False),  # another person named too
    ("Toby or Sam", False, False),
    ("Devon", False, False),
    ("", False, False),
])
def test_people_by_canonical_name_or_nickname(answer, exact, lenient):
    assert entity_stated(answer, TOBIAS, PEOPLE) is exact
    assert entity_stated(answer, TOBIAS, PEOPLE, lenient=True) is lenient


def test_names_compare_without_case_and_accents():
    renata = Entity.of("person", id="p2", canonical="Renáta Hargrove")
    assert entity_stated("RENATA HARGROVE", renata, PEOPLE)


@pytest.mark.parametrize(("answer", "value", "unit", "right"), [
    ("2,500 messages", "2,500", "messages", True),
    ("twenty five hundred messages", "2,500", "messages", True),
    ("2500", "2,500", "messages", False),                  # the unit is part of the answer
    ("25,000 messages", "2,500", "messages", False),
    ("the batch is 2500 messages right now", "2,500", "messages", True),
    ("forty five thousand dollars", "$45,000", "", True),
    ("$45,000", "$45,000", "", True),
    ("eight point three percent", "8.3%", "", True),
    ("8.4%", "8.3%", "", False),
    ("May eighth", "May 8", "", True),
    ("June twenty fifth", "June 25", "", True),
    ("June 5", "June 25", "", False),
    ("one eighty milliseconds", "180", "milliseconds", True),
    ("180 seconds", "180", "milliseconds", False),
    ("45 ,000 dollars", "$45,000", "", True),           # digit groups a recognizer wrote apart
    ("8 .3 right now", "8.3%", "", False),               # the percent was not said
])
def test_numbers_with_their_units(answer, value, unit, right):
    assert entity_stated(answer, Entity.of("number", value=value, unit=unit), PEOPLE) is right


@pytest.mark.parametrize(("answer", "right"), [
    ("Wednesday", True), ("by wednesday.", True), ("Wed", True), ("weds", True),
    ("Thursday", False), ("Wednesday or Friday", False), ("next week", False),
])
def test_weekdays(answer, right):
    assert entity_stated(answer, Entity.of("day", value="Wednesday"), PEOPLE) is right


def test_a_choice_is_stated_by_all_its_content_words():
    hourly = Entity.of("choice", text="hourly runs")
    assert entity_stated("Let's go with hourly runs.", hourly, PEOPLE)
    assert not entity_stated("nightly runs", hourly, PEOPLE)
    assert not entity_stated("hourly", hourly, PEOPLE)


@pytest.fixture(scope="module")
def demo():
    return load_workspace(DEMO)


def _gold(ws, mid):
    return read_questions(DEMO / default_questions_path(mid), mid, {p.id: p.name for p in ws.people})


def test_gold_answers_fed_back_score_one_and_swapped_people_zero(demo):
    for m in demo.meetings:
        gold = _gold(demo, m.id)
        perfect = score_answers(gold, {q.id: q.answer for q in gold.questions}, demo.people).ratios()
        assert all(r.value == 1.0 for r in perfect.values() if r.den), m.id
        others = {q.id: next(p.name for p in demo.people if p.name != q.answer) for q in gold.questions}
        swapped = score_answers(gold, others, demo.people).ratios()
        assert swapped["qa_accuracy_who"].value == 0.0 and swapped["qa_accuracy_lenient"].value == 0.0


def _run(ws, root: Path, level: int) -> Path:
    """A run folder of the demo's canonical transcripts at ``level`` (L3: speakers named, roster given)."""
    for m in ws.meetings:
        transcript = next(iter(read_seglst(m.canonical).values()))
        if level < 3:
            transcript = Transcript(m.id, [replace(s, speaker_name=None) for s in transcript.segments])
        write_seglst(root / "transcripts" / f"{m.id}.json", [transcript])
        roster = [roster_line(p) for p in ws.people] if level == 3 else []
        (root / "context").mkdir(parents=True, exist_ok=True)
        (root / "context" / f"{m.id}.json").write_text(json.dumps(
            {"level": level, "notes_context": {"earlier_notes": "", "roster": roster, "emails": "", "agenda": ""}}))
    return root


def parse_qa(data):
    return parse_step("qa", data, "qa")


def answer_run(ws, folder, spec=None):
    """The qa step on the run folder ``folder`` (the extractive backend unless ``spec`` says)."""
    [document] = run_steps(RunFolder(folder), [spec or parse_qa(None)], StepJob(ws, RESAMPLES, SEED), None)
    return document


def test_extractive_answers_who_questions_with_the_l3_roster_and_names(demo, tmp_path):
    l1 = answer_run(demo, _run(demo, tmp_path / "l1", 1))["scores"]
    l3 = answer_run(demo, _run(demo, tmp_path / "l3", 3))["scores"]
    assert l1["qa_accuracy_who"]["value"] == 0.0  # labels and first names: never the full name
    assert l1["qa_accuracy_lenient"]["value"] > l1["qa_accuracy"]["value"]  # nicknames said at L1
    assert l3["qa_accuracy_who"]["value"] >= 0.9
    assert l3["qa_accuracy"]["value"] > l1["qa_accuracy"]["value"]
    for key in ("qa_accuracy_due", "qa_accuracy_decision", "qa_accuracy_number"):
        assert l3[key]["value"] >= 0.8, key  # the words are the meeting's own: found at every level
    document = json.loads((tmp_path / "l3" / "qa.json").read_text())
    answer = document["meetings"]["m01"]["answers"][0]
    assert set(answer) == {"id", "type", "question", "answer", "gold", "right", "right_lenient"}


def test_scores_json_holds_the_question_metrics_from_qa_json(demo, tmp_path):
    run = _run(demo, tmp_path / "run", 3)
    document = answer_run(demo, run)
    scores = score_workspace(demo, run, out=run / "scores.json")
    for key in (m.key for m in QUESTION_METRICS):
        assert scores["aggregate"][key]["value"] == document["scores"][key]["value"], key
        assert key not in scores["not_applicable"]
    assert scores["meetings"]["m01"]["details"]["questions"]["questions"] == len(_gold(demo, "m01").questions)
    (run / "qa.json").unlink()
    bare = score_workspace(demo, run)
    assert bare["aggregate"]["qa_accuracy"]["value"] is None
    assert "no answers" in bare["not_applicable"]["qa_accuracy"]


def test_a_workspace_without_questions_has_them_not_applicable(make_real_workspace, tmp_path):
    ws = load_workspace(make_real_workspace(tmp_path / "ws"))
    document = answer_run(ws, tmp_path)
    assert document["scores"]["qa_accuracy"]["value"] is None
    assert set(document["not_applicable"]) == {m.id for m in ws.scored_meetings}
    assert all("no gold questions" in r for r in document["not_applicable"].values())


def test_recipes_take_a_checked_qa_block(tmp_path):
    assert load_recipe("l3").steps["qa"].backend == "extractive"
    assert parse_qa({"backend": "llm", "model": "m", "transcript_bytes": 500}).options.transcript_bytes == 500
    base = (Path(load_recipe("whisper").path)).read_text()
    for block, problem in (("qa: {backend: oracle}", r"qa\.backend: unknown backend 'oracle'"),
                           ("qa: {backend: llm, transcript_bytes: 5}", r"qa\.transcript_bytes"),
                           ("qa: {backend: extractive, depth: 2}", r"qa\.depth: unknown option")):
        path = tmp_path / "r.yaml"
        path.write_text(base.replace("qa: {backend: extractive}", block))
        with pytest.raises(RecipeError, match=problem):
            load_recipe(path)


def test_llm_backend_asks_once_per_meeting_with_a_schema(demo, tmp_path):
    requests = []

    def behaviour(request, call):
        requests.append(request)
        user = request["messages"][-1]["content"]
        mid = next(m.id for m in demo.meetings if f"{m.id}-q01:" in user)
        gold = _gold(demo, mid)
        return 200, completion(json.dumps({"answers": [{"id": q.id, "answer": q.answer} for q in gold.questions]})), 0.0

    server = Endpoint(behaviour, models=["stand-in"])
    try:
        spec = parse_qa({"backend": "llm", "base_url": server.url, "model": "stand-in", "max_retries": 0})
        document = answer_run(demo, _run(demo, tmp_path / "l1", 1), spec)
    finally:
        server.close()
    assert len(requests) == len(demo.meetings)
    assert all(v["value"] == 1.0 for v in document["scores"].values())
    first = requests[0]
    schema = first["response_format"]["json_schema"]["schema"]
    ids = schema["properties"]["answers"]["items"]["properties"]["id"]["enum"]
    assert ids == [q.id for q in _gold(demo, "m01").questions]
    user = first["messages"][-1]["content"]
    assert "CONTEXT:\n(none)" in user and "TRANSCRIPT:" in user
    questions = user.split("QUESTIONS:\n", 1)[1]
    assert "Adriana Quintero" not in questions  # the questions go without their answers


def test_qa_cli_writes_qa_json_and_errors_in_one_line(demo, tmp_path, capsys):
    run = _run(demo, tmp_path / "run", 3)
    assert main(["qa", str(run), "--workspace", str(DEMO), "--resamples", "100"]) == 0
    assert "QA accuracy, who" in capsys.readouterr().out
    assert json.loads((run / "qa.json").read_text())["settings"]["bootstrap"]["resamples"] == 100
    shutil.rmtree(run / "context")
    assert main(["qa", str(run)]) == 1  # no run.json: the workspace must be named
    err = capsys.readouterr().err.strip()
    assert err.endswith("run.json: not found; name the run's workspace with --workspace")
    assert main(["qa", str(run), "--workspace", str(DEMO), "--set", "depth=2"]) == 2
    assert "qa.depth: unknown option" in capsys.readouterr().err


def test_extractive_takes_asked_numbers_corrections_and_who_asked_from_the_turns():
    """Tuned phrasing families: a number asked for and answered in the next turn, a number
    corrected in the same turn, a volunteer's item (nobody asked) and an open call's (the host)."""
    from speechkit.io.questions import Ask
    from speechkit.io.run_output import MeetingOutput
    from speechkit.meeting_context import NotesContext
    from speechkit.steps.qa.extractive import ExtractiveAnswerer, ExtractiveQaOptions
    from speechkit.transcript import Segment

    turns = [("p2", "Renáta Hargrove", "What's the test batch at the moment?"),
             ("p1", "Tobias Tanaka", "It's 2,500 messages."),
             ("p3", "Samuel Sokolowski", "The rejection rate is 1.2%, sorry, 1.4%."),
             ("p2", "Renáta Hargrove", "Can anyone write the validation rules for BIC? We need it by Friday."),
             ("p3", "Samuel Sokolowski", "I'll take it."),
             ("p1", "Tobias Tanaka", "I'll map the remaining pacs.008 fields by Monday.")]
    transcript = Transcript("m1", [Segment(5.0 * i, 5.0 * i + 4, pid, text, speaker_name=name)
                                   for i, (pid, name, text) in enumerate(turns)])
    output = MeetingOutput("m1", transcript, None, NotesContext(roster=PEOPLE), 3, {})
    asks = [Ask("q1", "number", "What is the test batch for SettleMap?"),
            Ask("q2", "number", "What is the rejection rate for SettleMap?"),
            Ask("q3", "who_asked", "Who asked for the action item to write the validation rules for BIC?"),
            Ask("q4", "who_owns", "Who owns the action item to write the validation rules for BIC?"),
            Ask("q5", "due", "When is the action item to write the validation rules for BIC due?"),
            Ask("q6", "who_asked", "Who asked for the action item to map the remaining pacs.008 fields?")]
    answers, _ = ExtractiveAnswerer(ExtractiveQaOptions()).answer(asks, output)
    assert answers == {"q1": "2,500 messages", "q2": "1.4%", "q3": "Renáta Hargrove", "q4": "Samuel Sokolowski",
                       "q5": "Friday", "q6": ""}
